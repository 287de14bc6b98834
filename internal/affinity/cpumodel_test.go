package affinity

import (
	"testing"
	"testing/fstest"
)

func TestCPUModel(t *testing.T) {
	for info, want := range map[string]string{
		"processor\t: 0\nmodel name\t: AMD EPYC 7763 64-Core Processor\nflags\t: avx2\n": "AMD EPYC 7763 64-Core Processor",
		"processor\t: 0\nCPU implementer\t: 0x46\nCPU part\t: 0x001\n":                   "implementer 0x46, part 0x001",
		"processor\t: 0\n": "unknown",
	} {
		if got := CPUModel(fstest.MapFS{"proc/cpuinfo": {Data: []byte(info)}}); got != want {
			t.Errorf("CPUModel(%q) = %q, want %q", info, got, want)
		}
	}
	if got := CPUModel(fstest.MapFS{}); got != "unknown" {
		t.Errorf("no /proc/cpuinfo: %q", got)
	}
}

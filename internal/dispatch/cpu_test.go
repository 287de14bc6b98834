package dispatch

import (
	"runtime"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestSupportedMatchesCPU: the instruction sets offered are exactly those
// the CPU flags (as golang.org/x/sys/cpu reads them) allow, so a detection
// bug cannot silently leave only the generic kernels under test.
func TestSupportedMatchesCPU(t *testing.T) {
	want := map[string]bool{Generic: true}
	switch runtime.GOARCH {
	case "amd64":
		want["avx512"] = cpu.X86.HasAVX512F && cpu.X86.HasAVX2 && cpu.X86.HasFMA
		want["avx2"] = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	case "arm64":
		want["sve"] = cpu.ARM64.HasSVE && cpu.ARM64.HasASIMD
		want["neon"] = cpu.ARM64.HasASIMD
	}
	for _, n := range Known() {
		if Supported(n) != want[n] {
			t.Errorf("Supported(%q) = %v, CPU flags say %v", n, Supported(n), want[n])
		}
	}
	if Supported("avx9") || Supported("") {
		t.Error("an unknown name is supported")
	}
}

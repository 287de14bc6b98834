package sysmem

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestLimitFollowsGoMemoryLimit(t *testing.T) {
	old := debug.SetMemoryLimit(1 << 30)
	defer debug.SetMemoryLimit(old)
	if l := Limit(); l > 1<<30 || l <= 0 {
		t.Fatalf("Limit %d with a 1 GiB Go memory limit", l)
	}
	if err := Check(2<<30, "the thing"); err == nil || !strings.Contains(err.Error(), "the thing needs ~2.15 GB") {
		t.Fatalf("Check: %v", err)
	}
	if err := Check(1<<20, "a small thing"); err != nil {
		t.Fatal(err)
	}
}

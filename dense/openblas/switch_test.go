//go:build openblas && cgo

package openblas

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestInProcessCoreSwitch runs this test binary again with the environment
// a weak automatic choice leaves (OPENBLAS_CORETYPE=Prescott marked as
// supergcn's): the package's init alone, with no restart (a test binary has
// none), must switch OpenBLAS to a core of the class the CPU features
// select, and products must still be right (the other tests run there too).
func TestInProcessCoreSwitch(t *testing.T) {
	if os.Getenv("SUPERGCN_TEST_SWITCH_CHILD") == "1" {
		_, _, core := Impl{}.Info()
		if !Satisfies(HostFeatures(), core) {
			t.Fatalf("OpenBLAS runs %q after init (%s)", core, Impl{}.Choice())
		}
		return
	}
	if want, _ := CoreFor(HostFeatures()); want == "" || !dynamicArch() {
		t.Skip("no feature-selected core type, or no DYNAMIC_ARCH OpenBLAS")
	}
	cmd := exec.Command(os.Args[0], "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "SUPERGCN_TEST_SWITCH_CHILD=1", CoreTypeEnv+"=Prescott", AutoEnv+"=Prescott,Prescott")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestInProcessCoreSwitch") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

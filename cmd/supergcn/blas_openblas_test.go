//go:build openblas && cgo

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/dense/openblas"
)

// TestOpenBLASCoreChoice runs an openblas build of the command with the
// environment a weaker core choice leaves (OPENBLAS_CORETYPE=Prescott, as
// marked by an earlier supergcn), and checks that it switches to the core
// type the CPU's features select (in process, or by the restart fallback)
// and says so; and that a user's OPENBLAS_CORETYPE is left alone.
func TestOpenBLASCoreChoice(t *testing.T) {
	want, why := openblas.CoreFor(openblas.HostFeatures())
	if want == "" {
		t.Skip("no CPU feature of this machine maps to an OpenBLAS core type")
	}
	bin := filepath.Join(t.TempDir(), "supergcn")
	if out, err := exec.Command("go", "build", "-tags", "openblas", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building with -tags openblas: %v\n%s", err, out)
	}
	info := func(env ...string) buildInfo {
		t.Helper()
		cmd := exec.Command(bin, "info", "--json", "--no-mpi")
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("info with %v: %v", env, err)
		}
		var bi buildInfo
		if err := json.Unmarshal(out, &bi); err != nil {
			t.Fatalf("info --json: %v\n%s", err, out)
		}
		return bi
	}
	if !strings.Contains(info().BLASConfig, "DYNAMIC_ARCH") {
		t.Skip("this OpenBLAS has no run-time core selection")
	}
	bi := info(openblas.CoreTypeEnv+"=Prescott", openblas.AutoEnv+"=Prescott,Prescott")
	if !openblas.Satisfies(openblas.HostFeatures(), bi.BLASCore) || !strings.Contains(bi.BLASChoice, "chosen by supergcn from CPU features "+why) {
		t.Fatalf("after a weak automatic choice: core %q (%s), want %s", bi.BLASCore, bi.BLASChoice, want)
	}
	bi = info(openblas.CoreTypeEnv + "=Prescott")
	if !strings.EqualFold(bi.BLASCore, "Prescott") || !strings.Contains(bi.BLASChoice, "set in the environment") {
		t.Fatalf("user's OPENBLAS_CORETYPE=Prescott: core %q (%s)", bi.BLASCore, bi.BLASChoice)
	}
	bi = info(openblas.CoreTypeEnv+"=", openblas.AutoEnv+"=")
	if !openblas.Satisfies(openblas.HostFeatures(), bi.BLASCore) {
		t.Fatalf("default: core %q (%s), want the class of %s", bi.BLASCore, bi.BLASChoice, want)
	}
}

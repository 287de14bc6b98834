//go:build openblas && cgo

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/dense/openblas"
)

// TestOpenBLASLoadTimeEnv runs an openblas build of the command and
// checks what OpenBLAS reads only when it is loaded: its thread server
// holds one thread whatever OPENBLAS_NUM_THREADS said (the process restarts
// with 1 where the server started more); with the environment a weaker core
// choice leaves (OPENBLAS_CORETYPE=Prescott, as marked by an earlier
// supergcn) it switches to the core type the CPU's features select (in
// process, or by the restart) and says so; a user's OPENBLAS_CORETYPE is
// left alone.
func TestOpenBLASLoadTimeEnv(t *testing.T) {
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
	if runtime.NumCPU() >= 2 { // OpenBLAS starts at most a thread a CPU
		for _, env := range [][]string{{openblas.ThreadsEnv + "=", "GOTO_NUM_THREADS=", "OMP_NUM_THREADS="}, {openblas.ThreadsEnv + "=2"}} {
			if bi := info(env...); bi.BLASThreads == "" || strings.Contains(bi.BLASThreads, "threads at load") {
				t.Errorf("with %v: BLAS threads %q, want no idle threads", env, bi.BLASThreads)
			}
		}
	}
	want, why := openblas.CoreFor(openblas.HostFeatures())
	if want == "" {
		t.Skip("no CPU feature of this machine maps to an OpenBLAS core type")
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

//go:build (openblas || mkl) && cgo

package main

// The openblas build tag puts OpenBLAS behind dense.Gemm: the binding is
// linked here, at the edge, so the libraries stay pure Go.
import (
	"os"
	"runtime"
	"syscall"

	"github.com/supergcn/supergcn/dense/openblas"
)

// reexecForBLAS is the fallback of dense/openblas's in-process core
// switch (its init), for an OpenBLAS without the entry points to re-run its
// core selection: it replaces the process, once, by itself with
// OPENBLAS_CORETYPE set to the core type the CPU's features select, when
// OpenBLAS's own detection picked a weaker one (see openblas.ReexecEnv;
// OpenBLAS reads the variable in its library constructor, before main). It
// runs first in main, before any flag is read or MPI is initialised; the
// process keeps its id, arguments and the rest of its environment. If the
// exec fails the process goes on with OpenBLAS's choice (`supergcn info`
// says so).
func reexecForBLAS() {
	env, ok := openblas.ReexecEnv()
	if !ok {
		return
	}
	self := "/proc/self/exe"
	if runtime.GOOS != "linux" {
		var err error
		if self, err = os.Executable(); err != nil {
			return
		}
	}
	_ = syscall.Exec(self, os.Args, env) // returns only on failure
}

//go:build (openblas || mkl) && cgo

package main

// The openblas build tag puts OpenBLAS behind dense.Gemm: the binding is
// linked here, at the edge, so the libraries stay pure Go.
import (
	"fmt"
	"os"
	"runtime"

	"github.com/supergcn/supergcn/dense/openblas"
	"github.com/supergcn/supergcn/internal/procsig"
	"github.com/supergcn/supergcn/internal/sysmem"
)

// reexecForBLAS replaces the process, once, by itself under the
// environment openblas.ReexecEnv returns, for what OpenBLAS reads only in
// its library constructor, before main: OPENBLAS_NUM_THREADS=1 when its
// thread server started with idle threads and their buffers (one a core),
// and OPENBLAS_CORETYPE where the in-process core switch (dense/openblas's
// init) is not available and OpenBLAS's detection picked a weaker core.
// It runs first in main, before any flag is read or MPI is initialised; the
// process keeps its id, arguments and the rest of its environment. If the
// exec fails the process goes on as it is (`supergcn info` says what
// OpenBLAS runs).
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
	_ = procsig.Exec(self, os.Args, env) // returns only on failure, or when a stop signal came first
}

// blasBufferBytes is the buffer OpenBLAS allocates for each thread that
// calls it (BUFFER_SIZE, 128 MiB on x86-64 and arm64, and a page of
// slack); it retries a failed allocation forever.
const blasBufferBytes = 128<<20 + 64<<10

// checkBLASAddressSpace refuses a run whose `threads` concurrent
// OpenBLAS callers would not find their buffers under ulimit -v (OpenBLAS
// would spin, deaf to signals, instead of failing).
func checkBLASAddressSpace(threads int) error {
	need, left := int64(threads)*blasBufferBytes, sysmem.AddressSpaceLeft()
	if need <= left {
		return nil
	}
	return fmt.Errorf("ulimit -v leaves %s of address space, but OpenBLAS needs %s for its buffers (%d threads × %d MiB): raise ulimit -v or lower --threads",
		sysmem.GB(left), sysmem.GB(need), threads, blasBufferBytes>>20)
}

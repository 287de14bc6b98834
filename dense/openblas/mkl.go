//go:build mkl && !openblas && cgo

package openblas

/*
#cgo LDFLAGS: -lmkl_rt
#include <mkl.h>

// sgcn_mkl_sequential selects MKL's sequential threading layer (one
// thread a call) before any MKL routine runs; it returns MKL's answer.
static int sgcn_mkl_sequential(void) {
	return MKL_Set_Threading_Layer(MKL_THREADING_SEQUENTIAL);
}
*/
import "C"

import (
	"strings"
	"unsafe"

	"gonum.org/v1/gonum/blas/blas32"
)

// init installs MKL (built with the mkl tag, linked through its single
// dynamic library libmkl_rt) as the process-wide blas32 implementation,
// with MKL's sequential layer: dense.Gemm splits products into blocks on
// its own goroutines, as with OpenBLAS. MKL dispatches its kernels by CPU
// features itself, so there is no core type to choose.
func init() {
	blas32.Use(Impl{})
	C.sgcn_mkl_sequential()
}

// library names the backend in Impl.Name.
const library = "mkl"

// Info names the library, its version string and the kernel dispatch;
// dense.BLAS reports it.
func (Impl) Info() (name, config, core string) {
	buf := make([]byte, 256)
	C.MKL_Get_Version_String((*C.char)(unsafe.Pointer(&buf[0])), C.int(len(buf)))
	return "Intel MKL", strings.TrimSpace(strings.TrimRight(string(buf), "\x00")), "MKL's own dispatch by CPU features"
}

// Choice says who chose the kernels; dense.BLASChoice reports it.
func (Impl) Choice() string {
	return "MKL's own dispatch by CPU features (MKL_ENABLE_INSTRUCTIONS can restrict it)"
}

// ReexecEnv reports that nothing needs a restart: MKL has no core type
// read at load time (see the OpenBLAS variant).
func ReexecEnv() (env []string, ok bool) { return nil, false }

// Threads says that MKL runs sequential (init): it starts no threads.
func (Impl) Threads() string { return "sequential MKL: no threads of its own" }

// cSgemm is cblas_sgemm on row-major operands, transposed where said.
func cSgemm(transA, transB bool, m, n, k int, alpha float32, a *float32, lda int, b *float32, ldb int, beta float32, c *float32, ldc int) {
	C.cblas_sgemm(C.CBLAS_LAYOUT(C.CblasRowMajor), mklTrans(transA), mklTrans(transB),
		C.MKL_INT(m), C.MKL_INT(n), C.MKL_INT(k),
		C.float(alpha), (*C.float)(a), C.MKL_INT(lda),
		(*C.float)(b), C.MKL_INT(ldb),
		C.float(beta), (*C.float)(c), C.MKL_INT(ldc))
}

func mklTrans(t bool) C.CBLAS_TRANSPOSE {
	if !t {
		return C.CBLAS_TRANSPOSE(C.CblasNoTrans)
	}
	return C.CBLAS_TRANSPOSE(C.CblasTrans)
}

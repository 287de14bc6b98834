//go:build (openblas || mkl) && cgo

package openblas

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/supergcn/supergcn/internal/par"
)

// Impl is gonum's pure-Go blas.Float32 with the hot routine, Sgemm,
// replaced by the C library's cblas_sgemm (OpenBLAS, or MKL under the mkl
// tag). Every other routine stays gonum's.
type Impl struct {
	gonum.Implementation
}

// Name describes the backend; dense.Backend reports it.
func (Impl) Name() string {
	return fmt.Sprintf("%s (single-threaded cblas_sgemm blocks on %d goroutines)", library, par.Threads())
}

// Sgemm computes C = alpha·op(A)·op(B) + beta·C on row-major operands with
// cblas_sgemm, after the same argument checks gonum performs (so misuse
// panics instead of reaching C).
func (Impl) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkSgemm(tA, tB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		// a and b may be empty: let gonum scale C instead of handing C
		// pointers to zero-length slices.
		gonum.Implementation{}.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	cSgemm(tA != blas.NoTrans, tB != blas.NoTrans, m, n, k, alpha, &a[0], lda, &b[0], ldb, beta, &c[0], ldc)
}

// checkSgemm panics, like gonum, when the Sgemm arguments are inconsistent.
func checkSgemm(tA, tB blas.Transpose, m, n, k, la, lda, lb, ldb, lc, ldc int) {
	if tA != blas.NoTrans && tA != blas.Trans && tA != blas.ConjTrans ||
		tB != blas.NoTrans && tB != blas.Trans && tB != blas.ConjTrans {
		panic("blas: illegal transpose")
	}
	if m < 0 || n < 0 || k < 0 {
		panic("blas: negative dimension")
	}
	ar, ac := m, k // rows and columns of A as stored
	if tA != blas.NoTrans {
		ar, ac = k, m
	}
	br, bc := k, n
	if tB != blas.NoTrans {
		br, bc = n, k
	}
	if lda < max(1, ac) || ldb < max(1, bc) || ldc < max(1, n) {
		panic("blas: bad leading dimension")
	}
	if m == 0 || n == 0 {
		return
	}
	if ar > 0 && la < (ar-1)*lda+ac || br > 0 && lb < (br-1)*ldb+bc || lc < (m-1)*ldc+n {
		panic("blas: insufficient matrix slice length")
	}
}

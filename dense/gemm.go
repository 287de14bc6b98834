package dense

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// Gemm computes c = alpha·op(a)·op(b) + beta·c, where op(x) is x or xᵀ as
// selected by tA and tB. It runs on the blas32 implementation installed for
// the process (see Backend).
//
// Shapes must agree: op(a) is m×k, op(b) is k×n and c is m×n. A mismatch is a
// programmer error and panics. c must not alias a or b. With beta == 0 the
// previous contents of c are ignored (NaNs in c do not propagate).
func Gemm(tA, tB bool, alpha float32, a, b *Matrix, beta float32, c *Matrix) {
	m, k := a.Rows, a.Cols
	if tA {
		m, k = k, m
	}
	kb, n := b.Rows, b.Cols
	if tB {
		kb, n = n, kb
	}
	if k != kb || c.Rows != m || c.Cols != n {
		panic(fmt.Sprintf("dense.Gemm: shape mismatch: op(a) %d×%d, op(b) %d×%d, c %d×%d",
			m, k, kb, n, c.Rows, c.Cols))
	}
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		scaleC(beta, c)
		return
	}
	blas32.Gemm(trans(tA), trans(tB), alpha, general(a), general(b), beta, general(c))
}

// scaleC sets c = beta·c, treating beta == 0 as an overwrite with zeros.
func scaleC(beta float32, c *Matrix) {
	if beta == 0 {
		c.Zero()
		return
	}
	if beta != 1 {
		Scale(beta, c.Data)
	}
}

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

// general views m as a blas32.General. Callers guarantee m has no zero
// dimension (BLAS requires a stride ≥ 1).
func general(m *Matrix) blas32.General {
	return blas32.General{Rows: m.Rows, Cols: m.Cols, Stride: m.Cols, Data: m.Data[:m.Rows*m.Cols]}
}

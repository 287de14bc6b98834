package dense

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/supergcn/supergcn/internal/par"
)

// Gemm computes c = alpha·op(a)·op(b) + beta·c, where op(x) is x or xᵀ as
// selected by tA and tB. It runs on the blas32 implementation installed for
// the process (see Backend).
//
// Shapes must agree: op(a) is m×k, op(b) is k×n and c is m×n. A mismatch is a
// programmer error and panics. c must not alias a or b. With beta == 0 the
// previous contents of c are ignored (NaNs in c do not propagate).
func Gemm(tA, tB bool, alpha float32, a, b *Matrix, beta float32, c *Matrix) {
	gemm(nil, tA, tB, alpha, a, b, beta, c)
}

// Work is Gemm's reusable scratch: the partial products of a product split
// along a long inner dimension (the weight gradient Xᵀ·G over all nodes,
// up to 16 MiB), which Gemm allocates anew on every call. A caller that
// repeats such products (a model, every epoch) keeps one Work so that the
// scratch is allocated once instead of becoming garbage each time. The zero
// value is ready to use; a Work is not safe for concurrent use.
type Work struct {
	// Precision of the products: FP32 (the zero value) computes what
	// dense.Gemm computes, bit for bit; BF16 rounds both operands to
	// bfloat16 first (see BF16).
	Precision Precision

	part []float32
	bt   []float32 // Wᵀ of a product G·Wᵀ on the micro-kernels (kernel.go)
	bf   bf16Work
}

// Gemm is dense.Gemm with w's scratch and w.Precision: with FP32 the same
// result as dense.Gemm, bit for bit.
func (w *Work) Gemm(tA, tB bool, alpha float32, a, b *Matrix, beta float32, c *Matrix) {
	gemm(w, tA, tB, alpha, a, b, beta, c)
}

// shapes returns the m×k·k×n of c = op(a)·op(b), panicking when the
// shapes do not agree (a programmer error).
func shapes(tA, tB bool, a, b, c *Matrix) (m, k, n int) {
	m, k = a.Rows, a.Cols
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
	return m, k, n
}

// gemm is Gemm with the scratch of w (nil: allocated per call).
func gemm(w *Work, tA, tB bool, alpha float32, a, b *Matrix, beta float32, c *Matrix) {
	m, k, n := shapes(tA, tB, a, b, c)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		scaleC(beta, c)
		return
	}
	if w != nil && w.Precision == BF16 {
		gemmBF16(w, tA, tB, alpha, a, b, beta, c)
		return
	}
	gemm32(w, tA, tB, alpha, a, b, beta, c)
}

// gemm32 is the float32 product of gemm (shapes checked, no zero
// dimension, alpha ≠ 0).
func gemm32(w *Work, tA, tB bool, alpha float32, a, b *Matrix, beta float32, c *Matrix) {
	m, k := c.Rows, a.Cols
	if tA {
		k = a.Rows
	}
	ga, gb, gc := general(a), general(b), general(c)
	if tiles != nil && tB && !tA && narrow(false, m, k, c.Cols) {
		gb, tB = transposedB(w, gb), false // G·Wᵀ as G·(Wᵀ) on the micro-kernels
	}
	switch {
	case m >= 2*GemmBlock:
		gemmRows(tA, tB, alpha, ga, gb, beta, gc)
	case k >= 2*GemmBlock:
		gemmInner(w, tA, tB, alpha, ga, gb, beta, gc)
	default:
		sgemm(tiles, tA, tB, alpha, ga, gb, beta, gc)
	}
}

// Backend describes the BLAS implementation behind Gemm: gonum's pure-Go
// one, or the binding installed into gonum's blas32 (dense/openblas), which
// names itself.
func Backend() string {
	if n, ok := blas32.Implementation().(interface{ Name() string }); ok {
		return n.Name()
	}
	return "gonum (pure Go)"
}

// BLAS names the BLAS library behind Gemm, its build configuration and the
// CPU core kernel set it selected, as the installed binding reports them;
// gonum's pure-Go one has no configuration or core selection.
func BLAS() (name, config, core string) {
	if i, ok := blas32.Implementation().(interface {
		Info() (string, string, string)
	}); ok {
		return i.Info()
	}
	return "gonum", "pure Go", ""
}

// BLASChoice says which CPU core kernel set the installed BLAS runs and
// why (a feature-based choice, the library's own detection, or the user's
// setting), as the binding reports it; "" for gonum's pure-Go BLAS.
func BLASChoice() string {
	if i, ok := blas32.Implementation().(interface{ Choice() string }); ok {
		return i.Choice()
	}
	return ""
}

// BLASThreads says what threads of its own the installed BLAS holds in
// this process, as the binding reports it; "" for gonum's pure-Go BLAS.
func BLASThreads() string {
	if i, ok := blas32.Implementation().(interface{ Threads() string }); ok {
		return i.Threads()
	}
	return ""
}

// GemmBlock is the block of rows (of c, or of the inner dimension) that one
// BLAS call of a parallel Gemm handles. GNN products are tall and skinny
// (nodes × features times features × features, and its transpose for the
// weight gradient), which threaded BLAS libraries split poorly; Gemm splits
// them itself into blocks of this many rows, one single-threaded BLAS call
// each, on the rank's thread budget (internal/par). The block is fixed, so the result does not
// depend on the thread count.
const GemmBlock = 4096

// gemmRows splits the m rows of c (and of op(a)) into blocks.
func gemmRows(tA, tB bool, alpha float32, a, b blas32.General, beta float32, c blas32.General) {
	m := c.Rows
	blocks := (m + GemmBlock - 1) / GemmBlock
	par.Blocks(blocks, 0, func(i int) {
		lo, hi := i*GemmBlock, min((i+1)*GemmBlock, m)
		sgemm(tiles, tA, tB, alpha, rowsOf(a, tA, lo, hi), b, beta, sub(c, lo, hi, 0, c.Cols))
	})
}

// maxInnerParts bounds the partial products of gemmInner (and so its
// memory: maxInnerParts·m·n values, 16 MiB for 256×256, whatever k is).
const maxInnerParts = 64

// gemmInner splits the long inner dimension k (the weight gradient
// Xᵀ·G over all nodes) into blocks of GemmBlock, and the blocks into at
// most maxInnerParts consecutive groups; each group accumulates its blocks'
// products in block order into its own partial (BLAS with beta = 1), then
// the partials are summed in group order. Blocks and groups depend on the
// shapes only, never on the thread count.
func gemmInner(w *Work, tA, tB bool, alpha float32, a, b blas32.General, beta float32, c blas32.General) {
	k := a.Cols
	if tA {
		k = a.Rows
	}
	blocks := (k + GemmBlock - 1) / GemmBlock
	groups := min(blocks, maxInnerParts)
	size := c.Rows * c.Cols
	var part []float32
	switch {
	case w == nil:
		part = make([]float32, groups*size)
	case cap(w.part) >= groups*size:
		part = w.part[:groups*size] // every partial starts with beta = 0: old values are ignored
	default:
		w.part = make([]float32, groups*size)
		part = w.part
	}
	par.Blocks(groups, 0, func(g int) {
		p := blas32.General{Rows: c.Rows, Cols: c.Cols, Stride: c.Cols, Data: part[g*size : (g+1)*size]}
		b0, b1 := g*blocks/groups, (g+1)*blocks/groups
		for i := b0; i < b1; i++ {
			lo, hi := i*GemmBlock, min((i+1)*GemmBlock, k)
			pb := float32(1)
			if i == b0 {
				pb = 0
			}
			sgemm(tiles, tA, tB, alpha, colsOf(a, tA, lo, hi), rowsOf(b, tB, lo, hi), pb, p)
		}
	})
	par.For(c.Rows, 16, func(r0, r1 int) {
		for r := r0; r < r1; r++ {
			dst := c.Data[r*c.Stride : r*c.Stride+c.Cols]
			if beta == 0 {
				clear(dst)
			} else if beta != 1 {
				Scale(beta, dst)
			}
			for i := 0; i < groups; i++ {
				Axpy(1, part[i*size+r*c.Cols:i*size+(r+1)*c.Cols], dst)
			}
		}
	})
}

// rowsOf returns rows [lo,hi) of op(g): rows of g, or columns of g when t.
func rowsOf(g blas32.General, t bool, lo, hi int) blas32.General {
	if t {
		return sub(g, 0, g.Rows, lo, hi)
	}
	return sub(g, lo, hi, 0, g.Cols)
}

// colsOf returns columns [lo,hi) of op(g): columns of g, or rows of g when t.
func colsOf(g blas32.General, t bool, lo, hi int) blas32.General {
	if t {
		return sub(g, lo, hi, 0, g.Cols)
	}
	return sub(g, 0, g.Rows, lo, hi)
}

// sub views rows [r0,r1) and columns [c0,c1) of g.
func sub(g blas32.General, r0, r1, c0, c1 int) blas32.General {
	off := r0*g.Stride + c0
	end := (r1-1)*g.Stride + c1
	return blas32.General{Rows: r1 - r0, Cols: c1 - c0, Stride: g.Stride, Data: g.Data[off:end]}
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

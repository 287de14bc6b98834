package dense

import (
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/supergcn/supergcn/internal/dispatch"
	"github.com/supergcn/supergcn/internal/par"
)

// The narrow products of a GNN layer, X·W and G·Wᵀ with W at most
// narrowWidth × narrowWidth (products' 100 → 128 → 47), are too thin for
// a BLAS to reach its square-matrix rate: it packs a panel of X for a
// handful of output columns, and pads the odd widths. Where the CPU has
// them, such products run on micro-kernels without packing instead: a
// tile of 12 rows × 32 columns of c (two vector accumulators a row) sums
// a(i, p)·b(p, j) over the inner dimension in order, reading rows of X (or
// of X and G for Xᵀ·G) in place and W from the caches; the last columns
// of an odd width are masked, not padded. Blocks and tiles depend on the
// shapes only, so the result does not depend on the thread count.

// narrowWidth bounds the widths of the products that run on the
// micro-kernels: X·W with W at most narrowWidth × narrowWidth (G·Wᵀ
// alike).
const narrowWidth = 256

// Tile shape: kernRows rows (also 4 and 1 at the bottom edge) × kernCols
// columns of c, the inner dimension in steps of at most kernInner (so
// that the panels of a and b a tile row reads stay in the caches).
const (
	kernRows  = 12
	kernCols  = 32
	kernInner = 512
)

// kernFunc is a micro-kernel of r rows (12, 4 or 1) × kernCols (or
// kernCols/2) columns: for i < r and the columns j whose bit is set in
// mask,
//
//	c[i][j] = alpha·Σ_{p<k} a(i, p)·b(p, j)  (+ c[i][j] when acc)
//
// the sum in p order, with a(i, p) at a + i·si + p·sp, b(p, j) at
// b + p·ldb + 4j and c[i][j] at c + i·ldc + 4j (strides in bytes); k ≥ 1.
type kernFunc func(k int, a *float32, si, sp int, b *float32, ldb int, c *float32, ldc int, mask uint32, alpha float32, acc bool)

// tileKernels are the micro-kernels of an architecture, of 12, 4 and 1
// rows: wide ones of kernCols columns, narrow ones of kernCols/2 (one
// vector a row: the last columns of a width such as 47 or 100, which the
// wide ones would compute with most lanes masked).
type tileKernels struct {
	wide, narrow [3]kernFunc
}

// kernelSet is dense's kernels of one instruction set: the micro-kernels
// of the narrow products and the column sums (nil: the BLAS, and the Go
// loop).
type kernelSet struct {
	tiles   *tileKernels
	colSums func(acc *float64, m *float32, rows, cols, stride int)
}

// kernels is the set SUPERGCN_KERNEL names (read once, when the process
// starts), else the best this CPU runs: "generic", and names without a
// set of their own ("avx2", "neon", "sve"), run the BLAS and the Go loops,
// as they run every family's pure-Go kernels; a bad value falls back to
// the best set (the command reports it through aggr).
var kernels = chosenKernels.Impl

// kernelFamily is the micro-kernel sets this CPU runs, best first.
var kernelFamily = dispatch.NewFamily(append(archKernelSets(), dispatch.Impl[kernelSet]{Name: dispatch.Generic}),
	map[string]string{"avx2": dispatch.Generic, "neon": dispatch.Generic, "sve": dispatch.Generic})

var chosenKernels = func() dispatch.Impl[kernelSet] {
	im, err := kernelFamily.Lookup("")
	if err != nil {
		im = kernelFamily.Best()
	}
	return im
}()

// KernelName names the micro-kernel set the narrow products and column
// sums run on ("generic": the BLAS and the Go loops).
func KernelName() string { return chosenKernels.Name }

// Kernels lists the micro-kernel sets this CPU runs, best first.
func Kernels() []string { return kernelFamily.Names() }

// tiles are the micro-kernels in use, nil where there are none (every
// product then runs on the BLAS).
var tiles = kernels.tiles

// narrow reports whether c = op(a)·b, op(a) m×k and b k×n (b not
// transposed: see gemm32), runs on the micro-kernels: X·W and G·Wᵀ of a
// narrow W. The weight gradient Xᵀ·G stays with the BLAS, which packs the
// columns of X that a tile would read with a stride of a row (measured
// faster for these shapes); the kernels take it (tileKernels.gemm) all
// the same.
func narrow(tA bool, m, k, n int) bool {
	return !tA && k <= narrowWidth && n <= narrowWidth
}

// sgemm is one product of Gemm's blocks: on t, the micro-kernels, when
// the shape is narrow and b is not transposed, else on the BLAS.
func sgemm(t *tileKernels, tA, tB bool, alpha float32, a, b blas32.General, beta float32, c blas32.General) {
	k := a.Cols
	if tA {
		k = a.Rows
	}
	if t == nil || tB || !narrow(tA, c.Rows, k, c.Cols) {
		blas32.Gemm(trans(tA), trans(tB), alpha, a, b, beta, c)
		return
	}
	t.gemm(tA, alpha, a, b, beta, c)
}

// gemm sets c = alpha·op(a)·b + beta·c tile by tile: X·W reads a's rows,
// Xᵀ·G (tA) its columns, in place.
func (t *tileKernels) gemm(tA bool, alpha float32, a, b blas32.General, beta float32, c blas32.General) {
	m, n := c.Rows, c.Cols
	k, si, sp := a.Cols, 4*a.Stride, 4
	if tA {
		k, si, sp = a.Rows, 4, 4*a.Stride
	}
	acc := beta != 0
	if acc && beta != 1 {
		for i := range m {
			Scale(beta, c.Data[i*c.Stride:i*c.Stride+n])
		}
	}
	for p0 := 0; p0 < k; p0 += kernInner {
		kk := min(kernInner, k-p0)
		for i0 := 0; i0 < m; {
			r, h := 1, 2
			switch {
			case m-i0 >= kernRows:
				r, h = kernRows, 0
			case m-i0 >= 4:
				r, h = 4, 1
			}
			ai := i0*a.Stride + p0
			if tA {
				ai = p0*a.Stride + i0
			}
			for j0 := 0; j0 < n; j0 += kernCols {
				cols, kern := min(kernCols, n-j0), t.wide[h]
				if cols <= kernCols/2 {
					kern = t.narrow[h]
				}
				kern(kk, &a.Data[ai], si, sp, &b.Data[p0*b.Stride+j0], 4*b.Stride,
					&c.Data[i0*c.Stride+j0], 4*c.Stride, uint32(uint64(1)<<cols-1), alpha, acc || p0 > 0)
			}
			i0 += r
		}
	}
}

// transposedB returns bᵀ (b n×k: k×n, rows of n values) in w's scratch
// (nil: allocated), for products G·Wᵀ that run on the micro-kernels.
func transposedB(w *Work, b blas32.General) blas32.General {
	n, k := b.Rows, b.Cols
	var d []float32
	if w != nil {
		if cap(w.bt) < n*k {
			w.bt = make([]float32, n*k)
		}
		d = w.bt[:n*k]
	} else {
		d = make([]float32, n*k)
	}
	par.For(k, 64, func(lo, hi int) {
		for p := lo; p < hi; p++ {
			for j := range n {
				d[p*n+j] = b.Data[j*b.Stride+p]
			}
		}
	})
	return blas32.General{Rows: k, Cols: n, Stride: n, Data: d}
}

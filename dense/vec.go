package dense

import (
	"fmt"

	"github.com/supergcn/supergcn/internal/par"
)

// Axpy sets y += alpha·x. len(x) must equal len(y) (panics otherwise).
func Axpy(alpha float32, x, y []float32) {
	if len(x) != len(y) {
		panic(fmt.Sprintf("dense.Axpy: length mismatch %d != %d", len(x), len(y)))
	}
	for i, v := range x {
		y[i] += alpha * v
	}
}

// Scale sets x = alpha·x.
func Scale(alpha float32, x []float32) {
	for i := range x {
		x[i] *= alpha
	}
}

// Add sets dst += src for matrices of the same shape (panics otherwise).
func Add(dst, src *Matrix) {
	mustSameShape("dense.Add", dst, src)
	par.For(dst.Rows, rowGrain(dst.Cols), func(lo, hi int) {
		d, s := dst.Data[lo*dst.Cols:hi*dst.Cols], src.Data[lo*src.Cols:hi*src.Cols]
		for i, v := range s {
			d[i] += v
		}
	})
}

// Copy sets dst = src for matrices of the same shape (panics otherwise).
func Copy(dst, src *Matrix) {
	mustSameShape("dense.Copy", dst, src)
	copy(dst.Data, src.Data)
}

// AddBias adds b to every row of m; len(b) must be m.Cols (panics otherwise).
func AddBias(m *Matrix, b []float32) {
	if len(b) != m.Cols {
		panic(fmt.Sprintf("dense.AddBias: bias length %d, matrix has %d columns", len(b), m.Cols))
	}
	par.For(m.Rows, rowGrain(m.Cols), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := m.Row(i)
			for j, v := range b {
				row[j] += v
			}
		}
	})
}

// ColSums sets dst[j] = Σ_i m[i,j] (accumulated in float64, then rounded);
// len(dst) must be m.Cols (panics otherwise). The summation order depends on
// m's shape only (see ColReduce), not on the thread count.
func ColSums(m *Matrix, dst []float32) {
	if len(dst) != m.Cols {
		panic(fmt.Sprintf("dense.ColSums: dst length %d, matrix has %d columns", len(dst), m.Cols))
	}
	ColReduce(m.Rows, m.Cols, func(lo, hi int, acc []float64) {
		colSumsInto(acc, m, lo, hi)
	}, func(sum []float64) {
		for j, v := range sum {
			dst[j] = float32(v)
		}
	})
}

// colSums is the column-sum kernel in use (nil: none, the Go loop).
var colSums = kernels.colSums

// colSumRows is the rows of one call of the column-sum kernel.
const colSumRows = 32

// colSumsInto adds rows [lo, hi) of m to acc column by column
// (acc[j] += float64(m[i][j]), i in order): on the CPU's kernel where it
// has one, the same sums bit for bit.
func colSumsInto(acc []float64, m *Matrix, lo, hi int) {
	if colSums != nil && hi > lo && m.Cols > 0 {
		_ = acc[m.Cols-1]
		_ = m.Data[(hi-1)*m.Cols+m.Cols-1]
		// The kernel sweeps its rows once per 32 columns: in runs of
		// colSumRows rows, which stay in the L1 cache between sweeps.
		for r := lo; r < hi; r += colSumRows {
			colSums(&acc[0], &m.Data[r*m.Cols], min(colSumRows, hi-r), m.Cols, m.Cols)
		}
		return
	}
	for i := lo; i < hi; i++ {
		for j, v := range m.Row(i) {
			acc[j] += float64(v)
		}
	}
}

// maxReduceBlocks bounds the row blocks of ColReduce (and so its memory).
const maxReduceBlocks = 64

// ColReduce runs fn over blocks of the rows [0, rows), each block adding into
// its own zeroed float64 accumulator of length cols; the block accumulators
// are then summed in block order and handed to done. It is the parallel
// pattern for per-column reductions (bias and LayerNorm parameter
// gradients). The blocks depend on rows and cols only, so the result does
// not depend on the thread budget.
func ColReduce(rows, cols int, fn func(lo, hi int, acc []float64), done func(sum []float64)) {
	blocks := max(1, min(maxReduceBlocks, rows/rowGrain(cols)))
	accs := make([][]float64, blocks)
	par.Blocks(blocks, 0, func(b int) {
		accs[b] = make([]float64, cols)
		fn(b*rows/blocks, (b+1)*rows/blocks, accs[b])
	})
	sum := make([]float64, cols)
	for _, acc := range accs {
		for j, v := range acc {
			sum[j] += v
		}
	}
	done(sum)
}

// rowGrain is the minimum rows per block so that a block holds about 32k
// elements, below which goroutine start-up costs more than it saves.
func rowGrain(cols int) int {
	return max(1, (1<<15)/max(cols, 1))
}

// RowGrain is rowGrain for other packages' row-parallel loops (par.For).
func RowGrain(cols int) int { return rowGrain(cols) }

func mustSameShape(op string, a, b *Matrix) {
	if !SameShape(a, b) {
		panic(fmt.Sprintf("%s: shape mismatch %d×%d vs %d×%d", op, a.Rows, a.Cols, b.Rows, b.Cols))
	}
}

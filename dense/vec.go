package dense

import (
	"fmt"
	"runtime"
	"sync"
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
	ParallelFor(dst.Rows, rowGrain(dst.Cols), func(lo, hi int) {
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
	ParallelFor(m.Rows, rowGrain(m.Cols), func(lo, hi int) {
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
// the number of row blocks, which is fixed by m's shape and GOMAXPROCS.
func ColSums(m *Matrix, dst []float32) {
	if len(dst) != m.Cols {
		panic(fmt.Sprintf("dense.ColSums: dst length %d, matrix has %d columns", len(dst), m.Cols))
	}
	ColReduce(m.Rows, m.Cols, func(lo, hi int, acc []float64) {
		for i := lo; i < hi; i++ {
			for j, v := range m.Row(i) {
				acc[j] += float64(v)
			}
		}
	}, func(sum []float64) {
		for j, v := range sum {
			dst[j] = float32(v)
		}
	})
}

// ColReduce runs fn over blocks of the rows [0, rows), each block adding into
// its own zeroed float64 accumulator of length cols; the block accumulators
// are then summed in block order and handed to done. It is the parallel
// pattern for per-column reductions (bias and LayerNorm parameter gradients).
func ColReduce(rows, cols int, fn func(lo, hi int, acc []float64), done func(sum []float64)) {
	blocks := blockCount(rows, rowGrain(cols))
	accs := make([][]float64, blocks)
	parallelBlocks(rows, blocks, func(b, lo, hi int) {
		accs[b] = make([]float64, cols)
		fn(lo, hi, accs[b])
	})
	sum := make([]float64, cols)
	for _, acc := range accs {
		for j, v := range acc {
			sum[j] += v
		}
	}
	done(sum)
}

// ParallelFor splits [0, n) into at most GOMAXPROCS contiguous blocks of at
// least grain items each and runs fn on them concurrently, returning when all
// are done. Small n runs inline on the caller's goroutine.
func ParallelFor(n, grain int, fn func(lo, hi int)) {
	parallelBlocks(n, blockCount(n, grain), func(_, lo, hi int) { fn(lo, hi) })
}

// blockCount is the number of blocks ParallelFor uses for n items.
func blockCount(n, grain int) int {
	if grain < 1 {
		grain = 1
	}
	b := min(runtime.GOMAXPROCS(0), n/grain)
	return max(b, 1)
}

// parallelBlocks runs fn(b, lo, hi) for the blocks b < blocks that split
// [0, n) evenly.
func parallelBlocks(n, blocks int, fn func(b, lo, hi int)) {
	if blocks <= 1 {
		fn(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	for b := range blocks {
		lo, hi := b*n/blocks, (b+1)*n/blocks
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(b, lo, hi)
		}()
	}
	wg.Wait()
}

// rowGrain is the minimum rows per block so that a block holds about 32k
// elements, below which goroutine start-up costs more than it saves.
func rowGrain(cols int) int {
	return max(1, (1<<15)/max(cols, 1))
}

// RowGrain is rowGrain for other packages' row-parallel loops.
func RowGrain(cols int) int { return rowGrain(cols) }

func mustSameShape(op string, a, b *Matrix) {
	if !SameShape(a, b) {
		panic(fmt.Sprintf("%s: shape mismatch %d×%d vs %d×%d", op, a.Rows, a.Cols, b.Rows, b.Cols))
	}
}

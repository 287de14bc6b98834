package aggr

import (
	"fmt"
	"math"

	"sync/atomic"

	"github.com/supergcn/supergcn/dense"
)

// NoArg marks an element of a max product's argument table whose row has
// no entries (its value is 0).
const NoArg = -1

// ApplyMax computes the element-wise maximum over each row's entries,
// out[r, j] = max_{k in row r} x[Idx[k], j], and records in arg[r·w+j] the
// column that gave it plus base (the first entry of the row, in CSR order,
// among equal maxima: a strict comparison; a NaN never replaces a value,
// and a NaN maximum stays). The values of a weighted CSR are not used. A
// row without entries gets 0 and NoArg, unless merge is set: then out and
// arg hold a previous maximum (NoArg: none yet), which a row's entry
// replaces only when strictly greater (or when there was none), so that
// several products (the local graph, then received rows with another base)
// combine into one maximum with one argument table.
// x.Cols == out.Cols == w, len(arg) ≥ out.Rows·w, 0 ≤ base and base +
// x.Rows ≤ MaxInt32; out must not overlap x. The work is split as Apply's
// (rows balanced by entries, hub rows into column blocks) on the engine's
// threads, every value written by one goroutine with the engine's kernel:
// the result does not depend on the thread count.
func (op *Op) ApplyMax(x, out *dense.Matrix, arg []int32, base int32, merge bool) {
	a := op.a
	w := x.Cols
	if a.NumCols != x.Rows || a.NumRows != out.Rows || w != out.Cols || len(arg) < out.Rows*w ||
		len(x.Data) < x.Rows*w || len(out.Data) < out.Rows*w {
		panic(fmt.Sprintf("aggr: ApplyMax shape mismatch: A %d×%d, x %d×%d (%d values), out %d×%d (%d values), %d arguments",
			a.NumRows, a.NumCols, x.Rows, x.Cols, len(x.Data), out.Rows, out.Cols, len(out.Data), len(arg)))
	}
	if base < 0 || int64(base)+int64(x.Rows) > math.MaxInt32 {
		panic(fmt.Sprintf("aggr: ApplyMax base %d for %d rows: arguments outside [0, MaxInt32]", base, x.Rows))
	}
	if w == 0 || a.NumRows == 0 {
		return
	}
	if overlap(x.Data[:x.Rows*w], out.Data[:out.Rows*w]) {
		panic("aggr: out overlaps x")
	}
	pl := op.plan(false, a, w)
	r := runner{k: op.e.k, a: a, x: x.Data, out: out.Data, f: w, tasks: pl.tasks,
		arg: arg, base: base, merge: merge}
	if len(pl.tasks) <= 1 || op.e.threads == 1 {
		for i := range pl.tasks {
			r.doMax(&pl.tasks[i])
		}
		return
	}
	op.e.pool.Run(r.worker)
}

// doMax computes the output rectangle t of a max product.
func (r *runner) doMax(t *task) {
	a, f := r.a, r.f
	c0, c1 := int(t.c0), int(t.c1)
	xs := r.x[min(c0, len(r.x)):] // x may be empty (no columns, so no entries)
	for v := int(t.r0); v < int(t.r1); v++ {
		o, g := r.out[v*f+c0:v*f+c1:v*f+c1], r.arg[v*f+c0:v*f+c1:v*f+c1]
		idx := a.Idx[a.Ptr[v]:a.Ptr[v+1]]
		if len(idx) == 0 {
			if !r.merge {
				clear(o)
				for j := range g {
					g[j] = NoArg
				}
			}
			continue
		}
		// The first entry initialises the row (or merges into it); after it
		// no argument is NoArg (base+c ≥ 0), and the kernel's strict
		// comparison is the whole rule.
		c := idx[0]
		row := xs[int(c)*f : int(c)*f+c1-c0]
		if r.merge {
			mergeRow(o, g, row, r.base+c)
		} else {
			copy(o, row)
			for j := range g {
				g[j] = r.base + c
			}
		}
		r.k.maxRows(o, g, xs, f, idx[1:], r.base)
	}
}

// mergeRow merges one row v (argument id) into o and g: v[j] replaces o[j]
// where it is greater or where g[j] is NoArg (no value yet).
func mergeRow(o []float32, g []int32, v []float32, id int32) {
	v, g = v[:len(o)], g[:len(o)]
	for j, x := range v {
		if x > o[j] || g[j] == NoArg {
			o[j], g[j] = x, id
		}
	}
}

// ScatterMax is the backward pass of ApplyMax on op (g has op's output
// rows, dst its input rows): every element g[r, j] goes to the row its
// argument names, dst[arg[r·w+j] − lo, j] += g[r, j], for the arguments in
// [lo, lo+dst.Rows) (others, and NoArg, are skipped: they belong to another
// product's rows). dst is overwritten first unless accumulate is set;
// len(arg) ≥ g.Rows·w, and dst must not overlap g. Column blocks run in
// parallel on the engine's threads with its kernel, every block adding the
// rows in order: the sums are the same at any thread count and with any
// kernel.
func (op *Op) ScatterMax(g *dense.Matrix, arg []int32, lo int32, dst *dense.Matrix, accumulate bool) {
	a := op.a
	w := g.Cols
	if a.NumRows != g.Rows || a.NumCols != dst.Rows || dst.Cols != w || len(arg) < g.Rows*w ||
		len(g.Data) < g.Rows*w || len(dst.Data) < dst.Rows*w {
		panic(fmt.Sprintf("aggr: ScatterMax shape mismatch: A %d×%d, g %d×%d (%d values), dst %d×%d (%d values), %d arguments",
			a.NumRows, a.NumCols, g.Rows, g.Cols, len(g.Data), dst.Rows, dst.Cols, len(dst.Data), len(arg)))
	}
	if lo < 0 || int64(lo)+int64(dst.Rows) > math.MaxInt32 {
		panic(fmt.Sprintf("aggr: ScatterMax rows [%d, %d+%d) outside [0, MaxInt32]", lo, lo, dst.Rows))
	}
	if !accumulate {
		clear(dst.Data[:dst.Rows*w])
	}
	if w == 0 || g.Rows == 0 || dst.Rows == 0 {
		return
	}
	if overlap(g.Data[:g.Rows*w], dst.Data[:dst.Rows*w]) {
		panic("aggr: dst overlaps g")
	}
	k := op.e.k.scatter
	if int64(dst.Rows)*int64(w) >= 1<<31 {
		k = scatterMaxGeneric // the SIMD kernels' offsets are int32
	}
	n := int32(dst.Rows)
	const block = 16 // columns per task: one cache line of every row
	nb := (w + block - 1) / block
	var next atomic.Int64
	run := func(int) {
		for b := int(next.Add(1) - 1); b < nb; b = int(next.Add(1) - 1) {
			c0 := b * block
			k(dst.Data[c0:], g.Data[c0:], arg[c0:], g.Rows, min(block, w-c0), w, lo, n)
		}
	}
	if nb == 1 || op.e.threads == 1 {
		run(0)
		return
	}
	op.e.pool.Run(run)
}

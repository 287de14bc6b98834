package aggr

import (
	"fmt"
	"math"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/par"
)

// NoArg marks an element of a max product's argument table whose row has
// no entries (its value is 0).
const NoArg = -1

// ApplyMax computes the element-wise maximum over each row's entries,
// out[r, j] = max_{k in row r} x[Idx[k], j], and records in arg[r·w+j] the
// column that gave it plus base (the first entry of the row, in CSR order,
// among equal maxima: a strict comparison). The values of a weighted CSR
// are not used. A row without entries gets 0 and NoArg, unless merge is
// set: then out and arg hold a previous maximum (NoArg: none yet), which a
// row's entry replaces only when strictly greater (or when there was none),
// so that several products (the local graph, then received rows with
// another base) combine into one maximum with one argument table.
// x.Cols == out.Cols == w, len(arg) ≥ out.Rows·w; out must not overlap x.
// Rows run in parallel, each written by one goroutine.
func (op *Op) ApplyMax(x, out *dense.Matrix, arg []int32, base int32, merge bool) {
	a := op.a
	w := x.Cols
	if a.NumCols != x.Rows || a.NumRows != out.Rows || w != out.Cols || len(arg) < out.Rows*w {
		panic(fmt.Sprintf("aggr: ApplyMax shape mismatch: A %d×%d, x %d×%d, out %d×%d, %d arguments",
			a.NumRows, a.NumCols, x.Rows, x.Cols, out.Rows, out.Cols, len(arg)))
	}
	if w == 0 || a.NumRows == 0 {
		return
	}
	if overlap(x.Data[:x.Rows*w], out.Data[:out.Rows*w]) {
		panic("aggr: out overlaps x")
	}
	grain := max(1, 4096/w)
	par.For(a.NumRows, grain, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			o, g := out.Data[r*w:(r+1)*w], arg[r*w:(r+1)*w]
			idx := a.Idx[a.Ptr[r]:a.Ptr[r+1]]
			if !merge {
				if len(idx) == 0 {
					clear(o)
					for j := range g {
						g[j] = NoArg
					}
					continue
				}
				c := idx[0]
				copy(o, x.Data[int(c)*w:(int(c)+1)*w])
				for j := range g {
					g[j] = base + c
				}
				idx = idx[1:]
			}
			row := maxRow
			if merge {
				row = mergeRow
			}
			for _, c := range idx {
				row(o, g, x.Data[int(c)*w:(int(c)+1)*w], base+c)
			}
		}
	})
}

// maxRow replaces o[j] (and g[j]) by v[j] (and id) where v[j] is greater.
// It selects by masks, without a branch per value: which values win is
// random, and a mispredicted branch costs more than the select (about
// twice as fast as mergeRow's branches).
func maxRow(o []float32, g []int32, v []float32, id int32) {
	v, g = v[:len(o)], g[:len(o)]
	for j, x := range v {
		var m int32
		if x > o[j] {
			m = -1
		}
		u := uint32(m)
		o[j] = math.Float32frombits(math.Float32bits(o[j])&^u | math.Float32bits(x)&u)
		g[j] = g[j]&^m | id&m
	}
}

// mergeRow is maxRow where g[j] may be NoArg (no value yet: v[j] wins).
func mergeRow(o []float32, g []int32, v []float32, id int32) {
	v, g = v[:len(o)], g[:len(o)]
	for j, x := range v {
		if x > o[j] || g[j] == NoArg {
			o[j], g[j] = x, id
		}
	}
}

// ScatterMax is the backward pass of ApplyMax: every element g[r, j] goes
// to the row its argument names, dst[arg[r·w+j] − lo, j] += g[r, j], for the
// arguments in [lo, lo+dst.Rows) (others, and NoArg, are skipped: they
// belong to another product's rows). dst is overwritten first unless
// accumulate is set. Column blocks run in parallel and every block adds
// the rows in order: the sums are the same at any thread count.
func ScatterMax(g *dense.Matrix, arg []int32, lo int32, dst *dense.Matrix, accumulate bool) {
	w := g.Cols
	if dst.Cols != w || len(arg) < g.Rows*w {
		panic(fmt.Sprintf("aggr: ScatterMax shape mismatch: g %d×%d, dst %d×%d, %d arguments", g.Rows, g.Cols, dst.Rows, dst.Cols, len(arg)))
	}
	if !accumulate {
		clear(dst.Data[:dst.Rows*w])
	}
	if w == 0 || g.Rows == 0 || dst.Rows == 0 {
		return
	}
	hi := lo + int32(dst.Rows)
	const block = 16 // columns per task: one cache line of every row
	par.For((w+block-1)/block, 1, func(b0, b1 int) {
		c0, c1 := b0*block, min(b1*block, w)
		for r := range g.Rows {
			gr, ar := g.Data[r*w+c0:r*w+c1], arg[r*w+c0:r*w+c1]
			for j, a := range ar {
				if a >= lo && a < hi {
					dst.Data[int(a-lo)*w+c0+j] += gr[j]
				}
			}
		}
	})
}

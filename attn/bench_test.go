package attn

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/par"
)

// benchGraph is a random graph of n nodes and deg in-edges a node.
func benchGraph(b *testing.B, n, deg int) (*Graph, *graph.CSR) {
	r := rand.New(rand.NewPCG(1, 1))
	ptr, idx := make([]int64, n+1), make([]int32, 0, n*deg)
	for v := range n {
		for range deg {
			idx = append(idx, int32(r.IntN(n)))
		}
		ptr[v+1] = int64(len(idx))
	}
	g, err := NewGraph(n, n, ptr, idx)
	if err != nil {
		b.Fatal(err)
	}
	return g, &graph.CSR{NumRows: n, NumCols: n, Ptr: ptr, Idx: idx}
}

// cpuTime is the process's user and system time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// timed runs fn b.N times and reports, beside the wall time, the
// process's CPU time per run (cpu-ns/op): on a shared machine the wall time
// of a one-thread run (-cpu 1) counts the other processes' turns, its CPU
// time does not.
func timed(b *testing.B, fn func()) {
	t := cpuTime(b)
	for range b.N {
		fn()
	}
	b.ReportMetric(float64(cpuTime(b)-t)/float64(b.N), "cpu-ns/op")
}

// BenchmarkAttention times the attention forward and backward of two head
// layouts of 64 columns (8 heads × 8, one head × 64), without and with
// attention dropout (GAT's default 0.6), against the plain aggregation of
// the same 64-wide rows forward (spmm) and transposed (spmmT), the SpMM a
// GCN layer of that width runs. The graph is products-like in degree (50
// in-edges a node, ogbn-products averages 50.5) on 100,000 nodes, so the
// 64-wide source rows (25.6 MB) overflow the caches as at full size. The
// "ids" runs name the nodes globally by a random permutation, as the
// distributed operator (package exchange, one rank included) does: the
// dropout masks then read each edge's global ids.
func BenchmarkAttention(b *testing.B) {
	const n, deg = 100000, 50
	g, csr := benchGraph(b, n, deg)
	e, err := aggr.New(par.Threads(), "")
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	r := rand.New(rand.NewPCG(2, 2))
	const hf = 64
	z, gp := randVec(r, n*hf), randVec(r, n*hf)
	op := e.Prepare(csr)
	x, out := &dense.Matrix{Rows: n, Cols: hf, Data: z}, dense.New(n, hf)
	b.Run("spmm", func(b *testing.B) { timed(b, func() { op.Apply(x, out, false) }) })
	op.PrepareT()
	b.Run("spmmT", func(b *testing.B) { timed(b, func() { op.ApplyT(x, out, false) }) })
	perm := make([]int64, n)
	for i, p := range r.Perm(n) {
		perm[i] = int64(p)
	}
	for _, heads := range []int{8, 1} {
		for _, c := range []struct {
			drop float32
			ids  Ids
		}{{0, Ids{}}, {0.6, Ids{}}, {0.6, Ids{Row: perm, Col: perm}}} {
			sp := Spec{Heads: heads, Width: hf / heads, Slope: 0.2, Drop: c.drop, Seed: 1}
			src, dst, cd := randVec(r, n*heads), randVec(r, n*heads), randVec(r, n*heads)
			var st State
			var sc Scratch
			name := fmt.Sprintf("heads=%dx%d/drop=%g", heads, hf/heads, c.drop)
			if c.ids.Row != nil {
				name += "/ids"
			}
			b.Run(name+"/forward", func(b *testing.B) {
				timed(b, func() {
					if err := Forward(g, sp, z, src, dst, c.ids, e.RowsW(), &st); err != nil {
						b.Fatal(err)
					}
				})
			})
			if err := Forward(g, sp, z, src, dst, c.ids, e.RowsW(), &st); err != nil {
				b.Fatal(err)
			}
			gz, gs, gd := make([]float32, n*hf), make([]float32, n*heads), make([]float32, n*heads)
			b.Run(name+"/backward", func(b *testing.B) {
				timed(b, func() {
					if err := Backward(g, sp, z, src, dst, gp, cd, e.RowsW(), &st, &sc, gz, gs, gd); err != nil {
						b.Fatal(err)
					}
				})
			})
		}
	}
}

// BenchmarkDropoutMasks times the attention dropout masks alone, with
// every head kernel, over the rows of the graph of BenchmarkAttention
// (global ids a random permutation, dropout 0.6) for 8 heads and for one
// head: one pass of Forward's (or Backward's pass over the rows).
func BenchmarkDropoutMasks(b *testing.B) {
	const n, deg = 100000, 50
	g, _ := benchGraph(b, n, deg)
	r := rand.New(rand.NewPCG(3, 3))
	perm := make([]int64, n)
	for i, p := range r.Perm(n) {
		perm[i] = int64(p)
	}
	ids := Ids{Row: perm, Col: perm}
	for _, k := range headFamily.Impls() {
		for _, heads := range []int{8, 1} {
			sp := Spec{Heads: heads, Width: 64 / heads, Slope: 0.2, Drop: 0.6, Seed: 1}
			b.Run(fmt.Sprintf("%s/heads=%d", k.name, heads), func(b *testing.B) {
				var eg edgeTemps
				timed(b, func() {
					for v := range g.Rows {
						eg.hash(sp, k, g.Idx[g.Ptr[v]:g.Ptr[v+1]], ids, ids.row(v), true)
					}
				})
			})
		}
	}
}

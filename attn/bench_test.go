package attn

import (
	"math/rand/v2"
	"testing"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
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

// BenchmarkAttention times one head layout (8 heads × 8) forward and
// backward against the plain aggregation of the same rows (aggr), the
// floor the weighted aggregation shares.
func BenchmarkAttention(b *testing.B) {
	const n, deg = 50000, 10
	sp := Spec{Heads: 8, Width: 8, Slope: 0.2, Drop: 0.5, Seed: 1}
	g, csr := benchGraph(b, n, deg)
	e, err := aggr.New(1, "")
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(2, 2))
	hf := sp.Heads * sp.Width
	z, src, dst := randVec(r, n*hf), randVec(r, n*sp.Heads), randVec(r, n*sp.Heads)
	var st State
	var sc Scratch
	b.Run("forward", func(b *testing.B) {
		for range b.N {
			if err := Forward(g, sp, z, src, dst, Ids{}, e.RowsW(), &st); err != nil {
				b.Fatal(err)
			}
		}
	})
	if err := Forward(g, sp, z, src, dst, Ids{}, e.RowsW(), &st); err != nil {
		b.Fatal(err)
	}
	gp, cd := randVec(r, n*hf), randVec(r, n*sp.Heads)
	gz, gs, gd := make([]float32, n*hf), make([]float32, n*sp.Heads), make([]float32, n*sp.Heads)
	b.Run("backward", func(b *testing.B) {
		for range b.N {
			if err := Backward(g, sp, z, src, dst, gp, cd, e.RowsW(), &st, &sc, gz, gs, gd); err != nil {
				b.Fatal(err)
			}
		}
	})
	op := e.Prepare(csr)
	x, out := &dense.Matrix{Rows: n, Cols: hf, Data: z}, dense.New(n, hf)
	b.Run("aggr-same-width", func(b *testing.B) {
		for range b.N {
			op.Apply(x, out, false)
		}
	})
}

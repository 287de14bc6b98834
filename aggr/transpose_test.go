package aggr

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
)

// symmetrize returns a + aᵀ as a CSR with sorted rows (FromCOO keeps each
// row's input order; the edges are listed by source, so rows come sorted).
func symmetrize(a *graph.CSR) *graph.CSR {
	var src, dst []int32
	for v := 0; v < a.NumRows; v++ {
		for _, u := range a.Idx[a.Ptr[v]:a.Ptr[v+1]] {
			src, dst = append(src, u, int32(v)), append(dst, int32(v), u)
		}
	}
	order := make([]int, len(src))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return int(src[i]) - int(src[j]) })
	s, d := make([]int32, len(src)), make([]int32, len(src))
	for k, i := range order {
		s[k], d[k] = src[i], dst[i]
	}
	return graph.FromCOO(a.NumRows, a.NumCols, s, d, nil)
}

// An operator equal to its own transpose (symmetric, sorted rows, parallel
// edges included) keeps no second copy of the graph, and ApplyT gives
// exactly what it gives on a built transpose; any other operator (not
// symmetric, symmetric with unsorted rows, weighted unsymmetrically) gets
// its transpose built.
func TestSymmetricOperatorSharesTranspose(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	e := mustNew(t, 3)
	defer e.Close()
	sym := symmetrize(testGraph(rng, 300, 300, 3000, false))
	if !slices.Equal(sym.Transpose().Idx, sym.Idx) {
		t.Fatal("test graph is not its own transpose")
	}
	unsorted := &graph.CSR{NumRows: sym.NumRows, NumCols: sym.NumCols, Ptr: sym.Ptr, Idx: slices.Clone(sym.Idx)}
	for v := 0; v < unsorted.NumRows; v++ { // reverse every row: still symmetric, no longer its own Transpose()
		slices.Reverse(unsorted.Idx[unsorted.Ptr[v]:unsorted.Ptr[v+1]])
	}
	weighted := &graph.CSR{NumRows: sym.NumRows, NumCols: sym.NumCols, Ptr: sym.Ptr, Idx: sym.Idx, Val: randVec(rng, len(sym.Idx))}
	for _, c := range []struct {
		name   string
		a      *graph.CSR
		shared bool
	}{
		{"symmetric", sym, true},
		{"asymmetric", testGraph(rng, 300, 300, 3000, false), false},
		{"rectangular", testGraph(rng, 300, 250, 3000, false), false},
		{"symmetric unsorted rows", unsorted, false},
		{"symmetric pattern, asymmetric weights", weighted, false},
		{"empty", &graph.CSR{NumRows: 4, NumCols: 4, Ptr: make([]int64, 5)}, true},
	} {
		op := e.Prepare(c.a)
		x, _ := paddedMatrix(rng, c.a.NumRows, 9, 0)
		got := dense.New(c.a.NumCols, 9)
		op.ApplyT(x, got, false)
		if shared := op.transposed() == c.a; shared != c.shared {
			t.Fatalf("%s: transpose shared %v, want %v", c.name, shared, c.shared)
		}
		want := dense.New(c.a.NumCols, 9)
		e.Prepare(c.a.Transpose()).Apply(x, want, false)
		for i := range want.Data {
			if got.Data[i] != want.Data[i] {
				t.Fatalf("%s: ApplyT[%d] = %v, Apply on the built transpose %v", c.name, i, got.Data[i], want.Data[i])
			}
		}
	}
}

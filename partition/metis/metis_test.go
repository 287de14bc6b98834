//go:build cgo

package metis

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/testdataset"
	"github.com/supergcn/supergcn/partition"
)

// TestSymAdjacency compares the fused helper with graph's Symmetrize,
// Dedup and RemoveSelfLoops, on the whole graph and on a row range.
func TestSymAdjacency(t *testing.T) {
	g := randomGraph(300, 6, 8)
	ref := graph.RemoveSelfLoops(graph.Dedup(graph.Symmetrize(g)))
	for _, r := range [][2]int{{0, 300}, {100, 170}, {5, 5}} {
		xadj, adj, err := symAdjacency(g, g.Transpose(), r[0], r[1])
		mustNoErr(t, err)
		for v := r[0]; v < r[1]; v++ {
			got := slices.Sorted(slices.Values(adj[xadj[v-r[0]]:xadj[v-r[0]+1]]))
			want := slices.Sorted(slices.Values(ref.Idx[ref.Ptr[v]:ref.Ptr[v+1]]))
			if !slices.Equal(got, want) {
				t.Fatalf("row %d: %v, want %v", v, got, want)
			}
		}
	}
}

// randomGraph is a directed graph of n nodes with up to 2·deg in-edges each,
// self-loops and duplicate edges included, rows unsorted.
func randomGraph(n, deg int, seed uint64) *graph.CSR {
	rng := rand.New(rand.NewPCG(seed, 1))
	var src, dst []int32
	for v := 0; v < n; v++ {
		for range rng.IntN(2*deg + 1) {
			src, dst = append(src, int32(rng.IntN(n))), append(dst, int32(v))
		}
		src, dst = append(src, int32(v)), append(dst, int32(v))
	}
	return graph.FromCOO(n, n, src, dst, nil)
}

func mustNoErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// cliqueRing is `cliques` cliques of `size` nodes, clique i joined to clique
// i+1 by one edge, node ids interleaved so the structure is not the id order.
func cliqueRing(cliques, size int) *graph.CSR {
	n := cliques * size
	id := func(c, j int) int32 { return int32(j*cliques + c) }
	var src, dst []int32
	add := func(a, b int32) { src, dst = append(src, a, b), append(dst, b, a) }
	for c := 0; c < cliques; c++ {
		for i := 0; i < size; i++ {
			for j := i + 1; j < size; j++ {
				add(id(c, i), id(c, j))
			}
		}
		add(id(c, 0), id((c+1)%cliques, 1))
	}
	return graph.FromCOO(n, n, src, dst, nil)
}

// TestMetisCliqueRing: METIS cuts only the ring edges between cliques.
func TestMetisCliqueRing(t *testing.T) {
	g := cliqueRing(8, 12)
	owner, err := Metis(g, 8, Options{Weights: WeightsNone})
	mustNoErr(t, err)
	st, err := partition.ComputeStats(g, owner, 8, nil)
	mustNoErr(t, err)
	if st.EdgeCut != 16 || st.NodeImbalance != 1 {
		t.Fatalf("cut %d arcs (want the 16 ring arcs), imbalance %.3f", st.EdgeCut, st.NodeImbalance)
	}
	again, err := Metis(g, 8, Options{Weights: WeightsNone})
	mustNoErr(t, err)
	if !slices.Equal(owner, again) {
		t.Fatal("same seed, different partition")
	}
}

func TestMetisArguments(t *testing.T) {
	g := cliqueRing(2, 4)
	if o, err := Metis(g, 1, Options{}); err != nil || slices.Max(o) != 0 || len(o) != 8 {
		t.Fatalf("parts=1: %v %v", o, err)
	}
	bad := []struct {
		name  string
		g     *graph.CSR
		parts int
		o     Options
	}{
		{"zero parts", g, 0, Options{}},
		{"non-square", &graph.CSR{NumRows: 2, NumCols: 3, Ptr: []int64{0, 0, 0}}, 2, Options{}},
		{"weights name", g, 2, Options{Weights: "edges"}},
		{"train mask missing", g, 2, Options{Weights: WeightsDegreeTrain}},
		{"imbalance", g, 2, Options{Imbalance: -0.5}},
	}
	for _, b := range bad {
		if _, err := Metis(b.g, b.parts, b.o); err == nil {
			t.Errorf("%s: accepted", b.name)
		}
	}
	// No edges: still a valid, balanced partition.
	empty := &graph.CSR{NumRows: 10, NumCols: 10, Ptr: make([]int64, 11)}
	o, err := Metis(empty, 3, Options{})
	mustNoErr(t, err)
	mustNoErr(t, partition.ValidateOwner(o, 10, 3))
}

// weightImbalance is max/avg over parts of the summed weight w.
func weightImbalance(owner []int32, parts int, w func(v int) float64) float64 {
	sum := make([]float64, parts)
	var tot float64
	for v, p := range owner {
		sum[p] += w(v)
		tot += w(v)
	}
	return slices.Max(sum) * float64(parts) / tot
}

// TestMetisCora: 8 parts of Cora are balanced under each weight scheme and
// cut far fewer edges than a random assignment.
func TestMetisCora(t *testing.T) {
	ds, err := graph.Load(testdataset.Dataset(t, "cora"), graph.LoadOptions{})
	mustNoErr(t, err)
	g := ds.Graph
	mask := ds.SplitMask()
	rnd, err := partition.ComputeStats(g, partition.Random(g.NumRows, 8, 1), 8, mask)
	mustNoErr(t, err)
	deg := func(v int) float64 { return float64(g.Degree(v) + 1) }
	train := func(v int) float64 { return float64(mask[v] & graph.InTrain) }
	for _, w := range []string{WeightsNone, WeightsDegree, WeightsDegreeTrain} {
		owner, err := Metis(g, 8, Options{Weights: w, TrainMask: mask, Seed: 3})
		mustNoErr(t, err)
		st, err := partition.ComputeStats(g, owner, 8, mask)
		mustNoErr(t, err)
		t.Logf("%-12s cut %5d arcs (random %d)  nodes %.3f  degree %.3f  train %.3f", w, st.EdgeCut, rnd.EdgeCut,
			st.NodeImbalance, weightImbalance(owner, 8, deg), weightImbalance(owner, 8, train))
		if st.EdgeCut*4 > rnd.EdgeCut {
			t.Errorf("%s: cut %d is not far below random's %d", w, st.EdgeCut, rnd.EdgeCut)
		}
		var imb float64
		switch w {
		case WeightsNone:
			imb = st.NodeImbalance
		case WeightsDegree:
			imb = weightImbalance(owner, 8, deg)
		case WeightsDegreeTrain:
			imb = max(weightImbalance(owner, 8, deg), weightImbalance(owner, 8, train))
		}
		if imb > 1.1 {
			t.Errorf("%s: imbalance %.3f of the balanced constraint", w, imb)
		}
	}
}

package graph

import (
	"strings"
	"testing"
)

// SplitEdges splits the undirected edges by the fractions and seed and
// removes the validation and test edges from the graph in both directions.
func TestSplitEdges(t *testing.T) {
	s, err := ParseGenSpec("nodes=500,degree=8,classes=4,feat=8,seed=2")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	var edges int
	for v := range ds.Graph.NumRows {
		for _, u := range ds.Graph.Idx[ds.Graph.Ptr[v]:ds.Graph.Ptr[v+1]] {
			if u < int32(v) {
				edges++
			}
		}
	}
	arcs := ds.Graph.NNZ()
	es, err := SplitEdges(ds, "random:0.8,0.1,0.1:4")
	if err != nil {
		t.Fatal(err)
	}
	nt, nv, nx := len(es.Train), len(es.Valid), len(es.Test)
	if nt != int(0.8*float64(edges)) || nv != int(0.1*float64(edges)) || nt+nv+nx != edges {
		t.Fatalf("%d edges split %d/%d/%d", edges, nt, nv, nx)
	}
	if got := ds.Graph.NNZ(); got != arcs-int64(2*(nv+nx)) {
		t.Fatalf("graph keeps %d of %d arcs, %d edges held out", got, arcs, nv+nx)
	}
	has := func(u, v int32) bool {
		for _, w := range ds.Graph.Idx[ds.Graph.Ptr[v]:ds.Graph.Ptr[v+1]] {
			if w == u {
				return true
			}
		}
		return false
	}
	for _, p := range append(es.Valid, es.Test...) {
		if has(p[0], p[1]) || has(p[1], p[0]) {
			t.Fatalf("held-out edge %v still in the graph", p)
		}
	}
	for _, p := range es.Train {
		if p[0] >= p[1] || !has(p[0], p[1]) || !has(p[1], p[0]) {
			t.Fatalf("training edge %v not in the graph both ways", p)
		}
	}
	again, _ := Generate(s)
	es2, _ := SplitEdges(again, "random:0.8,0.1,0.1:4")
	for i := range es.Test {
		if es.Test[i] != es2.Test[i] {
			t.Fatal("the same seed split differently")
		}
	}
	for _, bad := range []string{"public", "random:0.9,0.2", "random:0.8,0.1:x"} {
		if _, err := SplitEdges(ds, bad); err == nil || !strings.Contains(err.Error(), "random:TRAIN,VALID") {
			t.Errorf("%q: error %v", bad, err)
		}
	}
}

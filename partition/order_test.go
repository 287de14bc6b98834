package partition

import (
	"slices"
	"testing"

	"github.com/supergcn/supergcn/graph"
)

// cloneShard deep-copies the parts of s that Reorder changes.
func cloneShard(s *Shard) *Shard {
	c := *s
	c.Global, c.Labels, c.Split = slices.Clone(s.Global), slices.Clone(s.Labels), slices.Clone(s.Split)
	if x := graph.DenseData(s.Features); x != nil { // Reorder permutes dense rows in place
		c.Features = graph.DenseX(slices.Clone(x), len(s.Global), s.FeatDim)
	}
	l := *s.Local
	l.Ptr, l.Idx, l.Val = slices.Clone(l.Ptr), slices.Clone(l.Idx), slices.Clone(l.Val)
	c.Local = &l
	c.Remote = RemoteEdges{slices.Clone(s.Remote.Ptr), slices.Clone(s.Remote.Src), slices.Clone(s.Remote.Owner), slices.Clone(s.Remote.Val)}
	return &c
}

// orderShards: the parts of a random graph with isolated nodes, cut three
// ways with part 2 empty, and the whole graph.
func orderShards() []*Shard {
	ds := randomDataset(300, 5, 3, 11, false)
	// isolate nodes 0..19: drop every edge into or out of them
	g := ds.Graph
	var src, dst []int32
	for v := 0; v < g.NumRows; v++ {
		for _, u := range g.Idx[g.Ptr[v]:g.Ptr[v+1]] {
			if v >= 20 && u >= 20 {
				src, dst = append(src, u), append(dst, int32(v))
			}
		}
	}
	ds.Graph = graph.FromCOO(g.NumRows, g.NumCols, src, dst, nil)
	owner := make([]int32, ds.NumNodes())
	for v := range owner {
		owner[v] = int32(v % 2)
	}
	return []*Shard{Split(ds, owner, 0, 3), Split(ds, owner, 1, 3), Split(ds, owner, 2, 3), Split(ds, make([]int32, ds.NumNodes()), 0, 1)}
}

// TestReorder: every order is a permutation; Reorder keeps every node's
// data and every edge (as global ids, in row order) and the inverse
// permutation restores the shard exactly.
func TestReorder(t *testing.T) {
	for si, s := range orderShards() {
		for _, order := range NodeOrders() {
			perm, err := LocalOrder(s, order)
			if err != nil {
				t.Fatalf("shard %d %s: %v", si, order, err)
			}
			if err := CheckPermutation(perm, len(s.Global)); err != nil {
				t.Fatalf("shard %d %s: %v", si, order, err)
			}
			r := cloneShard(s)
			mustNoErr(t, r.Reorder(perm))
			for i, old := range perm {
				if r.Global[i] != s.Global[old] || r.Labels[i] != s.Labels[old] || r.Split[i] != s.Split[old] ||
					!slices.Equal(graph.DenseData(r.Features)[i*s.FeatDim:(i+1)*s.FeatDim], graph.DenseData(s.Features)[int(old)*s.FeatDim:(int(old)+1)*s.FeatDim]) {
					t.Fatalf("shard %d %s: node data of local %d (was %d) differs", si, order, i, old)
				}
				var got, want []int64
				for _, u := range r.Local.Idx[r.Local.Ptr[i]:r.Local.Ptr[i+1]] {
					got = append(got, r.Global[u])
				}
				for _, u := range s.Local.Idx[s.Local.Ptr[old]:s.Local.Ptr[old+1]] {
					want = append(want, s.Global[u])
				}
				if !slices.Equal(got, want) {
					t.Fatalf("shard %d %s: local row %d: %v, want %v", si, order, i, got, want)
				}
				if !slices.Equal(r.Remote.Src[r.Remote.Ptr[i]:r.Remote.Ptr[i+1]], s.Remote.Src[s.Remote.Ptr[old]:s.Remote.Ptr[old+1]]) {
					t.Fatalf("shard %d %s: remote row %d differs", si, order, i)
				}
			}
			if err := r.Local.Validate(); err != nil {
				t.Fatal(err)
			}
			inv := make([]int32, len(perm))
			for i, v := range perm {
				inv[v] = int32(i)
			}
			mustNoErr(t, r.Reorder(inv))
			if err := shardEqual(s, r, false); err != nil {
				t.Fatalf("shard %d %s: not restored: %v", si, order, err)
			}
		}
	}
}

// TestOrderProperties: degree puts the most-gathered nodes first; cluster
// keeps two disjoint cliques contiguous, the larger first; the orders are
// deterministic.
func TestOrderProperties(t *testing.T) {
	// cliques {0,2,4,6,8} and {1,3,5} (ids interleaved), node 9 isolated
	var src, dst []int32
	clique := func(ns ...int32) {
		for _, a := range ns {
			for _, b := range ns {
				if a != b {
					src, dst = append(src, a), append(dst, b)
				}
			}
		}
	}
	clique(0, 2, 4, 6, 8)
	clique(1, 3, 5)
	src, dst = append(src, 7), append(dst, 0) // 7 → 0 only
	ds := &graph.Dataset{Graph: graph.FromCOO(10, 10, src, dst, nil)}
	s := Split(ds, make([]int32, 10), 0, 1)
	perm, err := LocalOrder(s, OrderDegree)
	mustNoErr(t, err)
	deg := gatherCounts(s)
	for i := 1; i < len(perm); i++ {
		if deg[perm[i]] > deg[perm[i-1]] {
			t.Fatalf("degree order %v: gather count rises at %d", perm, i)
		}
	}
	perm, err = LocalOrder(s, OrderCluster)
	mustNoErr(t, err)
	if got := slices.Sorted(slices.Values(perm[:5])); !slices.Equal(got, []int32{0, 2, 4, 6, 8}) {
		t.Fatalf("cluster order %v: the 5-clique is not first", perm)
	}
	if got := slices.Sorted(slices.Values(perm[5:8])); !slices.Equal(got, []int32{1, 3, 5}) {
		t.Fatalf("cluster order %v: the 3-clique is not next", perm)
	}
	for _, o := range NodeOrders() {
		a, _ := LocalOrder(s, o)
		b, _ := LocalOrder(s, o)
		if !slices.Equal(a, b) {
			t.Fatalf("%s: not deterministic", o)
		}
	}
	if _, err := LocalOrder(s, "bogus"); err == nil {
		t.Fatal("unknown order accepted")
	}
}

// TestReorderBadPermutation: wrong length, repeats and out-of-range
// entries are errors, and the shard is left unchanged.
func TestReorderBadPermutation(t *testing.T) {
	s := orderShards()[0]
	n := len(s.Global)
	keep := cloneShard(s)
	bad := [][]int32{make([]int32, n-1), make([]int32, n), append(make([]int32, n-1), int32(n))}
	for i := range bad[1] {
		bad[1][i] = int32(i)
	}
	bad[1][n-1] = 0 // repeat
	for i, p := range bad {
		if err := s.Reorder(p); err == nil {
			t.Fatalf("permutation %d accepted", i)
		}
		if err := shardEqual(keep, s, false); err != nil {
			t.Fatalf("permutation %d changed the shard: %v", i, err)
		}
	}
}

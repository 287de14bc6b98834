package partition

import (
	"slices"
	"testing"

	"github.com/supergcn/supergcn/graph"
)

// TestSplitInvariants: across all parts every edge of the graph appears
// exactly once, as a local edge of its destination's part or as a remote
// edge carrying the source's true owner; owned nodes, features, labels and
// split bits are those of the dataset.
func TestSplitInvariants(t *testing.T) {
	for _, tc := range []struct{ n, deg, parts int }{{1, 2, 1}, {50, 3, 4}, {300, 6, 7}, {200, 0, 3}} {
		ds := randomDataset(tc.n, tc.deg, 3, uint64(tc.n), false)
		owner := Random(tc.n, tc.parts, 5)
		owner[0] = int32(tc.parts - 1) // slightly unbalanced on purpose
		g := ds.Graph
		mask := ds.SplitMask()
		// seen[k] counts how often edge k of g (row-major) was found.
		seen := make([]int, g.NNZ())
		for p := 0; p < tc.parts; p++ {
			sh := Split(ds, owner, p, tc.parts)
			if sh.Rank != p || sh.Ranks != tc.parts || sh.NumGlobalNodes != int64(tc.n) {
				t.Fatalf("part %d header %+v", p, sh)
			}
			var want []int64
			for v, q := range owner {
				if int(q) == p {
					want = append(want, int64(v))
				}
			}
			if !slices.Equal(sh.Global, want) {
				t.Fatalf("part %d owns %v, want %v", p, sh.Global, want)
			}
			if err := sh.Local.Validate(); err != nil {
				t.Fatal(err)
			}
			for i, gv := range sh.Global {
				v := int(gv)
				if !slices.Equal(graph.DenseData(sh.Features)[i*3:i*3+3], graph.DenseData(ds.Features)[v*3:v*3+3]) || sh.Labels[i] != ds.Labels[v] || sh.Split[i] != mask[v] {
					t.Fatalf("part %d node %d: data not copied", p, v)
				}
				row := g.Idx[g.Ptr[v]:g.Ptr[v+1]]
				used := make([]bool, len(row))
				find := func(u int32) {
					for k, x := range row {
						if x == u && !used[k] {
							used[k] = true
							seen[g.Ptr[v]+int64(k)]++
							return
						}
					}
					t.Fatalf("part %d node %d: edge from %d not in the graph (or listed twice)", p, v, u)
				}
				for _, lu := range sh.Local.Idx[sh.Local.Ptr[i]:sh.Local.Ptr[i+1]] {
					u := sh.Global[lu]
					if owner[u] != int32(p) {
						t.Fatalf("local edge from %d owned by %d", u, owner[u])
					}
					find(int32(u))
				}
				for k := sh.Remote.Ptr[i]; k < sh.Remote.Ptr[i+1]; k++ {
					u, q := sh.Remote.Src[k], sh.Remote.Owner[k]
					if q != owner[u] || int(q) == p {
						t.Fatalf("remote edge %d→%d says owner %d, true owner %d (part %d)", u, v, q, owner[u], p)
					}
					find(int32(u))
				}
			}
		}
		for k, c := range seen {
			if c != 1 {
				t.Fatalf("n=%d: edge %d seen %d times", tc.n, k, c)
			}
		}
	}
}

// TestSplitKeepsRowOrder: with sorted input rows, local and remote rows are sorted.
func TestSplitKeepsRowOrder(t *testing.T) {
	ds := randomDataset(200, 5, 0, 3, true)
	owner := Random(200, 3, 1)
	for p := 0; p < 3; p++ {
		sh := Split(ds, owner, p, 3)
		if graph.DenseData(sh.Features) != nil {
			t.Fatal("FeatDim 0 should give nil X")
		}
		for i := range sh.Global {
			if !slices.IsSorted(sh.Local.Idx[sh.Local.Ptr[i]:sh.Local.Ptr[i+1]]) ||
				!slices.IsSorted(sh.Remote.Src[sh.Remote.Ptr[i]:sh.Remote.Ptr[i+1]]) {
				t.Fatalf("part %d row %d not sorted", p, i)
			}
		}
	}
}

func TestValidateOwner(t *testing.T) {
	if err := ValidateOwner([]int32{0, 1, 2}, 3, 3); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		owner    []int32
		n, parts int
	}{{[]int32{0, 3}, 2, 3}, {[]int32{0, -1}, 2, 3}, {[]int32{0}, 2, 3}, {[]int32{0}, 1, 0}} {
		if ValidateOwner(c.owner, c.n, c.parts) == nil {
			t.Errorf("ValidateOwner(%v, %d, %d) accepted", c.owner, c.n, c.parts)
		}
	}
}

func TestRandomBalanced(t *testing.T) {
	o := Random(1003, 8, 42)
	cnt := make([]int, 8)
	for _, p := range o {
		cnt[p]++
	}
	if slices.Min(cnt) < 125 || slices.Max(cnt) > 126 {
		t.Fatalf("unbalanced: %v", cnt)
	}
	if !slices.Equal(o, Random(1003, 8, 42)) || slices.Equal(o, Random(1003, 8, 43)) {
		t.Fatal("seed does not determine the assignment")
	}
	if slices.IsSorted(o) {
		t.Fatal("not shuffled")
	}
}

// TestComputeStats checks every statistic on a hand-made graph.
func TestComputeStats(t *testing.T) {
	// 5 nodes, parts {0,1,2} -> 0, {3,4} -> 1. Edges u→v:
	// 0→1, 1→0, 2→1, 3→1, 3→2, 4→3, 0→4, 3→4, 2→2
	src := []int32{0, 1, 2, 3, 3, 4, 0, 3, 2}
	dst := []int32{1, 0, 1, 1, 2, 3, 4, 4, 2}
	g := graph.FromCOO(5, 5, src, dst, nil)
	owner := []int32{0, 0, 0, 1, 1}
	split := []uint8{graph.InTrain, 0, graph.InTrain, graph.InTrain | graph.InTest, 0}
	st, err := ComputeStats(g, owner, 2, split)
	mustNoErr(t, err)
	want := []PartStat{
		// part 0: in-edges 1→0 | 0→1 2→1 3→1 | 3→2 2→2: local 4, cut 2 (3→1, 3→2); inner: 0; boundary: 0 (0→4); halo {3}
		{Part: 0, Nodes: 3, LocalEdges: 4, CutEdges: 2, InnerNodes: 1, BoundaryNodes: 1, HaloRows: 1, TrainNodes: 2},
		// part 1: in-edges 4→3 | 0→4 3→4: local 2, cut 1; inner: 3; boundary: 3 (3→1); halo {0}
		{Part: 1, Nodes: 2, LocalEdges: 2, CutEdges: 1, InnerNodes: 1, BoundaryNodes: 1, HaloRows: 1, TrainNodes: 1},
	}
	if !slices.Equal(st.Parts, want) {
		t.Fatalf("got %+v\nwant %+v", st.Parts, want)
	}
	if st.EdgeCut != 3 || st.TotalHaloRows != 2 || st.NodeImbalance != 3/2.5 || st.EdgeImbalance != 6/4.5 {
		t.Fatalf("summary %+v", st)
	}
	if _, err := ComputeStats(g, owner[:4], 2, nil); err == nil {
		t.Fatal("short owner accepted")
	}
}

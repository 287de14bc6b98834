package dist

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/partition/metis"
)

// Shifts of every global id, so that the ids of a small graph lie above
// 2^32 (one with keyed arcs, one past them: 2^62 + n needs 63 bits).
const (
	shift33 = int64(5)<<32 + 7
	shift62 = int64(1) << 62
)

func TestBlockOfAbove2to32(t *testing.T) {
	vd := []int64{shift33, shift33 + 3, shift33 + 3, shift33 + 10, shift62}
	for v, want := range map[int64]int{shift33: 0, shift33 + 2: 0, shift33 + 3: 2, shift33 + 9: 2, shift33 + 10: 3, shift62 - 1: 3} {
		if got := blockOf(vd, v); got != want {
			t.Errorf("blockOf(%d) = %d, want %d", v, got, want)
		}
	}
}

func TestArcKeyBits(t *testing.T) {
	for _, c := range []struct {
		vd   []int64
		bits uint
		ok   bool
	}{
		{partition.NodeRanges64(1<<31, 4), 31, true},  // every graph of int32 ids
		{partition.NodeRanges64(1<<33, 64), 33, true}, // 27-bit local rows
		{partition.NodeRanges64(1<<40, 2), 40, false}, // 39 + 40 + 1 bits
		{[]int64{shift62, shift62 + 100}, 63, false},  // 63-bit columns
		{[]int64{shift33, shift33 + 1000}, 35, true},  // 10 + 35 + 1 bits
		{[]int64{0, 0}, 0, true},                      // no nodes
		{partition.NodeRanges64(1, 3), 0, true},       // one node
		{partition.NodeRanges64(math.MaxInt64, 1), 63, false},
	} {
		bits, ok := arcKeyBits(c.vd)
		if bits != c.bits || ok != c.ok {
			t.Errorf("arcKeyBits(%v) = %d, %v; want %d, %v", c.vd, bits, ok, c.bits, c.ok)
		}
	}
}

// readRaw reads what Read's reader for path makes of this rank's share,
// before build.
func readRaw(c comm.Comm, path string) (*raw, error) {
	src := &Source{Path: path}
	switch filepath.Ext(path) {
	case ".sgb":
		return readBinary(c, src)
	case ".graph":
		return readMetis(c, src)
	}
	return readEdgeList(c, src)
}

// shiftedRaw is a copy of r with every global id moved up by b.
func shiftedRaw(r *raw, b int64) *raw {
	s := *r
	add := func(x []int64) []int64 {
		y := make([]int64, len(x))
		for i, v := range x {
			y[i] = v + b
		}
		return y
	}
	s.src, s.dst, s.vd, s.n = add(r.src), add(r.dst), add(r.vd), r.n+int(b)
	return &s
}

// TestBuildIDs64: the rows built from arcs sent as keys and as pairs are
// the same, and so are those of the graph with its ids moved above 2^32
// (keyed) and above 2^62 (pairs), ids shifted; unweighted, weighted and a
// METIS input.
func TestBuildIDs64(t *testing.T) {
	tmp := t.TempDir()
	ds := genDataset(t, 500)
	sgb := filepath.Join(tmp, "g.sgb")
	if err := graph.WriteBinary(sgb, ds); err != nil {
		t.Fatal(err)
	}
	weighted := filepath.Join(tmp, "w.txt")
	var b strings.Builder
	g := ds.Graph
	for v := 0; v < g.NumRows; v++ {
		for _, u := range g.Idx[g.Ptr[v]:g.Ptr[v+1]] {
			fmt.Fprintf(&b, "%d %d %g\n", u, v, float32(1+(int(u)*7+v)%13)/4)
		}
	}
	if err := os.WriteFile(weighted, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mt := filepath.Join(tmp, "g.graph")
	writeMetis(t, mt, graph.Symmetrize(graph.Dedup(graph.RemoveSelfLoops(ds.Graph))), nil)
	for _, path := range []string{sgb, weighted, mt} {
		for _, p := range []int{1, 3} {
			err := comm.RunGroup(p, func(c comm.Comm) error {
				r, err := readRaw(c, path)
				if err != nil {
					return err
				}
				bits, keyed := arcKeyBits(r.vd)
				if !keyed {
					return fmt.Errorf("a graph of %d nodes is not keyed", r.n)
				}
				want, err := buildRows(c, shiftedRaw(r, 0), 0, bits, true)
				if err != nil {
					return err
				}
				pairs, err := buildRows(c, shiftedRaw(r, 0), 0, 0, false)
				if err != nil {
					return err
				}
				if err := sameRows(want, pairs, 0); err != nil {
					return fmt.Errorf("pairs: %v", err)
				}
				for _, s := range []int64{shift33, shift62} {
					sr := shiftedRaw(r, s)
					if _, keyed := arcKeyBits(sr.vd); keyed != (s == shift33) {
						return fmt.Errorf("shift %d: keyed %v", s, keyed)
					}
					got, err := build(c, sr, 0)
					if err != nil {
						return err
					}
					if err := sameRows(want, got, s); err != nil {
						return fmt.Errorf("shift %d: %v", s, err)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatalf("%s P=%d: %v", filepath.Base(path), p, err)
			}
		}
	}
}

// sameRows compares a rank's rows of b with those of a, ids moved by s.
func sameRows(a, b *Graph, s int64) error {
	adj := make([]int64, len(a.Adj))
	for i, u := range a.Adj {
		adj[i] = u + s
	}
	switch {
	case b.Lo != a.Lo+int(s) || b.Hi != a.Hi+int(s) || b.NumArcs != a.NumArcs:
		return fmt.Errorf("range [%d,%d) arcs %d, want [%d,%d) arcs %d", b.Lo, b.Hi, b.NumArcs, a.Lo+int(s), a.Hi+int(s), a.NumArcs)
	case !slices.Equal(a.Ptr, b.Ptr) || !slices.Equal(adj, b.Adj) || !slices.Equal(a.Val, b.Val):
		return fmt.Errorf("rows differ")
	}
	return nil
}

// An asymmetric METIS graph is the same error with its vertices above
// 2^62 (arcs sent as pairs), numbers shifted.
func TestBuildPairsAsymmetry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.graph")
	if err := os.WriteFile(path, []byte("4 3\n2 3\n1 3\n4\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{1, 2} {
		var msg [2]string
		for k, s := range []int64{0, shift62} {
			err := comm.RunGroup(p, func(c comm.Comm) error {
				r, err := readRaw(c, path)
				if err != nil {
					return err
				}
				_, err = build(c, shiftedRaw(r, s), 0)
				return err
			})
			if err == nil {
				t.Fatalf("P=%d shift %d: asymmetric graph accepted", p, s)
			}
			msg[k] = err.Error()
		}
		want := regexp.MustCompile(`vertex \d+ lists neighbour \d+, but vertex \d+ does not list \d+`).FindString(msg[0])
		if want == "" {
			t.Fatalf("P=%d: error %q", p, msg[0])
		}
		shifted := regexp.MustCompile(`\d+`).ReplaceAllStringFunc(want, func(x string) string {
			v, _ := strconv.ParseInt(x, 10, 64)
			return strconv.FormatInt(v+shift62, 10)
		})
		if !strings.Contains(msg[1], shifted) {
			t.Fatalf("P=%d: error %q, want %q", p, msg[1], shifted)
		}
	}
}

// TestRouteSplitAbove2to32: split ids above 2^32 reach their owners, and a
// node in two lists is named.
func TestRouteSplitAbove2to32(t *testing.T) {
	vd := []int64{shift33, shift33 + 4, shift33 + 4, shift33 + 9}
	names := [3]string{"train", "valid", "test"}
	mine := func(rank int) [3][]int64 {
		switch rank {
		case 0:
			return [3][]int64{{shift33 + 8, shift33}, nil, {shift33 + 3}}
		case 2:
			return [3][]int64{nil, {shift33 + 5, shift33 + 1}, nil}
		}
		return [3][]int64{}
	}
	got := make([][]uint8, 3)
	err := comm.RunGroup(3, func(c comm.Comm) error {
		var err error
		got[c.Rank()], err = routeSplit(c, vd, mine(c.Rank()), names)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]uint8{{1, 2, 0, 4}, {}, {0, 2, 0, 0, 1}}
	for r := range want {
		if !slices.Equal(got[r], want[r]) {
			t.Errorf("rank %d: split %v, want %v", r, got[r], want[r])
		}
	}
	err = comm.RunGroup(3, func(c comm.Comm) error {
		ids := mine(c.Rank())
		if c.Rank() == 1 {
			ids[2] = []int64{shift33 + 5}
		}
		_, err := routeSplit(c, vd, ids, names)
		return err
	})
	if want := fmt.Sprintf("test and valid both hold node %d", shift33+5); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
}

func TestAskOwnersAbove2to32(t *testing.T) {
	vd := []int64{shift62, shift62 + 2, shift62 + 5}
	err := comm.RunGroup(2, func(c comm.Comm) error {
		ids := []int64{shift62 + 1, shift62 + 4}
		if c.Rank() == 1 {
			ids = []int64{shift62, shift62 + 2, shift62 + 3}
		}
		ans, err := askOwners(c, vd, ids, func(i int) int64 { return int64(100*c.Rank() + i) })
		if err != nil {
			return err
		}
		want := []int64{1, 102}
		if c.Rank() == 1 {
			want = []int64{0, 100, 101}
		}
		if !slices.Equal(ans, want) {
			return fmt.Errorf("rank %d: answers %v, want %v", c.Rank(), ans, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// shiftedGraph is a copy of g (one rank's block) with every global id
// moved up by b and numNodes nodes.
func shiftedGraph(g *Graph, b int64, numNodes int) *Graph {
	h := *g
	h.VtxDist, h.Adj = slices.Clone(g.VtxDist), slices.Clone(g.Adj)
	for i := range h.VtxDist {
		h.VtxDist[i] += b
	}
	for i := range h.Adj {
		h.Adj[i] += b
	}
	h.Lo, h.Hi, h.NumNodes = g.Lo+int(b), g.Hi+int(b), numNodes
	return &h
}

// runShifted runs fn on p ranks on the graph at path, its ids moved up by
// b (numNodes as the graph's), and joins the owners in node order.
func runShifted(t *testing.T, path string, p int, b int64, fn func(c comm.Comm, g *Graph) ([]int32, error)) []int32 {
	t.Helper()
	return gatherOwners(t, path, p, func(c comm.Comm, g *Graph) ([]int32, error) {
		return fn(c, shiftedGraph(g, b, g.NumNodes))
	})
}

// TestLDGShiftedIDs: LDG places nodes by structure and id order only, so
// the graph with its ids above 2^32 gets the same parts.
func TestLDGShiftedIDs(t *testing.T) {
	mc := communityCase(t, 2000)
	ldg := func(c comm.Comm, g *Graph) ([]int32, error) { return LDG(c, g, 4, LDGOptions{ByDegree: true}) }
	for _, p := range []int{1, 3} {
		want := runShifted(t, mc.path, p, 0, ldg)
		for _, s := range []int64{shift33, shift62} {
			if got := runShifted(t, mc.path, p, s, ldg); !slices.Equal(got, want) {
				t.Errorf("P=%d shift %d: parts differ", p, s)
			}
		}
	}
}

// TestMultilevelShiftedIDs: the multilevel partitioner on a graph whose
// ids lie above 2^32 (clusters named by them, ghosts, owners asked) gives
// valid, balanced parts of about the cut of the same graph numbered from
// 0, with the coarsest level gathered at level 0 (no coarsening) or after
// contraction.
func TestMultilevelShiftedIDs(t *testing.T) {
	mc := communityCase(t, 3000)
	const parts = 6
	for _, coarse := range []int64{300, 100000} {
		for _, p := range []int{1, 3} {
			var init InitialPartitioner
			if metis.Linked {
				init = metis.PartWeighted
			}
			o := MultilevelOptions{Weights: WeightsDegreeTrain, Seed: 5, CoarseNodes: coarse, Initial: init}
			ml := func(c comm.Comm, g *Graph) ([]int32, error) { return Multilevel(c, g, parts, o) }
			ref := cutFraction(t, mc, runShifted(t, mc.path, p, 0, ml), parts)
			for _, s := range []int64{shift33, shift62} {
				owner := runShifted(t, mc.path, p, s, ml)
				what := fmt.Sprintf("coarse %d P=%d shift %d", coarse, p, s)
				checkBalance(t, mc, owner, parts, 0.05, what)
				cut := cutFraction(t, mc, owner, parts)
				t.Logf("%s: cut %.4f, ids from 0 %.4f", what, cut, ref)
				if cut > 1.2*ref+0.01 {
					t.Errorf("%s: cut %.4f, ids from 0 %.4f", what, cut, ref)
				}
			}
		}
	}
}

// TestWriteShiftedIDs: a partition directory of a graph whose ids lie
// above 2^32 or 2^62 (NumNodes past 2^31; the remote edges' parts packed
// beside the ids, or sent apart) loads (two parts a rank, merged) into the
// shards of the same graph numbered from 0, ids shifted.
func TestWriteShiftedIDs(t *testing.T) {
	ds := genDataset(t, 600)
	tmp := t.TempDir()
	path := filepath.Join(tmp, "g.sgb")
	if err := graph.WriteBinary(path, ds); err != nil {
		t.Fatal(err)
	}
	const p, parts = 2, 4
	info := partition.MetaInfo{Method: "random", Weights: "none", Source: "test"}
	dirs := map[int64]string{}
	for _, s := range []int64{0, shift33, shift62} {
		dirs[s] = filepath.Join(tmp, fmt.Sprint("d", s))
		err := comm.RunGroup(p, func(c comm.Comm) error {
			g, err := Read(c, Source{Path: path})
			if err != nil {
				return err
			}
			owner := RandomOwners(g, parts, 3)
			return Write(c, dirs[s], shiftedGraph(g, s, g.NumNodes+int(s)), owner, parts, WriteOptions{Info: info})
		})
		if err != nil {
			t.Fatalf("shift %d: %v", s, err)
		}
	}
	for _, s := range []int64{shift33, shift62} {
		vd := partition.NodeRanges64(int64(ds.NumNodes()), p)
		for i := range vd {
			vd[i] += s
		}
		if rc := newRemoteCodec(vd, parts, p); rc.packed != (s == shift33) {
			t.Fatalf("shift %d: remote entries packed %v", s, rc.packed)
		}
		m, err := partition.ReadMeta(dirs[s])
		if err != nil || m.NumNodes != int64(ds.NumNodes())+s {
			t.Fatalf("shift %d: meta %+v, %v", s, m, err)
		}
		for rank := range p {
			a, err := partition.Load(dirs[0], rank, p)
			if err != nil {
				t.Fatal(err)
			}
			b, err := partition.Load(dirs[s], rank, p)
			if err != nil {
				t.Fatal(err)
			}
			if err := sameShard(a, b, s); err != nil {
				t.Errorf("shift %d rank %d: %v", s, rank, err)
			}
		}
	}
}

// sameShard compares shard b with a, global ids moved by s.
func sameShard(a, b *partition.Shard, s int64) error {
	plus := func(x []int64) []int64 {
		y := make([]int64, len(x))
		for i, v := range x {
			y[i] = v + s
		}
		return y
	}
	switch {
	case b.NumGlobalNodes != a.NumGlobalNodes+s:
		return fmt.Errorf("%d global nodes, want %d", b.NumGlobalNodes, a.NumGlobalNodes+s)
	case !slices.Equal(b.Global, plus(a.Global)):
		return fmt.Errorf("global ids differ")
	case !slices.Equal(b.Local.Ptr, a.Local.Ptr) || !slices.Equal(b.Local.Idx, a.Local.Idx):
		return fmt.Errorf("local edges differ")
	case !slices.Equal(b.Remote.Ptr, a.Remote.Ptr) || !slices.Equal(b.Remote.Src, plus(a.Remote.Src)) || !slices.Equal(b.Remote.Owner, a.Remote.Owner):
		return fmt.Errorf("remote edges differ")
	case !slices.Equal(graph.DenseData(b.Features), graph.DenseData(a.Features)) || !slices.Equal(b.Labels, a.Labels) || !slices.Equal(b.Split, a.Split):
		return fmt.Errorf("node data differs")
	}
	return nil
}

// An edge list naming node 2^40 is refused before anything is allocated
// for its nodes: one line, naming the file and the remedy.
func TestReadIDsBeyondMemory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.txt")
	if err := os.WriteFile(path, []byte("0 1\n1 1099511627776\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := comm.RunGroup(2, func(c comm.Comm) error {
		_, err := Read(c, Source{Path: path})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), path+": 1099511627777 nodes on 2 ranks") || !strings.Contains(err.Error(), "use more ranks") {
		t.Fatalf("got %v", err)
	}
	if msg := (&AgreedError{Err: checkShare(path, 1<<40+1, 2)}).Error(); strings.Contains(msg, "\n") {
		t.Fatalf("error %q spans several lines", msg)
	}
	if err := checkShare(path, 1000, 4); err != nil {
		t.Fatal(err)
	}
}

func TestLocalLimits(t *testing.T) {
	if err := checkLocal(2, math.MaxInt32-10, 10); err != nil {
		t.Fatal(err)
	}
	if err := checkLocal(2, math.MaxInt32-10, 11); err == nil || !strings.Contains(err.Error(), "rank 2 holds 2147483637 nodes and 11 ghosts") ||
		!strings.Contains(err.Error(), "use more ranks") {
		t.Fatalf("got %v", err)
	}
	// Two ranks, two parts: cnt[rank·parts + part].
	if err := checkPartSizes([]int64{1 << 30, 5, 1<<30 - 1, 7}, 2); err != nil {
		t.Fatal(err)
	}
	if err := checkPartSizes([]int64{1 << 30, 5, 1 << 30, 7}, 2); err == nil || !strings.Contains(err.Error(), "part 0 has 2147483648 nodes") {
		t.Fatalf("got %v", err)
	}
	g := &Graph{NumNodes: 3_000_000_000, VtxDist: []int64{0, 3_000_000_000}, Ptr: []int64{0}}
	if _, _, _, err := LocalCSR32(comm.Single(), g); err == nil || !strings.Contains(err.Error(), "3000000000 nodes exceed the int32 node ids of the ParMETIS API") {
		t.Fatalf("got %v", err)
	}
	g = &Graph{NumNodes: 3, VtxDist: []int64{0, 3}, Hi: 3, Ptr: []int64{0, 1, 2, 2}, Adj: []int64{1, 0}}
	vd, ptr, adj, err := LocalCSR32(comm.Single(), g)
	if err != nil || !slices.Equal(vd, []int32{0, 3}) || !slices.Equal(ptr, []int32{0, 1, 2, 2}) || !slices.Equal(adj, []int32{1, 0}) {
		t.Fatalf("LocalCSR32: %v %v %v, %v", vd, ptr, adj, err)
	}
}

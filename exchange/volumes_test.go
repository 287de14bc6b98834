package exchange

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/partition"
)

// TestPlanNodePairAccountsEveryEdge: every cut edge of a node pair travels
// exactly once (post row of its source, or inside its destination's partial
// row, from its source's owner); rows go between the right nodes; the
// node-pair cover is no larger than the sum of the rank-pair covers.
func TestPlanNodePairAccountsEveryEdge(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	nodes := comm.BlockNodes(7, 3) // nodes {0,1,2} {3,4,5} {6}
	for trial := 0; trial < 200; trial++ {
		na, nb := rng.IntN(3), rng.IntN(3)
		if na == nb {
			continue
		}
		ra, rb := nodes.Ranks[na], nodes.Ranks[nb]
		m := rng.IntN(80)
		edges := make([]CutEdge, m)
		pairSrc := map[[2]int32][]int64{}
		pairDst := map[[2]int32][]int32{}
		for k := range edges {
			u, v := int64(rng.IntN(25)), int64(rng.IntN(25))
			e := CutEdge{Src: u, Dst: 1000 + v, SrcRank: int32(ra[int(u)%len(ra)]), DstRank: int32(rb[int(v)%len(rb)])}
			edges[k] = e
			key := [2]int32{e.SrcRank, e.DstRank}
			pairSrc[key] = append(pairSrc[key], e.Src)
			pairDst[key] = append(pairDst[key], int32(e.Dst))
		}
		paired := trial%2 == 1
		pl := PlanNodePairWith(edges, nodes, NodePairOptions{Paired: paired})
		if paired {
			for i := range pl.Post {
				if nodes.LocalIndex(int(pl.PostTo[i])) != nodes.LocalIndex(int(pl.PostFrom[i]))%len(rb) {
					t.Fatalf("paired: post row from %d to %d", pl.PostFrom[i], pl.PostTo[i])
				}
			}
			for i := range pl.Pre {
				if nodes.LocalIndex(int(pl.PreFrom[i])) != nodes.LocalIndex(int(pl.PreTo[i]))%len(ra) {
					t.Fatalf("paired: partial row from %d to %d", pl.PreFrom[i], pl.PreTo[i])
				}
			}
		}
		var rankCovers int64
		for key := range pairSrc {
			rankCovers += SplitCut(pairSrc[key], pairDst[key], ModeHybrid).Counts.Hybrid
		}
		if int64(pl.Rows()) > rankCovers {
			t.Fatalf("node cover %d > rank-pair covers %d", pl.Rows(), rankCovers)
		}
		if !slices.IsSorted(pl.Post) || !slices.IsSorted(pl.Pre) {
			t.Fatal("rows not ascending")
		}
		carried := map[CutEdge]int{}
		for _, e := range edges {
			if i, ok := slices.BinarySearch(pl.Post, e.Src); ok {
				if pl.PostFrom[i] != e.SrcRank || nodes.Node[pl.PostTo[i]] != nb {
					t.Fatalf("post row %d from %d to %d", e.Src, pl.PostFrom[i], pl.PostTo[i])
				}
				if pl.PostTo[i] != e.DstRank && !slices.Contains(pl.PostNeed[i], e.DstRank) {
					t.Fatalf("post row %d does not reach rank %d", e.Src, e.DstRank)
				}
				carried[e] = 1 // once, whatever the edge's multiplicity
			}
		}
		for i, v := range pl.Pre {
			if nodes.Node[pl.PreFrom[i]] != na || (!paired && !slices.ContainsFunc(pl.PreContr[i], func(c PartialContrib) bool { return c.Rank == pl.PreFrom[i] })) {
				t.Fatalf("partial row %d sent by %d", v, pl.PreFrom[i])
			}
			for _, c := range pl.PreContr[i] {
				for _, u := range c.Src {
					carried[CutEdge{Src: u, Dst: v, SrcRank: c.Rank, DstRank: pl.PreTo[i]}]++
				}
			}
		}
		want := map[CutEdge]int{}
		for _, e := range edges {
			want[e]++
		}
		for e, n := range want {
			if _, post := slices.BinarySearch(pl.Post, e.Src); post {
				n = 1 // a post row carries all parallel edges once
			}
			if carried[e] != n {
				t.Fatalf("trial %d: edge %+v carried %d times, want %d", trial, e, carried[e], n)
			}
		}
	}
}

// TestNodeVolumes: two-level inter-node rows never exceed flat ones, one
// node gives no inter-node rows, one rank per node gives flat's volume.
func TestNodeVolumes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	ds := randomDataset(rng, 300, 4, 2)
	const p = 6
	owner := ownerKinds(rng, 300, 0, p)["random"]
	load := func(r int) (*partition.Shard, error) { return partition.Split(ds, owner, r, p), nil }
	var flatTotal int64
	for _, perNode := range []int{1, 2, 3, 6} {
		nv, err := NodeVolumesOf(p, comm.BlockNodes(p, perNode), load)
		if err != nil {
			t.Fatal(err)
		}
		f, tl := nv.Exchange[ExchangeFlat].InterRows(), nv.Exchange[ExchangeTwoLevel].InterRows()
		total := f + sumRows(nv.Exchange[ExchangeFlat].Gather)
		if perNode == 1 {
			flatTotal = total
			if tl != f || nv.Exchange[ExchangeTwoLevel].IntraRows() != 0 {
				t.Fatalf("one rank per node: two-level %d (+%d intra), flat %d", tl, nv.Exchange[ExchangeTwoLevel].IntraRows(), f)
			}
		}
		if total != flatTotal {
			t.Fatalf("perNode %d: flat rows %d, want %d", perNode, total, flatTotal)
		}
		if tl > f || (perNode == p && (f != 0 || tl != 0)) {
			t.Fatalf("perNode %d: inter rows two-level %d, flat %d", perNode, tl, f)
		}
		if perNode == 3 && tl >= f {
			t.Fatalf("perNode 3: two-level saves nothing (%d vs %d)", tl, f)
		}
		if nv.Exchange[ExchangeTwoLevelPaired].InterRows() != tl || len(nv.Exchange[ExchangeTwoLevelPaired].Inter) > nv.Nodes*(nv.Nodes-1)*perNode {
			t.Fatalf("perNode %d: paired %d rows in %d messages, two-level %d rows", perNode, nv.Exchange[ExchangeTwoLevelPaired].InterRows(), len(nv.Exchange[ExchangeTwoLevelPaired].Inter), tl)
		}
		t.Logf("perNode %d: inter rows flat %d two-level %d, intra two-level %d, messages %d vs %d", perNode, f, tl, nv.Exchange[ExchangeTwoLevel].IntraRows(), len(nv.Exchange[ExchangeFlat].Inter), len(nv.Exchange[ExchangeTwoLevel].Inter))
	}
}

// TestPlanCodec: node-pair plans survive appendPlan/decodePlans; truncated
// or out-of-range messages are errors, not panics.
func TestPlanCodec(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	nodes := comm.BlockNodes(6, 3)
	var enc []int64
	var want []NodePairPlan
	for a := 0; a < 2; a++ {
		ra, rb := nodes.Ranks[a], nodes.Ranks[1-a]
		var edges []CutEdge
		for k := 0; k < 60; k++ {
			u, v := int64(rng.IntN(20)), int64(rng.IntN(20))
			edges = append(edges, CutEdge{Src: u, Dst: 100 + v, SrcRank: int32(ra[int(u)%3]), DstRank: int32(rb[int(v)%3])})
		}
		pl := PlanNodePairWith(edges, nodes, NodePairOptions{Paired: a == 1})
		enc = appendPlan(enc, a, &pl)
		want = append(want, pl)
	}
	plans := make([]*NodePairPlan, 2)
	if err := decodePlans(enc, plans, 6); err != nil {
		t.Fatal(err)
	}
	for a := range want {
		if got, w := appendPlan(nil, a, plans[a]), appendPlan(nil, a, &want[a]); !slices.Equal(got, w) {
			t.Fatalf("node %d: plan changed in the round trip", a)
		}
	}
	first := len(appendPlan(nil, 0, &want[0])) // a whole first plan is a valid message
	for cut := 1; cut < len(enc); cut += 7 {
		if cut == first {
			continue
		}
		if err := decodePlans(enc[:cut], make([]*NodePairPlan, 2), 6); err == nil {
			t.Fatalf("message cut at %d words decoded", cut)
		}
	}
	if err := decodePlans(enc, make([]*NodePairPlan, 2), 2); err == nil {
		t.Fatal("ranks outside [0, p) accepted")
	}
}

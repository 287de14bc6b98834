package exchange

import (
	"fmt"
	"slices"
	"sort"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/vcover"
)

// CutEdge is one cut edge as the two-level planner sees it: global source
// and destination ids, the ranks that own them, and its weight (read only
// with NodePairOptions.Weighted).
type CutEdge struct {
	Src     int64
	Dst     int64
	SrcRank int32
	DstRank int32
	W       float32
}

// NodePairPlan is the inter-node plan of one ordered node pair A → B (two
// different nodes). A minimum vertex cover of the bipartite graph between
// A's sources and B's destinations splits the pair's cut edges: an edge
// u→v is post-aggregated when u is in the cover (u's row crosses once, to
// one rank of B, which forwards it to the other ranks of B that need it),
// otherwise it is summed into the partial row of v (the ranks of A that own
// such sources send their partial sums to one rank of A, which adds them up
// and sends one row to v's owner).
//
// Traffic is spread over the ranks of both nodes: a post row leaves from
// its owner; a partial row arrives at its destination's owner. The other
// end is the rank needing (contributing to) the row whose position in its
// node is first at or after the partner's position (cyclically), so a row
// needed by (contributed by) one rank only needs no intra-node step. With
// NodePairOptions.Paired the other end is always the rank at the partner's
// position (modulo the node's size), needing the row or not: every rank
// then talks to one rank of each other node (k messages per node pair
// instead of up to k²), for more rows inside the nodes.
type NodePairPlan struct {
	Post     []int64   // global ids of the sources sent whole, ascending
	PostFrom []int32   // owner of Post[i] (sends it in the inter-node stage)
	PostTo   []int32   // rank of B receiving Post[i]
	PostNeed [][]int32 // other ranks of B that need Post[i] (forwarded by PostTo[i]), ascending

	Pre       []int64            // global ids of the destinations of partial rows, ascending
	PreTo     []int32            // owner of Pre[i] (receives it)
	PreFrom   []int32            // rank of A that reduces and sends partial row i (a contributor unless Paired)
	PreContr  [][]PartialContrib // the ranks of A with sources in partial row i, ascending
	EdgeCount int                // cut edges of the pair
}

// PartialContrib is one rank's part of a partial row: the sum of its
// sources (with the multiplicity of parallel edges, in edge order), each
// times its edge's weight W (nil: unweighted).
type PartialContrib struct {
	Rank int32
	Src  []int64
	W    []float32
}

// Rows returns the rows that cross between the nodes (the cover's size).
func (p *NodePairPlan) Rows() int { return len(p.Post) + len(p.Pre) }

// NodePairOptions selects how PlanNodePair assigns rows to rank pairs.
type NodePairOptions struct {
	// Paired sends every row between the ranks at the same position of the
	// two nodes (see NodePairPlan).
	Paired bool
	// Weighted records the edges' weights (CutEdge.W) in the partial
	// rows' contributions.
	Weighted bool
}

// PlanNodePair plans the cut edges of one ordered node pair (every edge's
// source on one node, every destination on another) over the node layout
// nodes. It is a pure, deterministic function of the edge list (its order
// fixes the summation order of partial rows), shared by the two-level
// exchange and NodeVolumesOf.
func PlanNodePair(edges []CutEdge, nodes *comm.Nodes) NodePairPlan {
	return PlanNodePairWith(edges, nodes, NodePairOptions{})
}

// PlanNodePairWith is PlanNodePair with options.
func PlanNodePairWith(edges []CutEdge, nodes *comm.Nodes, o NodePairOptions) NodePairPlan {
	src := make([]int64, len(edges))
	dst := make([]int64, len(edges))
	for k, e := range edges {
		src[k], dst[k] = e.Src, e.Dst
	}
	us, vs := sortedUnique(src), sortedUnique(dst)
	b, ui, vi := cutBipartite(src, dst, us, vs)
	inL, _, _ := vcover.MinVertexCover(b)

	pl := NodePairPlan{EdgeCount: len(edges)}
	srcOwner := make([]int32, len(us))
	dstOwner := make([]int32, len(vs))
	need := make([][]int32, len(us))
	contr := make([][]PartialContrib, len(vs))
	for k, e := range edges {
		i, j := ui[k], vi[k]
		srcOwner[i], dstOwner[j] = e.SrcRank, e.DstRank
		if inL[i] {
			need[i] = append(need[i], e.DstRank)
			continue
		}
		cs := contr[j]
		at := slices.IndexFunc(cs, func(c PartialContrib) bool { return c.Rank == e.SrcRank })
		if at < 0 {
			cs = append(cs, PartialContrib{Rank: e.SrcRank})
			at = len(cs) - 1
		}
		cs[at].Src = append(cs[at].Src, e.Src)
		if o.Weighted {
			cs[at].W = append(cs[at].W, e.W)
		}
		contr[j] = cs
	}
	for i, u := range us {
		if !inL[i] {
			continue
		}
		n := sortedUnique(need[i])
		to := cyclicPick(nodes, nodes.Node[n[0]], nodes.LocalIndex(int(srcOwner[i])), func(r int) bool {
			_, ok := slices.BinarySearch(n, int32(r))
			return ok || o.Paired
		})
		pl.Post = append(pl.Post, u)
		pl.PostFrom = append(pl.PostFrom, srcOwner[i])
		pl.PostTo = append(pl.PostTo, int32(to))
		pl.PostNeed = append(pl.PostNeed, slices.DeleteFunc(n, func(r int32) bool { return int(r) == to }))
	}
	for j, v := range vs {
		cs := contr[j]
		if len(cs) == 0 {
			continue
		}
		sort.Slice(cs, func(a, b int) bool { return cs[a].Rank < cs[b].Rank })
		from := cyclicPick(nodes, nodes.Node[cs[0].Rank], nodes.LocalIndex(int(dstOwner[j])), func(r int) bool {
			return o.Paired || slices.ContainsFunc(cs, func(c PartialContrib) bool { return int(c.Rank) == r })
		})
		pl.Pre = append(pl.Pre, v)
		pl.PreTo = append(pl.PreTo, dstOwner[j])
		pl.PreFrom = append(pl.PreFrom, int32(from))
		pl.PreContr = append(pl.PreContr, cs)
	}
	return pl
}

// cyclicPick returns the first rank r of node (in node order, starting at
// position start modulo the node's size) with ok(r). Some rank must be ok.
func cyclicPick(nodes *comm.Nodes, node, start int, ok func(r int) bool) int {
	rs := nodes.Ranks[node]
	for t := range rs {
		if r := rs[(start+t)%len(rs)]; ok(r) {
			return r
		}
	}
	panic(fmt.Sprintf("exchange: cyclicPick: no candidate on node %d", node))
}

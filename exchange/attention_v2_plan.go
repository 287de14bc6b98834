package exchange

import (
	"github.com/supergcn/supergcn/internal/par"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/vcover"
)

// GATv2's rows. A post row is the source's projected row z[u], one row
// each way (z[u] forward, its gradient backward), as GAT's but without the
// source terms. A pre row of destination v needs v's projected target row
// t[v] on the sender (GATv2's score reads the whole row, not GAT's scalar
// term): forward the owner sends t[v] and gets back the partial state (row
// sum, max and sum per head), backward it sends the scaled output
// gradient (and ⟨g, o⟩ per head) and gets back the gradient of t[v]. A pre
// row therefore moves two rows each way against a post row's one.
//
// Hybrid mode plans each pair by the vertex cover, weighted for this
// (splitCutV2): Kőnig's minimum cover (every vertex weighing 1), then
// every covered destination whose sources outside the cover number at
// most two is replaced by them (its weight 2 by at most 2 post rows, in
// ascending order, so later destinations see the sources added before),
// and when the cover still weighs more than sending every source whole
// (post), the pair is planned post. The cover is not a minimum-weight one
// (a minimum cut would give that), but it never weighs more than the
// pair's post plan.

// splitShardV2 is SplitShard for GATv2 (collective-free, per pair).
func splitShardV2(s *partition.Shard, mode Mode) ([]PairSplit, error) {
	if mode != ModeHybrid {
		return SplitShard(s, mode)
	}
	cuts, err := GroupCuts(s)
	if err != nil {
		return nil, err
	}
	splits := make([]PairSplit, s.Ranks)
	par.Blocks(s.Ranks, 0, func(q int) {
		if len(cuts.Src[q]) > 0 {
			splits[q] = splitCutV2(cuts.Src[q], cuts.Dst[q])
		}
	})
	return splits, nil
}

// splitCutV2 plans one pair of GATv2 in hybrid mode (see above).
func splitCutV2(src []int64, dst []int32) PairSplit {
	us, vs := sortedUnique(src), sortedUnique(dst)
	b, li, ri := cutBipartite(src, dst, us, vs)
	post, _, cover := vcover.MinVertexCover(b)
	ps := PairSplit{Counts: RowCounts{Pre: int64(len(vs)), Post: int64(len(us)), Hybrid: int64(cover)}}
	// the sources of every destination (right → left)
	ptr := make([]int, len(vs)+1)
	for _, j := range ri {
		ptr[j+1]++
	}
	for j := range vs {
		ptr[j+1] += ptr[j]
	}
	srcs, next := make([]int32, len(ri)), append([]int(nil), ptr[:len(vs)]...)
	for k, j := range ri {
		srcs[next[j]] = li[k]
		next[j]++
	}
	var open []int32
	nPost, nPre := 0, 0
	for j := range vs {
		open = open[:0]
		for _, i := range srcs[ptr[j]:ptr[j+1]] {
			if !post[i] && !containsI32(open, i) {
				open = append(open, i)
			}
		}
		switch {
		case len(open) == 0:
		case len(open) <= 2:
			for _, i := range open {
				post[i] = true
			}
		default:
			nPre++
		}
	}
	for _, p := range post {
		if p {
			nPost++
		}
	}
	if nPost+2*nPre >= len(us) {
		for i := range post {
			post[i] = true
		}
	}
	for i, u := range us {
		if post[i] {
			ps.Post = append(ps.Post, u)
		}
	}
	ps.splitPre(src, dst, nil, us, vs, post)
	return ps
}

func containsI32(a []int32, x int32) bool {
	for _, y := range a {
		if y == x {
			return true
		}
	}
	return false
}

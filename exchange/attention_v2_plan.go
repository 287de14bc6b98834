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
// A pre row also carries float32 scalars (max and sum a head forward,
// ⟨g, o⟩ a head backward) where a post row carries none, which weigh
// more the fewer bytes a coded row takes: its weight w against a post
// row's 1 is the bytes of both directions at the forward codec for 8 heads
// of 8 values (GAT's Cora shape; the plan is made before the layers'
// widths are known): 2.2 for float32 rows, 4 for int2 (preWeight).
//
// Hybrid mode plans each pair by the vertex cover, weighted for this
// (splitCutV2): Kőnig's minimum cover (every vertex weighing 1), then
// every covered destination whose sources outside the cover number at
// most w is replaced by them (in ascending order, so later destinations
// see the sources added before), and when the cover still weighs as much
// as sending every source whole (post), the pair is planned post. The
// cover is not a minimum-weight one (a minimum cut would give that), but
// it never weighs more than the pair's post plan.

// rowSizer is what preWeight reads of a codec (RowCodec, quant.Wire).
type rowSizer interface {
	Size(rows, width int) (data, param int)
}

// preWeight is a pre row's weight against a post row's for rows through
// codec (nil: float32), see above.
func preWeight(codec rowSizer) float64 {
	const heads, width = 8, 64
	row := 4.0 * width
	if codec != nil {
		d, p := codec.Size(1, width)
		row = float64(d + p)
	}
	return (4*row + 12*heads) / (2 * row)
}

// splitShardV2 is SplitShard for GATv2 with pre rows of weight w
// (collective-free, per pair).
func splitShardV2(s *partition.Shard, mode Mode, w float64) ([]PairSplit, error) {
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
			splits[q] = splitCutV2(cuts.Src[q], cuts.Dst[q], w)
		}
	})
	return splits, nil
}

// splitCutV2 plans one pair of GATv2 in hybrid mode, a pre row weighing
// w ≥ 1 (see above).
func splitCutV2(src []int64, dst []int32, w float64) PairSplit {
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
		case float64(len(open)) <= w:
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
	if float64(nPost)+w*float64(nPre) >= float64(len(us)) {
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

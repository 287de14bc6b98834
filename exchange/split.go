package exchange

import (
	"fmt"
	"slices"

	"github.com/supergcn/supergcn/internal/par"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/vcover"
)

// Mode chooses how the cut edges between two ranks are aggregated.
type Mode int

const (
	// ModeHybrid takes a minimum vertex cover C of the pair's bipartite cut
	// graph: an edge u→v is post-aggregated when u ∈ C, else pre-aggregated
	// (then v ∈ C). Rows sent = |C| ≤ min(#sources, #destinations).
	ModeHybrid Mode = iota
	// ModePost sends every needed source row once; the receiver aggregates it
	// into each destination.
	ModePost
	// ModePre has the sender sum its contributions to each destination and
	// send one partial row per destination.
	ModePre
)

func (m Mode) String() string {
	switch m {
	case ModeHybrid:
		return "hybrid"
	case ModePost:
		return "post"
	case ModePre:
		return "pre"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode parses "hybrid" (also ""), "post" or "pre".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "", "hybrid":
		return ModeHybrid, nil
	case "post":
		return ModePost, nil
	case "pre":
		return ModePre, nil
	}
	return 0, fmt.Errorf("exchange: unknown mode %q (want post, pre or hybrid)", s)
}

// RowCounts is the number of rows one rank sends another (per layer, one
// direction) under each mode.
type RowCounts struct {
	Pre    int64 `json:"pre"`    // distinct destinations of the cut edges
	Post   int64 `json:"post"`   // distinct sources
	Hybrid int64 `json:"hybrid"` // size of a minimum vertex cover
}

// Add returns the element-wise sum.
func (a RowCounts) Add(b RowCounts) RowCounts {
	return RowCounts{a.Pre + b.Pre, a.Post + b.Post, a.Hybrid + b.Hybrid}
}

// Of returns the count of mode m.
func (a RowCounts) Of(m Mode) int64 {
	switch m {
	case ModePost:
		return a.Post
	case ModePre:
		return a.Pre
	}
	return a.Hybrid
}

// PairSplit is the plan of one ordered pair (sender → receiver): which rows
// travel and what each one aggregates. The receiver's buffer block of the
// pair holds the Post rows first, then the Pre rows, in the orders below.
//
// An edge u→v of the pair is post-aggregated exactly when u is in Post;
// otherwise it is summed into the partial row of v.
type PairSplit struct {
	Post   []int64   // global ids of sources sent whole, ascending
	Pre    []int32   // receiver-local destinations of partial rows, ascending
	PrePtr []int64   // partial row i sums the sources PreSrc[PrePtr[i]:PrePtr[i+1]]
	PreSrc []int64   // global source ids (with multiplicity of parallel edges)
	PreW   []float32 // the weight of each PreSrc edge (nil: unweighted)
	Counts RowCounts
}

// Rows returns the number of rows the pair moves in its mode.
func (p *PairSplit) Rows() int { return len(p.Post) + len(p.Pre) }

// SplitCut plans one ordered pair from its cut edges src[k]→dst[k] (global
// source ids owned by the sender, receiver-local destinations); parallel
// edges count with multiplicity. It computes all three row counts whatever
// mode it plans for. It is a pure, deterministic function of the edge list,
// shared by the exchange (on the receiver) and `supergcn stats`.
func SplitCut(src []int64, dst []int32, mode Mode) PairSplit {
	return SplitCutWeighted(src, dst, nil, mode)
}

// SplitCutWeighted is SplitCut for weighted edges (w[k] the weight of edge
// k; nil: unweighted): the partial rows carry their edges' weights (PreW).
func SplitCutWeighted(src []int64, dst []int32, w []float32, mode Mode) PairSplit {
	us := sortedUnique(src)
	vs := sortedUnique(dst)
	b, _, _ := cutBipartite(src, dst, us, vs)
	inL, _, cover := vcover.MinVertexCover(b)
	ps := PairSplit{Counts: RowCounts{Pre: int64(len(vs)), Post: int64(len(us)), Hybrid: int64(cover)}}
	post := make([]bool, len(us))
	switch mode {
	case ModePost:
		for i := range post {
			post[i] = true
		}
	case ModeHybrid:
		copy(post, inL)
	}
	for i, u := range us {
		if post[i] {
			ps.Post = append(ps.Post, u)
		}
	}
	ps.splitPre(src, dst, w, us, vs, post)
	return ps
}

// splitPre builds the partial rows: for each destination (ascending) the
// sources of its edges that are not post-aggregated, in edge order.
func (ps *PairSplit) splitPre(src []int64, dst []int32, w []float32, us []int64, vs []int32, post []bool) {
	// Group edge indices by destination (stable counting sort).
	ptr := make([]int, len(vs)+1)
	vi := make([]int, len(dst))
	for k, v := range dst {
		i, _ := slices.BinarySearch(vs, v)
		vi[k] = i
		ptr[i+1]++
	}
	for i := range vs {
		ptr[i+1] += ptr[i]
	}
	order := make([]int, len(dst))
	next := slices.Clone(ptr[:len(vs)])
	for k, i := range vi {
		order[next[i]] = k
		next[i]++
	}
	ps.PrePtr = []int64{0}
	for i, v := range vs {
		start := len(ps.PreSrc)
		for _, k := range order[ptr[i]:ptr[i+1]] {
			j, _ := slices.BinarySearch(us, src[k])
			if !post[j] {
				ps.PreSrc = append(ps.PreSrc, src[k])
				if w != nil {
					ps.PreW = append(ps.PreW, w[k])
				}
			}
		}
		if len(ps.PreSrc) > start {
			ps.Pre = append(ps.Pre, v)
			ps.PrePtr = append(ps.PrePtr, int64(len(ps.PreSrc)))
		}
	}
}

// cutBipartite builds the bipartite graph sources (left, indices into us) →
// destinations (right, indices into vs), and returns with it every edge's
// left and right index.
func cutBipartite[D int32 | int64](src []int64, dst []D, us []int64, vs []D) (b *vcover.Bipartite, li, ri []int32) {
	b = &vcover.Bipartite{NL: len(us), NR: len(vs), Ptr: make([]int64, len(us)+1), Adj: make([]int32, len(src))}
	li, ri = make([]int32, len(src)), make([]int32, len(src))
	for k, u := range src {
		i, _ := slices.BinarySearch(us, u)
		li[k] = int32(i)
		b.Ptr[i+1]++
	}
	for i := range us {
		b.Ptr[i+1] += b.Ptr[i]
	}
	next := slices.Clone(b.Ptr[:len(us)])
	for k, i := range li {
		j, _ := slices.BinarySearch(vs, dst[k])
		ri[k] = int32(j)
		b.Adj[next[i]] = int32(j)
		next[i]++
	}
	return b, li, ri
}

func sortedUnique[T int32 | int64](a []T) []T {
	s := slices.Clone(a)
	slices.Sort(s)
	return slices.Compact(s)
}

// CutsByOwner groups the shard's remote in-edges by the rank that owns their
// source: for peer q, edges Src[q][k] → Dst[q][k] (global source id, local
// destination, and weight W[q][k] when the shard is weighted), in the
// shard's edge order.
type CutsByOwner struct {
	Src [][]int64
	Dst [][]int32
	W   [][]float32 // nil: unweighted
}

// GroupCuts splits s.Remote by source owner, checking owners and
// destinations are in range and that no edge claims the shard's own rank.
func GroupCuts(s *partition.Shard) (*CutsByOwner, error) {
	n := len(s.Global)
	cuts := &CutsByOwner{Src: make([][]int64, s.Ranks), Dst: make([][]int32, s.Ranks)}
	r := &s.Remote
	if len(r.Ptr) == 0 {
		return cuts, nil
	}
	weighted := s.Weighted()
	if len(r.Ptr) != n+1 || r.Ptr[0] != 0 || len(r.Src) != len(r.Owner) || int64(len(r.Src)) != r.Ptr[n] ||
		(weighted && len(r.Val) != len(r.Src)) {
		return nil, fmt.Errorf("exchange: rank %d: malformed remote edges (Ptr %d entries for %d nodes, %d sources, %d owners, %d weights)",
			s.Rank, len(r.Ptr), n, len(r.Src), len(r.Owner), len(r.Val))
	}
	if weighted {
		cuts.W = make([][]float32, s.Ranks)
	}
	for v := 0; v < n; v++ {
		for k := r.Ptr[v]; k < r.Ptr[v+1]; k++ {
			q := int(r.Owner[k])
			if q < 0 || q >= s.Ranks || q == s.Rank {
				return nil, fmt.Errorf("exchange: rank %d: remote edge %d→%d has owner %d", s.Rank, r.Src[k], s.Global[v], q)
			}
			cuts.Src[q] = append(cuts.Src[q], r.Src[k])
			cuts.Dst[q] = append(cuts.Dst[q], int32(v))
			if weighted {
				cuts.W[q] = append(cuts.W[q], r.Val[k])
			}
		}
	}
	return cuts, nil
}

// SplitShard plans every pair that sends to shard s (one PairSplit per
// sender rank; the shard's own entry is empty). It is what each rank of the
// exchange computes, and what `supergcn stats` computes for every part. The
// pairs are independent: they are split on the thread budget (par), the
// largest first so that no large pair starts last, and the result does not
// depend on the thread count.
func SplitShard(s *partition.Shard, mode Mode) ([]PairSplit, error) {
	cuts, err := GroupCuts(s)
	if err != nil {
		return nil, err
	}
	splits := make([]PairSplit, s.Ranks)
	peers := make([]int, 0, s.Ranks)
	for q := range splits {
		if len(cuts.Src[q]) > 0 {
			peers = append(peers, q)
		}
	}
	slices.SortStableFunc(peers, func(a, b int) int { return len(cuts.Src[b]) - len(cuts.Src[a]) })
	par.Blocks(len(peers), 0, func(i int) {
		q := peers[i]
		splits[q] = SplitCutWeighted(cuts.Src[q], cuts.Dst[q], cuts.weights(q), mode)
	})
	return splits, nil
}

// weights returns the weights of peer q's edges (nil: unweighted).
func (c *CutsByOwner) weights(q int) []float32 {
	if c.W == nil {
		return nil
	}
	return c.W[q]
}

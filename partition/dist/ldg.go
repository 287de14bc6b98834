package dist

import (
	"fmt"
	"math"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/internal/progress"
)

// LDGOptions tune LDG.
type LDGOptions struct {
	// Rounds: each rank streams its nodes in this many batches, learning the
	// parts its neighbours got on other ranks between batches (0 = 32).
	Rounds int
	// Passes: streams over the nodes (0 = 3). Later passes re-place every
	// node knowing where all its neighbours went (restreaming LDG, Nishimura
	// & Ugander, KDD 2013), which lowers the cut of an order without locality.
	Passes int
	// Imbalance is the allowed excess of a part's nodes over the average
	// (0 = 0.05); the capacity is ⌈N/parts⌉·(1+Imbalance).
	Imbalance float64
	// ByDegree balances the parts' sums of degree+1 (the aggregation work,
	// as METIS's degree weights) instead of their node counts.
	ByDegree bool
	// Progress reports the batches done (rank 0's, nil elsewhere).
	Progress *progress.Reporter
}

// LDG partitions the distributed graph into parts with linear deterministic
// greedy streaming (Stanton & Kliot, KDD 2012), which needs no global
// partitioner and no more memory than the rank's rows and the parts of its
// neighbours: every rank streams its nodes in ascending id, in Rounds
// batches (Passes times over, restreaming), and puts node v in the part maximising |N(v) ∩ P_i|·(1 − |P_i|/C)
// (ties: the smaller part, then the lower index; a node with no placed
// neighbour goes to the smallest part). Between batches the ranks add up the
// part sizes and send each new placement to the ranks holding a neighbour.
// Within a batch a rank counts its own placements ×P in the part sizes, as
// the other ranks place about as many. It returns the part of each of this
// rank's nodes; the result depends on the number of ranks. Collective.
func LDG(c comm.Comm, g *Graph, parts int, o LDGOptions) ([]int32, error) {
	rounds := o.Rounds
	if rounds <= 0 {
		rounds = 32
	}
	passes := o.Passes
	if passes <= 0 {
		passes = 3
	}
	imb := o.Imbalance
	if imb == 0 {
		imb = 0.05
	}
	var bad error
	if parts < 1 || imb < 0 || math.IsNaN(imb) {
		bad = fmt.Errorf("dist: ldg: %d parts, imbalance %g", parts, imb)
	}
	if err := agree(c, bad); err != nil {
		return nil, err
	}
	p, rank := c.Size(), c.Rank()
	n := g.Hi - g.Lo
	owner := make([]int32, n)
	for i := range owner {
		owner[i] = -1
	}
	if parts == 1 {
		for i := range owner {
			owner[i] = 0
		}
		return owner, nil
	}
	weight := func(i int) int64 { return 1 }
	total := int64(g.NumNodes)
	if o.ByDegree {
		weight = func(i int) int64 { return g.Ptr[i+1] - g.Ptr[i] + 1 }
		total = g.NumArcs + int64(g.NumNodes)
	}
	capacity := math.Ceil(float64(total)/float64(parts)) * (1 + imb)
	size := make([]int64, parts)  // global sizes at the start of the round
	delta := make([]int64, parts) // this rank's placements in the round
	remote := map[int64]int32{}   // parts of neighbours on other ranks
	score := make([]float64, parts)
	touched := make([]int32, 0, 64)
	lo, hi := int64(g.Lo), int64(g.Hi)
	partOf := func(u int64) int32 {
		if u >= lo && u < hi {
			return owner[u-lo]
		}
		if q, ok := remote[u]; ok {
			return q
		}
		return -1
	}
	stamp := make([]int, p)
	for i := range stamp {
		stamp[i] = -1
	}
	st := o.Progress.Start(fmt.Sprintf("dist: ldg, %d passes of %d batches", passes, rounds), int64(passes*rounds), "batches")
	defer st.Done()
	for step := 0; step < passes*rounds; step++ {
		st.Set(int64(step))
		round := step % rounds
		a, b := n*round/rounds, n*(round+1)/rounds
		for i := range delta {
			delta[i] = 0
		}
		for i := a; i < b; i++ {
			if old := owner[i]; old >= 0 { // a later pass: take v out first
				delta[old] -= weight(i)
				owner[i] = -1
			}
			touched = touched[:0]
			for _, u := range g.Adj[g.Ptr[i]:g.Ptr[i+1]] {
				if q := partOf(u); q >= 0 {
					if score[q] == 0 {
						touched = append(touched, q)
					}
					score[q]++
				}
			}
			best, bestScore := int32(-1), -1.0
			est := func(q int32) float64 { return float64(size[q] + int64(p)*delta[q]) }
			for _, q := range touched {
				s := score[q] * (1 - est(q)/capacity)
				if est(q) < capacity && (s > bestScore || (s == bestScore && (est(q) < est(best) || (est(q) == est(best) && q < best)))) {
					best, bestScore = q, s
				}
				score[q] = 0
			}
			if best < 0 || bestScore <= 0 {
				best = 0
				for q := int32(1); q < int32(parts); q++ {
					if est(q) < est(best) {
						best = q
					}
				}
			}
			owner[i] = best
			delta[best] += weight(i)
		}
		if err := c.AllreduceSumI64(delta); err != nil {
			return nil, err
		}
		for q := range size {
			size[q] += delta[q]
		}
		// Tell the ranks holding a neighbour of a node placed this round,
		// as (global id, part) pairs.
		counts := make([]int, p)
		for i := a; i < b; i++ {
			for _, u := range g.Adj[g.Ptr[i]:g.Ptr[i+1]] {
				if q := blockOf(g.VtxDist, u); q != rank && stamp[q] != i {
					stamp[q] = i
					counts[q] += 2
				}
			}
		}
		off := offsets(counts)
		send := make([]int64, off[p])
		for i := range stamp {
			stamp[i] = -1
		}
		for i := a; i < b; i++ {
			for _, u := range g.Adj[g.Ptr[i]:g.Ptr[i+1]] {
				if q := blockOf(g.VtxDist, u); q != rank && stamp[q] != i {
					stamp[q] = i
					send[off[q]], send[off[q]+1] = lo+int64(i), int64(owner[i])
					off[q] += 2
				}
			}
		}
		for i := range stamp {
			stamp[i] = -1
		}
		recv, _, err := exchange(c, send, counts, DefaultRoundBytes)
		if err != nil {
			return nil, err
		}
		for k := 0; k+1 < len(recv); k += 2 {
			remote[recv[k]] = int32(recv[k+1])
		}
	}
	return owner, nil
}

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
	rounds, passes, imb := o.Rounds, o.Passes, o.Imbalance
	if rounds <= 0 {
		rounds = 32
	}
	if passes <= 0 {
		passes = 3
	}
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
	s := newLDGState(c, g, parts, imb, o.ByDegree)
	if parts == 1 {
		for i := range s.owner {
			s.owner[i] = 0
		}
		return s.owner, nil
	}
	st := o.Progress.Start(fmt.Sprintf("dist: ldg, %d passes of %d batches", passes, rounds), int64(passes*rounds), "batches")
	defer st.Done()
	n := g.Hi - g.Lo
	for step := 0; step < passes*rounds; step++ {
		st.Set(int64(step))
		round := step % rounds
		a, b := n*round/rounds, n*(round+1)/rounds
		s.place(a, b)
		if err := c.AllreduceSumI64(s.delta); err != nil {
			return nil, err
		}
		for q := range s.size {
			s.size[q] += s.delta[q]
		}
		if err := s.announce(a, b); err != nil {
			return nil, err
		}
	}
	return s.owner, nil
}

// ldgState is one rank's side of LDG: its nodes' parts, the parts of their
// neighbours on other ranks, and the part sizes.
type ldgState struct {
	c        comm.Comm
	g        *Graph
	owner    []int32           // part of each of this rank's nodes (-1: not placed)
	remote   map[int64]int32   // parts of neighbours on other ranks
	size     []int64           // global sizes at the start of the round
	delta    []int64           // this rank's placements in the round
	score    []float64         // neighbours of the node being placed, per part
	touched  []int32           // the parts score holds
	weight   func(i int) int64 // a node's weight in the balance
	capacity float64
	stamp    []int // per rank: the last node announced to it
}

func newLDGState(c comm.Comm, g *Graph, parts int, imb float64, byDegree bool) *ldgState {
	s := &ldgState{c: c, g: g, owner: make([]int32, g.Hi-g.Lo), remote: map[int64]int32{},
		size: make([]int64, parts), delta: make([]int64, parts), score: make([]float64, parts),
		touched: make([]int32, 0, 64), weight: func(int) int64 { return 1 }, stamp: make([]int, c.Size())}
	for i := range s.owner {
		s.owner[i] = -1
	}
	total := int64(g.NumNodes)
	if byDegree {
		s.weight = func(i int) int64 { return g.Ptr[i+1] - g.Ptr[i] + 1 }
		total = g.NumArcs + int64(g.NumNodes)
	}
	s.capacity = math.Ceil(float64(total)/float64(parts)) * (1 + imb)
	s.resetStamps()
	return s
}

func (s *ldgState) resetStamps() {
	for i := range s.stamp {
		s.stamp[i] = -1
	}
}

// partOf returns the part of global node u as this rank knows it (-1: not
// placed, or not known yet).
func (s *ldgState) partOf(u int64) int32 {
	if lo := int64(s.g.Lo); u >= lo && u < int64(s.g.Hi) {
		return s.owner[u-lo]
	}
	if q, ok := s.remote[u]; ok {
		return q
	}
	return -1
}

// place puts this rank's nodes [a, b) into parts, counting its own
// placements in delta (×P in the estimated sizes).
func (s *ldgState) place(a, b int) {
	for i := range s.delta {
		s.delta[i] = 0
	}
	for i := a; i < b; i++ {
		if old := s.owner[i]; old >= 0 { // a later pass: take v out first
			s.delta[old] -= s.weight(i)
			s.owner[i] = -1
		}
		best := s.choose(i)
		s.owner[i] = best
		s.delta[best] += s.weight(i)
	}
}

// choose returns the part for node i: the one maximising its placed
// neighbours × (1 − estimated size / capacity) below the capacity (ties:
// the smaller, then the lower index), else the smallest part.
func (s *ldgState) choose(i int) int32 {
	g, p := s.g, int64(s.c.Size())
	s.touched = s.touched[:0]
	for _, u := range g.Adj[g.Ptr[i]:g.Ptr[i+1]] {
		if q := s.partOf(u); q >= 0 {
			if s.score[q] == 0 {
				s.touched = append(s.touched, q)
			}
			s.score[q]++
		}
	}
	best, bestScore := int32(-1), -1.0
	est := func(q int32) float64 { return float64(s.size[q] + p*s.delta[q]) }
	for _, q := range s.touched {
		sc := s.score[q] * (1 - est(q)/s.capacity)
		if est(q) < s.capacity && (sc > bestScore || (sc == bestScore && (est(q) < est(best) || (est(q) == est(best) && q < best)))) {
			best, bestScore = q, sc
		}
		s.score[q] = 0
	}
	if best < 0 || bestScore <= 0 {
		best = 0
		for q := int32(1); q < int32(len(s.size)); q++ {
			if est(q) < est(best) {
				best = q
			}
		}
	}
	return best
}

// announce tells the ranks holding a neighbour of a node placed in [a, b)
// its part, as (global id, part) pairs, and records what the others
// announce. Collective.
func (s *ldgState) announce(a, b int) error {
	g, p, rank, lo := s.g, s.c.Size(), s.c.Rank(), int64(s.g.Lo)
	// each (node, rank) pair once: visit calls fn(q, i) for the first
	// neighbour of node i on rank q
	visit := func(fn func(q, i int)) {
		for i := a; i < b; i++ {
			for _, u := range g.Adj[g.Ptr[i]:g.Ptr[i+1]] {
				if q := blockOf(g.VtxDist, u); q != rank && s.stamp[q] != i {
					s.stamp[q] = i
					fn(q, i)
				}
			}
		}
		s.resetStamps()
	}
	counts := make([]int, p)
	visit(func(q, _ int) { counts[q] += 2 })
	off := offsets(counts)
	send := make([]int64, off[p])
	visit(func(q, i int) {
		send[off[q]], send[off[q]+1] = lo+int64(i), int64(s.owner[i])
		off[q] += 2
	})
	recv, _, err := exchange(s.c, send, counts, DefaultRoundBytes)
	if err != nil {
		return err
	}
	for k := 0; k+1 < len(recv); k += 2 {
		s.remote[recv[k]] = int32(recv[k+1])
	}
	return nil
}

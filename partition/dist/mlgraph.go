package dist

import (
	"fmt"
	"math"
	"slices"

	"github.com/supergcn/supergcn/comm"
	imix "github.com/supergcn/supergcn/internal/mix"
)

// mlGraph is one rank's block of one level of the multilevel hierarchy: the
// nodes [vd[rank], vd[rank+1]) of a node- and arc-weighted undirected graph
// distributed by ranges, with the rows in local indices: an index below n
// is a local node, n+j is ghost j, the j-th of the other ranks' nodes that
// the rows reach (ghost holds their global ids, ascending, hence grouped by
// rank). Offsets, weights and global ids are int64; local indices are
// int32, so a rank's nodes and ghosts together stay below 2^31.
type mlGraph struct {
	rank      int
	vd        []int64
	n         int
	ptr       []int64 // n+1
	adj       []int32 // local indices
	ew        []int64 // arc weights; nil: every arc weighs 1
	ncon      int
	vw        []int64 // n×ncon node weights
	ghost     []int64 // global ids of the ghosts, ascending
	ghostRank []int32 // the rank owning each ghost
	nodes     int64   // over all ranks
	arcs      int64
	edgeW     int64   // the arc weights' sum over all ranks, halved: the edges' weight
	total     []int64 // ncon weight sums over all ranks
}

// newMLGraph builds a level from rows whose arcs' columns are global ids,
// col(0), …, col(arcs-1) (read twice, never kept). Every rank gets an
// error naming the lowest rank whose nodes and ghosts exceed the int32
// local indices. Collective.
func newMLGraph(c comm.Comm, vd []int64, ptr []int64, arcs int, col func(k int) int64, ew []int64, ncon int, vw []int64) (*mlGraph, error) {
	rank := c.Rank()
	lo, hi := vd[rank], vd[rank+1]
	l := &mlGraph{rank: rank, vd: vd, n: int(hi - lo), ptr: ptr, ew: ew, ncon: ncon, vw: vw}
	l.ghost = ghostsOf(arcs, col, lo, hi)
	if err := agree(c, checkLocal(rank, l.n, len(l.ghost))); err != nil {
		return nil, err
	}
	l.ghostRank = make([]int32, len(l.ghost))
	q := 0
	for j, u := range l.ghost {
		for vd[q+1] <= u {
			q++
		}
		l.ghostRank[j] = int32(q)
	}
	l.adj = make([]int32, arcs)
	for k := range l.adj {
		if u := col(k); u >= lo && u < hi {
			l.adj[k] = int32(u - lo)
		} else {
			j, _ := slices.BinarySearch(l.ghost, u)
			l.adj[k] = int32(l.n + j)
		}
	}
	sums := make([]int64, 3+ncon)
	sums[0], sums[1], sums[2] = int64(l.n), int64(arcs), int64(arcs)
	if ew != nil {
		sums[2] = 0
		for _, w := range ew {
			sums[2] += w
		}
	}
	for i := 0; i < l.n; i++ {
		for k := 0; k < ncon; k++ {
			sums[3+k] += vw[i*ncon+k]
		}
	}
	if err := c.AllreduceSumI64(sums); err != nil {
		return nil, err
	}
	l.nodes, l.arcs, l.edgeW, l.total = sums[0], sums[1], sums[2]/2, sums[3:]
	return l, nil
}

// checkLocal refuses a rank of n nodes and ghosts ghosts when they exceed
// the int32 local indices.
func checkLocal(rank, n, ghosts int) error {
	if int64(n)+int64(ghosts) <= math.MaxInt32 {
		return nil
	}
	return fmt.Errorf("dist: multilevel: rank %d holds %d nodes and %d ghosts (other ranks' neighbours), more than the 2^31-1 local indices of a rank: use more ranks",
		rank, n, ghosts)
}

// ghostsOf returns the distinct ids col(k), k < arcs, outside [lo, hi),
// ascending, in a slice of their size (the level keeps it). They are
// collected in a hash set: a copy of every remote entry would cost more.
func ghostsOf(arcs int, col func(k int) int64, lo, hi int64) []int64 {
	var set idSet
	for k := 0; k < arcs; k++ {
		if u := col(k); u < lo || u >= hi {
			set.add(u)
		}
	}
	return set.sorted()
}

// idSet is an open-addressing hash set of ids ≥ 0, doubled when half full.
type idSet struct {
	slots []int64 // -1: empty
	n     int
}

// add puts x into the set.
func (s *idSet) add(x int64) {
	if 2*(s.n+1) > len(s.slots) {
		s.grow()
	}
	mask := len(s.slots) - 1
	i := int(mix(0, x)) & mask
	for s.slots[i] != x {
		if s.slots[i] < 0 {
			s.slots[i] = x
			s.n++
			return
		}
		i = (i + 1) & mask
	}
}

// grow doubles the table (at least 64 slots) and puts the ids back.
func (s *idSet) grow() {
	old := s.slots
	s.slots = make([]int64, max(64, 2*len(old)))
	for i := range s.slots {
		s.slots[i] = -1
	}
	s.n = 0
	for _, x := range old {
		if x >= 0 {
			s.add(x)
		}
	}
}

// sorted returns the ids, ascending.
func (s *idSet) sorted() []int64 {
	out := make([]int64, 0, s.n)
	for _, x := range s.slots {
		if x >= 0 {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

// levelZero is the finest level: g's rows with unit arc weights and the
// node weights of scheme (as VertexWeights; none: every node weighs 1).
func levelZero(c comm.Comm, g *Graph, scheme string) (*mlGraph, error) {
	ncon, w32, err := VertexWeights(c, g, scheme)
	if err != nil {
		return nil, err
	}
	n := g.Hi - g.Lo
	vw := make([]int64, n*ncon)
	for i := range vw {
		vw[i] = 1
		if w32 != nil {
			vw[i] = int64(w32[i])
		}
	}
	return newMLGraph(c, slices.Clone(g.VtxDist), g.Ptr, len(g.Adj), func(k int) int64 { return g.Adj[k] }, nil, ncon, vw) // ptr is only read
}

// gid returns the global id of local index i.
func (l *mlGraph) gid(i int) int64 {
	if i < l.n {
		return l.vd[l.rank] + int64(i)
	}
	return l.ghost[i-l.n]
}

// arcW returns the weight of arc a.
func (l *mlGraph) arcW(a int64) int64 {
	if l.ew == nil {
		return 1
	}
	return l.ew[a]
}

// syncGhosts sends get(v) of the local nodes v in changed to the ranks
// that hold v as a ghost, as (global id, value) pairs, and passes what
// arrives to set(j, value) for ghost j. Collective.
func (l *mlGraph) syncGhosts(c comm.Comm, changed []int32, get func(v int32) int64, set func(j int, x int64)) error {
	p := c.Size()
	counts := make([]int, p)
	stamp := make([]int32, p)
	for i := range stamp {
		stamp[i] = -1
	}
	each := func(fn func(q int, v int32)) {
		for _, v := range changed {
			for _, u := range l.adj[l.ptr[v]:l.ptr[v+1]] {
				if int(u) >= l.n {
					if q := l.ghostRank[int(u)-l.n]; stamp[q] != v {
						stamp[q] = v
						fn(int(q), v)
					}
				}
			}
		}
		for i := range stamp {
			stamp[i] = -1
		}
	}
	each(func(q int, v int32) { counts[q] += 2 })
	off := offsets(counts)
	send := make([]int64, off[p])
	each(func(q int, v int32) {
		send[off[q]], send[off[q]+1] = l.gid(int(v)), get(v)
		off[q] += 2
	})
	recv, _, err := exchange(c, send, counts, DefaultRoundBytes)
	if err != nil {
		return err
	}
	for k := 0; k+1 < len(recv); k += 2 {
		if j, ok := slices.BinarySearch(l.ghost, recv[k]); ok {
			set(j, recv[k+1])
		}
	}
	return nil
}

// askOwners sends each of ids (ascending global ids of the distribution vd)
// to the rank owning it, which answers answer(id - its first id); the
// answers come back in ids' order. Collective.
func askOwners(c comm.Comm, vd []int64, ids []int64, answer func(i int) int64) ([]int64, error) {
	p := c.Size()
	counts := make([]int, p)
	send := make([]int64, len(ids))
	q := 0
	for k, id := range ids {
		for vd[q+1] <= id {
			q++
		}
		counts[q]++
		send[k] = id
	}
	recv, rcounts, err := exchange(c, send, counts, DefaultRoundBytes)
	if err != nil {
		return nil, err
	}
	lo, hi := vd[c.Rank()], vd[c.Rank()+1]
	var bad error
	for k, id := range recv {
		if id < lo || id >= hi {
			bad = fmt.Errorf("dist: multilevel: rank %d asked for node %d, outside [%d,%d)", c.Rank(), id, lo, hi)
			continue
		}
		recv[k] = answer(int(id - lo))
	}
	if err := agree(c, bad); err != nil {
		return nil, err
	}
	back, _, err := exchange(c, recv, rcounts, DefaultRoundBytes)
	return back, err
}

// uniqueSorted returns the distinct values of s, ascending, in a slice of
// their size (s is kept).
func uniqueSorted(s []int64) []int64 {
	u := slices.Clone(s)
	slices.Sort(u)
	return slices.Clone(slices.Compact(u))
}

// mix is a seeded hash for deterministic tie-breaking (SplitMix64's step
// and finaliser).
func mix(seed uint64, x int64) uint64 {
	return imix.Mix64(seed + uint64(x)*0x9e3779b97f4a7c15 + 0x9e3779b97f4a7c15)
}

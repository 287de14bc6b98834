package dist

import (
	"fmt"
	"slices"

	"github.com/supergcn/supergcn/comm"
	imix "github.com/supergcn/supergcn/internal/mix"
)

// mlGraph is one rank's block of one level of the multilevel hierarchy: the
// nodes [vd[rank], vd[rank+1]) of a node- and arc-weighted undirected graph
// distributed by ranges, with the rows in local indices: an index below n
// is a local node, n+j is ghost j, the j-th of the other ranks' nodes that
// the rows reach (ghost holds their global ids, ascending, hence grouped by
// rank). Offsets and weights are int64; node ids are int32, as in Graph.
type mlGraph struct {
	rank      int
	vd        []int32
	n         int
	ptr       []int64 // n+1
	adj       []int32 // local indices
	ew        []int64 // arc weights; nil: every arc weighs 1
	ncon      int
	vw        []int64 // n×ncon node weights
	ghost     []int32 // global ids of the ghosts, ascending
	ghostRank []int32 // the rank owning each ghost
	nodes     int64   // over all ranks
	arcs      int64
	edgeW     int64   // the arc weights' sum over all ranks, halved: the edges' weight
	total     []int64 // ncon weight sums over all ranks
}

// newMLGraph builds a level from rows in global ids; gadj is converted to
// local indices in place. Collective.
func newMLGraph(c comm.Comm, vd []int32, ptr []int64, gadj []int32, ew []int64, ncon int, vw []int64) (*mlGraph, error) {
	rank := c.Rank()
	lo, hi := vd[rank], vd[rank+1]
	l := &mlGraph{rank: rank, vd: vd, n: int(hi - lo), ptr: ptr, adj: gadj, ew: ew, ncon: ncon, vw: vw}
	remote := 0
	for _, u := range gadj {
		if u < lo || u >= hi {
			remote++
		}
	}
	ghost := make([]int32, 0, remote)
	for _, u := range gadj {
		if u < lo || u >= hi {
			ghost = append(ghost, u)
		}
	}
	slices.Sort(ghost)
	l.ghost = slices.Clip(slices.Compact(ghost))
	l.ghostRank = make([]int32, len(l.ghost))
	q := 0
	for j, u := range l.ghost {
		for vd[q+1] <= u {
			q++
		}
		l.ghostRank[j] = int32(q)
	}
	for k, u := range gadj {
		if u >= lo && u < hi {
			gadj[k] = u - lo
		} else {
			j, _ := slices.BinarySearch(l.ghost, u)
			gadj[k] = int32(l.n + j)
		}
	}
	sums := make([]int64, 3+ncon)
	sums[0], sums[1], sums[2] = int64(l.n), int64(len(gadj)), int64(len(gadj))
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
	vd := make([]int32, len(g.VtxDist))
	copy(vd, g.VtxDist)
	return newMLGraph(c, vd, g.Ptr, slices.Clone(g.Adj), nil, ncon, vw) // ptr is only read
}

// gid returns the global id of local index i.
func (l *mlGraph) gid(i int) int32 {
	if i < l.n {
		return l.vd[l.rank] + int32(i)
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

// syncGhosts sends val[v] of the local nodes in changed to the ranks that
// hold v as a ghost and stores what arrives in val[n+j]. Collective.
func (l *mlGraph) syncGhosts(c comm.Comm, val []int32, changed []int32) error {
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
	each(func(q int, v int32) { counts[q]++ })
	off := offsets(counts)
	send := make([]int64, off[p])
	each(func(q int, v int32) {
		send[off[q]] = int64(l.gid(int(v)))<<32 | int64(uint32(val[v]))
		off[q]++
	})
	recv, _, err := exchange(c, send, counts, DefaultRoundBytes)
	if err != nil {
		return err
	}
	for _, x := range recv {
		j, ok := slices.BinarySearch(l.ghost, int32(x>>32))
		if ok {
			val[l.n+j] = int32(uint32(x))
		}
	}
	return nil
}

// askOwners sends each of ids (ascending global ids of the distribution vd)
// to the rank owning it, which answers answer(id - its first id); the
// answers come back in ids' order. Collective.
func askOwners(c comm.Comm, vd []int32, ids []int32, answer func(i int) int64) ([]int64, error) {
	p := c.Size()
	counts := make([]int, p)
	send := make([]int64, len(ids))
	q := 0
	for k, id := range ids {
		for vd[q+1] <= id {
			q++
		}
		counts[q]++
		send[k] = int64(id)
	}
	recv, rcounts, err := exchange(c, send, counts, DefaultRoundBytes)
	if err != nil {
		return nil, err
	}
	lo := int64(vd[c.Rank()])
	var bad error
	for k, id := range recv {
		if id < lo || id >= int64(vd[c.Rank()+1]) {
			bad = fmt.Errorf("dist: multilevel: rank %d asked for node %d, outside [%d,%d)", c.Rank(), id, lo, vd[c.Rank()+1])
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

// uniqueSorted returns the distinct values of s, ascending (s is kept).
func uniqueSorted(s []int32) []int32 {
	u := slices.Clone(s)
	slices.Sort(u)
	return slices.Clip(slices.Compact(u))
}

// mix is a seeded hash for deterministic tie-breaking (SplitMix64's step
// and finaliser).
func mix(seed uint64, x int64) uint64 {
	return imix.Mix64(seed + uint64(x)*0x9e3779b97f4a7c15 + 0x9e3779b97f4a7c15)
}

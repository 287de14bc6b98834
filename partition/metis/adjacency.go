package metis

import (
	"fmt"
	"math"

	"github.com/supergcn/supergcn/graph"
)

// symAdjacency returns rows [lo, hi) of the undirected, loop-free,
// duplicate-free version of g (u–v whenever u→v or v→u) in METIS form:
// xadj has hi-lo+1 offsets starting at 0 and adj holds global node ids.
// t must be g.Transpose() (the out-neighbours). Two passes over the rows
// (count, then fill) with one marker array of g.NumRows entries: no sort, no
// intermediate CSR, and adj allocated at its exact size.
//
// METIS and ParMETIS index with int32 (idx_t / SCOTCH_Num): the range's
// symmetric entry count must stay below 2^31, otherwise an error says so.
func symAdjacency(g, t *graph.CSR, lo, hi int) (xadj, adj []int32, err error) {
	mark := make([]int32, g.NumRows)
	// visit calls f(u) once for each distinct neighbour u != v of v.
	visit := func(v int, f func(u int32)) {
		v32 := int32(v)
		for _, c := range [2]*graph.CSR{g, t} {
			for _, u := range c.Idx[c.Ptr[v]:c.Ptr[v+1]] {
				if u != v32 && mark[u] != v32 {
					mark[u] = v32
					f(u)
				}
			}
		}
	}
	reset := func() {
		for i := range mark {
			mark[i] = -1
		}
	}
	reset()
	var total int64
	for v := lo; v < hi; v++ {
		visit(v, func(int32) { total++ })
	}
	if total > math.MaxInt32 {
		return nil, nil, fmt.Errorf("partition: the symmetrized graph has %d adjacency entries in nodes [%d,%d), "+
			"beyond the 2^31-1 that METIS's 32-bit idx_t can index", total, lo, hi)
	}
	reset()
	xadj = make([]int32, hi-lo+1)
	adj = make([]int32, 0, total)
	for v := lo; v < hi; v++ {
		visit(v, func(u int32) { adj = append(adj, u) })
		xadj[v-lo+1] = int32(len(adj))
	}
	return xadj, adj, nil
}

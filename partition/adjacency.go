package partition

import (
	"fmt"
	"math"

	"github.com/supergcn/supergcn/graph"
)

// checkSquare rejects adjacencies METIS cannot take.
func checkSquare(g *graph.CSR) error {
	if g == nil {
		return fmt.Errorf("partition: nil graph")
	}
	if g.NumRows != g.NumCols {
		return fmt.Errorf("partition: adjacency is %d×%d, want square", g.NumRows, g.NumCols)
	}
	if len(g.Ptr) != g.NumRows+1 {
		return fmt.Errorf("partition: adjacency has len(Ptr)=%d, want %d", len(g.Ptr), g.NumRows+1)
	}
	return nil
}

// symAdjacency returns rows [lo, hi) of the undirected, loop-free,
// duplicate-free version of g (u–v whenever u→v or v→u) in METIS form:
// xadj has hi-lo+1 offsets starting at 0 and adj holds global node ids.
// t must be g.Transpose() (the out-neighbours). It is O(nnz of the rows)
// with one marker array of g.NumRows entries: no sort, no intermediate CSR.
//
// METIS and ParMETIS index with int32 (idx_t / SCOTCH_Num): the range's
// symmetric entry count must stay below 2^31, otherwise an error says so.
func symAdjacency(g, t *graph.CSR, lo, hi int) (xadj, adj []int32, err error) {
	var bound int64
	for v := lo; v < hi; v++ {
		bound += g.Degree(v) + t.Degree(v)
	}
	xadj = make([]int32, hi-lo+1)
	adj = make([]int32, 0, min(bound, math.MaxInt32))
	mark := make([]int32, g.NumRows)
	for i := range mark {
		mark[i] = -1
	}
	for v := lo; v < hi; v++ {
		v32 := int32(v)
		for _, c := range [2]*graph.CSR{g, t} {
			for _, u := range c.Idx[c.Ptr[v]:c.Ptr[v+1]] {
				if u != v32 && mark[u] != v32 {
					mark[u] = v32
					if len(adj) == math.MaxInt32 {
						return nil, nil, fmt.Errorf("partition: the symmetrized graph has more than 2^31-1 adjacency entries "+
							"(%d directed arcs counted in both directions), beyond METIS's 32-bit idx_t", bound)
					}
					adj = append(adj, u)
				}
			}
		}
		xadj[v-lo+1] = int32(len(adj))
	}
	return xadj, adj, nil
}

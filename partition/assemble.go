package partition

import (
	"fmt"
	"slices"

	"github.com/supergcn/supergcn/graph"
)

// Assemble reads the partition directory dir shared by ranks ranks back
// into its whole graph (row v: the in-neighbours of global node v, each
// row sorted, weights dropped) and the rank owning every node, loading one
// rank's shard at a time (Load, with its checks).
func Assemble(dir string, ranks int) (*graph.CSR, []int32, error) {
	var src, dst []int32
	var owner []int32
	for r := range ranks {
		sh, err := Load(dir, r, ranks)
		if err != nil {
			return nil, nil, err
		}
		if owner == nil {
			if sh.NumGlobalNodes >= 1<<31 {
				return nil, nil, fmt.Errorf("partition: %s: %d nodes, beyond the 2^31 of int32 ids", dir, sh.NumGlobalNodes)
			}
			owner = make([]int32, sh.NumGlobalNodes)
		}
		for v, g := range sh.Global {
			owner[g] = int32(r)
			if sh.Local != nil {
				for _, u := range sh.Local.Idx[sh.Local.Ptr[v]:sh.Local.Ptr[v+1]] {
					src, dst = append(src, int32(sh.Global[u])), append(dst, int32(g))
				}
			}
			if sh.Remote.Ptr != nil {
				for _, u := range sh.Remote.Src[sh.Remote.Ptr[v]:sh.Remote.Ptr[v+1]] {
					src, dst = append(src, int32(u)), append(dst, int32(g))
				}
			}
		}
	}
	n := len(owner)
	g := graph.FromCOO(n, n, src, dst, nil)
	for v := range n {
		slices.Sort(g.Idx[g.Ptr[v]:g.Ptr[v+1]])
	}
	return g, owner, nil
}

package partition

import (
	"fmt"

	"github.com/supergcn/supergcn/graph"
)

// ValidateOwner checks that owner assigns each of n nodes a part in [0, parts).
func ValidateOwner(owner []int32, n, parts int) error {
	if parts < 1 {
		return fmt.Errorf("partition: %d parts, want >= 1", parts)
	}
	if len(owner) != n {
		return fmt.Errorf("partition: owner has %d entries for %d nodes", len(owner), n)
	}
	for v, p := range owner {
		if p < 0 || int(p) >= parts {
			return fmt.Errorf("partition: owner[%d] = %d outside [0,%d)", v, p, parts)
		}
	}
	return nil
}

// splitter holds what every part of one owner array shares, so cutting all
// parts costs O(N + nnz) in total rather than O(N) per part.
type splitter struct {
	ds     *graph.Dataset
	owner  []int32
	parts  int
	local  []int32 // local[v] = index of v among the nodes of its part (ascending global ids)
	order  []int32 // nodes grouped by part, ascending within a part
	offset []int   // part p's nodes are order[offset[p]:offset[p+1]]
	split  []uint8 // Dataset.SplitMask()
}

func newSplitter(ds *graph.Dataset, owner []int32, parts int) *splitter {
	n := ds.NumNodes()
	s := &splitter{ds: ds, owner: owner, parts: parts, local: make([]int32, n),
		order: make([]int32, n), offset: make([]int, parts+1), split: ds.SplitMask()}
	for _, p := range owner {
		s.offset[p+1]++
	}
	for p := 0; p < parts; p++ {
		s.offset[p+1] += s.offset[p]
	}
	next := make([]int, parts)
	copy(next, s.offset[:parts])
	for v, p := range owner {
		i := next[p]
		next[p]++
		s.order[i] = int32(v)
		s.local[v] = int32(i - s.offset[p])
	}
	return s
}

// shard cuts part p out of the dataset.
func (s *splitter) shard(p int) *Shard {
	ds, g := s.ds, s.ds.Graph
	nodes := s.order[s.offset[p]:s.offset[p+1]]
	n := len(nodes)
	sh := &Shard{Rank: p, Ranks: s.parts, NumGlobalNodes: int64(ds.NumNodes()),
		Global: make([]int64, n), FeatDim: ds.FeatDim, NumClasses: ds.NumClasses, Split: make([]uint8, n)}
	sh.Features = ds.Features.Select(nodes)
	if ds.Labels != nil {
		sh.Labels = make([]int32, n)
	}
	var nloc, nrem int64
	p32 := int32(p)
	for _, v := range nodes {
		for _, u := range g.Idx[g.Ptr[v]:g.Ptr[v+1]] {
			if s.owner[u] == p32 {
				nloc++
			} else {
				nrem++
			}
		}
	}
	loc := &graph.CSR{NumRows: n, NumCols: n, Ptr: make([]int64, n+1), Idx: make([]int32, 0, nloc)}
	rem := RemoteEdges{Ptr: make([]int64, n+1), Src: make([]int64, 0, nrem), Owner: make([]int32, 0, nrem)}
	if g.Val != nil {
		loc.Val, rem.Val = make([]float32, 0, nloc), make([]float32, 0, nrem)
	}
	for i, v := range nodes {
		sh.Global[i] = int64(v)
		if sh.Labels != nil {
			sh.Labels[i] = ds.Labels[v]
		}
		sh.Split[i] = s.split[v]
		for k := g.Ptr[v]; k < g.Ptr[v+1]; k++ {
			u := g.Idx[k]
			if q := s.owner[u]; q == p32 {
				loc.Idx = append(loc.Idx, s.local[u])
				if g.Val != nil {
					loc.Val = append(loc.Val, g.Val[k])
				}
			} else {
				rem.Src = append(rem.Src, int64(u))
				rem.Owner = append(rem.Owner, q)
				if g.Val != nil {
					rem.Val = append(rem.Val, g.Val[k])
				}
			}
		}
		loc.Ptr[i+1] = int64(len(loc.Idx))
		rem.Ptr[i+1] = int64(len(rem.Src))
	}
	sh.Local, sh.Remote = loc, rem
	return sh
}

// Split returns part `part` of ds under owner (owner[v] = part of node v,
// parts parts in all): the owned nodes {v : owner[v] == part} in ascending
// global id (local id = position), their features, labels and split bits,
// the Local CSR of in-edges among owned nodes (over local ids), and Remote,
// the in-edges whose source belongs to another part, with the source's
// global id and part. Every in-edge of an owned node lands in exactly one of
// the two, in the order of the input row, with its weight (Graph.Val) in
// Local.Val or Remote.Val when the graph is weighted. Cost O(N + nnz).
//
// owner must satisfy ValidateOwner(owner, ds.NumNodes(), parts) and
// 0 <= part < parts; Split panics otherwise, as slice indexing would.
func Split(ds *graph.Dataset, owner []int32, part, parts int) *Shard {
	if err := ValidateOwner(owner, ds.NumNodes(), parts); err != nil {
		panic(err)
	}
	if part < 0 || part >= parts {
		panic(fmt.Sprintf("partition.Split: part %d outside [0,%d)", part, parts))
	}
	return newSplitter(ds, owner, parts).shard(part)
}

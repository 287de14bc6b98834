package partition

// Node order: how a rank numbers its owned nodes in memory. The aggregation
// gathers the rows of a rank's neighbours; with the nodes of a graph whose
// ids carry no locality (a random numbering, as the generator's), every
// gather is a DRAM access. Renumbering the local nodes so that nodes which
// share neighbours sit close together (and the most-gathered rows stay in
// cache) makes fewer bytes come from DRAM. The numbering is internal to a
// rank: every output is written by global id (Shard.Global), so results do
// not depend on it beyond floating-point summation order.

import (
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/par"
)

// Node orders LocalOrder computes.
const (
	OrderGiven   = "given"   // as stored: ascending global id
	OrderDegree  = "degree"  // most-gathered nodes (local out-degree) first
	OrderRCM     = "rcm"     // reverse Cuthill–McKee (BFS from a low-degree node, neighbours by degree)
	OrderCluster = "cluster" // label-propagation clusters, largest first; by in-degree within a cluster
)

// DefaultOrder is the order training uses unless told otherwise.
const DefaultOrder = OrderCluster

// clusterRounds is the most label-propagation sweeps of OrderCluster;
// lpChunk is the number of nodes a sweep moves asynchronously, in order
// (chunks run in parallel).
const (
	clusterRounds = 3
	lpChunk       = 1 << 14
)

// NodeOrders lists the orders LocalOrder accepts.
func NodeOrders() []string {
	return []string{OrderGiven, OrderDegree, OrderRCM, OrderCluster}
}

// LocalOrder returns a permutation of s's owned nodes: perm[i] is the
// current local id of the node that order puts at position i. It reads
// only s.Local (the edges among owned nodes) and is deterministic. An
// unknown order is an error.
func LocalOrder(s *Shard, order string) ([]int32, error) {
	n := len(s.Global)
	if s.Local == nil || s.Local.NumRows != n || s.Local.NumCols != n {
		return nil, fmt.Errorf("partition: rank %d: no square local graph over its %d nodes", s.Rank, n)
	}
	switch order {
	case OrderGiven:
		perm := make([]int32, n)
		for i := range perm {
			perm[i] = int32(i)
		}
		return perm, nil
	case OrderDegree:
		return degreeOrder(s), nil
	case OrderRCM:
		return rcmOrder(s), nil
	case OrderCluster:
		return clusterOrder(s, clusterRounds), nil
	}
	return nil, fmt.Errorf("partition: node order %q is not one of %v", order, NodeOrders())
}

// gatherCounts returns how often each local node's row is gathered by the
// local aggregation: its number of entries in s.Local.Idx.
func gatherCounts(s *Shard) []int32 {
	c := make([]int32, len(s.Global))
	for _, u := range s.Local.Idx {
		c[u]++
	}
	return c
}

// byDegree sorts nodes (in place, stably) by descending deg.
func byDegree(nodes []int32, deg []int32) {
	slices.SortStableFunc(nodes, func(a, b int32) int { return int(deg[b]) - int(deg[a]) })
}

// degreeOrder puts the most-gathered nodes first (ties: current order).
func degreeOrder(s *Shard) []int32 {
	n := len(s.Global)
	deg := gatherCounts(s)
	// Counting sort by descending degree: O(n + max degree).
	maxd := int32(0)
	for _, d := range deg {
		maxd = max(maxd, d)
	}
	start := make([]int, maxd+2)
	for _, d := range deg {
		start[maxd-d+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	perm := make([]int32, n)
	for v, d := range deg {
		perm[start[maxd-d]] = int32(v)
		start[maxd-d]++
	}
	return perm
}

// rcmOrder is reverse Cuthill–McKee on the local graph's rows (in-edges):
// every component is walked breadth-first from its lowest-degree node,
// each node's unvisited neighbours in ascending degree, and the whole
// sequence is reversed.
func rcmOrder(s *Shard) []int32 {
	g := s.Local
	n := g.NumRows
	deg := make([]int32, n)
	for v := range deg {
		deg[v] = int32(g.Degree(v))
	}
	starts := make([]int32, n)
	for i := range starts {
		starts[i] = int32(i)
	}
	byDegree(starts, deg)
	slices.Reverse(starts) // ascending degree (ties: descending id; deterministic either way)
	seen := make([]bool, n)
	perm := make([]int32, 0, n)
	var nb []int32
	for _, r := range starts {
		if seen[r] {
			continue
		}
		seen[r] = true
		head := len(perm)
		perm = append(perm, r)
		for ; head < len(perm); head++ {
			v := perm[head]
			nb = nb[:0]
			for _, u := range g.Idx[g.Ptr[v]:g.Ptr[v+1]] {
				if !seen[u] {
					seen[u] = true
					nb = append(nb, u)
				}
			}
			slices.SortStableFunc(nb, func(a, b int32) int { return int(deg[a]) - int(deg[b]) })
			perm = append(perm, nb...)
		}
	}
	slices.Reverse(perm)
	return perm
}

// clusterOrder groups nodes by label-propagation clusters of the local
// graph, clusters by descending size (ties: smaller label), nodes within
// a cluster by descending in-degree (hubs first), then current order.
//
// Label propagation: every node starts in its own cluster, and each sweep
// moves every node to the cluster most common among its in-neighbours
// (ties: stay when the current cluster is among the most common, else the
// smallest cluster id). The nodes are swept in fixed chunks of lpChunk,
// in parallel: inside its chunk a sweep is asynchronous (a node sees the
// moves of the chunk's earlier nodes), across chunks it reads the labels
// the sweep started from. The result depends only on the graph, not on the
// thread count.
func clusterOrder(s *Shard, rounds int) []int32 {
	g := s.Local
	n := g.NumRows
	label := make([]int32, n)
	for v := range label {
		label[v] = int32(v)
	}
	prev := make([]int32, n)
	chunks := (n + lpChunk - 1) / lpChunk
	for r := 0; r < rounds; r++ {
		copy(prev, label)
		var moved atomic.Int64
		par.Blocks(chunks, 0, func(c int) {
			lo, hi := int32(c*lpChunk), int32(min(n, (c+1)*lpChunk))
			var nb []int32
			var tab lpTable
			k := int64(0)
			for v := lo; v < hi; v++ {
				row := g.Idx[g.Ptr[v]:g.Ptr[v+1]]
				if len(row) == 0 {
					continue
				}
				nb = nb[:0]
				for _, u := range row {
					if u >= lo && u < hi {
						nb = append(nb, label[u])
					} else {
						nb = append(nb, prev[u])
					}
				}
				cur := label[v]
				var best int32
				if len(nb) <= lpTableSize/2 {
					best = tab.mode(nb, cur)
				} else { // a hub: sort its labels
					best = sortedMode(nb, cur)
				}
				if best != cur {
					label[v] = best
					k++
				}
			}
			moved.Add(k)
		})
		if moved.Load() == 0 {
			break
		}
	}
	// Clusters ranked by descending size (ties: smaller label), nodes
	// bucketed by cluster rank in current order, then each bucket sorted
	// stably by descending in-degree.
	size := make([]int32, n)
	for _, l := range label {
		size[l]++
	}
	var labels []int32
	for l, c := range size {
		if c > 0 {
			labels = append(labels, int32(l))
		}
	}
	slices.SortFunc(labels, func(a, b int32) int {
		if size[a] != size[b] {
			return int(size[b]) - int(size[a])
		}
		return int(a) - int(b)
	})
	start := make([]int, len(labels)+1)
	rank := make([]int32, n) // rank[l] = position of cluster l among labels
	for i, l := range labels {
		rank[l] = int32(i)
		start[i+1] = start[i] + int(size[l])
	}
	next := slices.Clone(start[:len(labels)])
	perm := make([]int32, n)
	for v, l := range label {
		r := rank[l]
		perm[next[r]] = int32(v)
		next[r]++
	}
	deg := make([]int32, n) // in-degree: the gather count of a symmetric graph, without a pass over the edges
	for v := range deg {
		deg[v] = int32(g.Degree(v))
	}
	for i := range labels {
		byDegree(perm[start[i]:start[i+1]], deg)
	}
	return perm
}

// lpTableSize is the size of lpTable, a power of two; rows up to half of
// it are counted there, longer ones sorted.
const lpTableSize = 1024

// lpTable counts the labels of one row: open addressing, cleared after use.
type lpTable struct {
	key  [lpTableSize]int32 // label+1; 0 = empty
	cnt  [lpTableSize]int32
	used []int32 // occupied slots
}

// mode returns the most common of labels: cur when it is among the most
// common, else the smallest of them.
func (t *lpTable) mode(labels []int32, cur int32) int32 {
	const mask = lpTableSize - 1
	for _, l := range labels {
		h := int(uint32(l)*0x9E3779B1>>22) & mask
		for t.key[h] != 0 && t.key[h] != l+1 {
			h = (h + 1) & mask
		}
		if t.key[h] == 0 {
			t.key[h] = l + 1
			t.used = append(t.used, int32(h))
		}
		t.cnt[h]++
	}
	best, bestC := cur, int32(0)
	for _, h := range t.used {
		l, c := t.key[h]-1, t.cnt[h]
		if c > bestC || (c == bestC && (l == cur || (best != cur && l < best))) {
			best, bestC = l, c
		}
		t.key[h], t.cnt[h] = 0, 0
	}
	t.used = t.used[:0]
	return best
}

// sortedMode is lpTable.mode over the labels nb (sorted in place).
func sortedMode(nb []int32, cur int32) int32 {
	slices.Sort(nb)
	best, bestC := cur, 0
	for i := 0; i < len(nb); {
		j := i + 1
		for j < len(nb) && nb[j] == nb[i] {
			j++
		}
		if l, c := nb[i], j-i; c > bestC || (c == bestC && l == cur) {
			best, bestC = l, c
		}
		i = j
	}
	return best
}

// CheckPermutation reports whether perm is a permutation of [0, n).
func CheckPermutation(perm []int32, n int) error {
	if len(perm) != n {
		return fmt.Errorf("partition: permutation of %d entries for %d nodes", len(perm), n)
	}
	seen := make([]bool, n)
	for i, v := range perm {
		if v < 0 || int(v) >= n || seen[v] {
			return fmt.Errorf("partition: permutation entry %d is %d: outside [0,%d) or repeated", i, v, n)
		}
		seen[v] = true
	}
	return nil
}

// Reorder renumbers s's owned nodes in place: the node at local id
// perm[i] gets local id i. Global, X, Labels, Split, the local graph (rows
// and column ids) and the remote edges follow, each row's entries in their
// previous order; Global is then no longer ascending. The features move in
// place (one row of scratch); the local graph is rebuilt.
func (s *Shard) Reorder(perm []int32) error {
	n := len(s.Global)
	if err := CheckPermutation(perm, n); err != nil {
		return err
	}
	if s.Local == nil || s.Local.NumRows != n || s.Local.NumCols != n {
		return fmt.Errorf("partition: rank %d: no square local graph over its %d nodes", s.Rank, n)
	}
	if len(s.Remote.Ptr) != 0 && len(s.Remote.Ptr) != n+1 {
		return fmt.Errorf("partition: rank %d: remote edges have %d offsets for %d nodes", s.Rank, len(s.Remote.Ptr), n)
	}
	inv := make([]int32, n)
	for i, v := range perm {
		inv[v] = int32(i)
	}
	s.Global = permuted(s.Global, perm)
	s.Labels = permuted(s.Labels, perm)
	s.Split = permuted(s.Split, perm)
	if s.Features.Rows() == n {
		s.Features.Permute(perm)
	}
	s.Local = permuteCSR(s.Local, perm, inv)
	if r := s.Remote; len(r.Ptr) == n+1 {
		nr := RemoteEdges{Ptr: make([]int64, n+1), Src: make([]int64, 0, len(r.Src)), Owner: make([]int32, 0, len(r.Owner))}
		if r.Val != nil {
			nr.Val = make([]float32, 0, len(r.Val))
		}
		for i, v := range perm {
			nr.Src = append(nr.Src, r.Src[r.Ptr[v]:r.Ptr[v+1]]...)
			nr.Owner = append(nr.Owner, r.Owner[r.Ptr[v]:r.Ptr[v+1]]...)
			if r.Val != nil {
				nr.Val = append(nr.Val, r.Val[r.Ptr[v]:r.Ptr[v+1]]...)
			}
			nr.Ptr[i+1] = int64(len(nr.Src))
		}
		s.Remote = nr
	}
	return nil
}

// permuted returns a with a[perm[i]] at i (nil stays nil).
func permuted[T any](a []T, perm []int32) []T {
	if a == nil {
		return nil
	}
	b := make([]T, len(a))
	for i, v := range perm {
		b[i] = a[v]
	}
	return b
}

// permuteCSR returns the square g with row perm[i] at i and column ids
// mapped through inv (inv[perm[i]] = i), each row's entries in their order.
func permuteCSR(g *graph.CSR, perm, inv []int32) *graph.CSR {
	n := g.NumRows
	out := &graph.CSR{NumRows: n, NumCols: n, Ptr: make([]int64, n+1), Idx: make([]int32, len(g.Idx))}
	if g.Val != nil {
		out.Val = make([]float32, len(g.Val))
	}
	for i, v := range perm {
		out.Ptr[i+1] = out.Ptr[i] + g.Degree(int(v))
	}
	par.For(n, 4096, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			v := perm[i]
			src := g.Idx[g.Ptr[v]:g.Ptr[v+1]]
			dst := out.Idx[out.Ptr[i]:out.Ptr[i+1]]
			for k, u := range src {
				dst[k] = inv[u]
			}
			if g.Val != nil {
				copy(out.Val[out.Ptr[i]:out.Ptr[i+1]], g.Val[g.Ptr[v]:g.Ptr[v+1]])
			}
		}
	})
	return out
}

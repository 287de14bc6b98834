// Package vcover computes maximum matchings and minimum vertex covers of
// bipartite graphs: Hopcroft–Karp for the matching (O(E·√V), iterative, so
// graphs with millions of edges never deepen the goroutine stack) and Kőnig's
// construction for the cover.
//
// The exchange planner uses the cover to decide, for the cut edges between
// two ranks, which rows travel whole (post-aggregation: the source is in the
// cover) and which as partial sums (pre-aggregation: the destination is in the
// cover); see SuperGCN (SC'24), Algorithm 2.
//
// Algorithm 2 of the paper covers each connected component separately. A
// minimum cover of a disjoint union is the union of minimum covers of its
// parts, and by Kőnig's theorem every minimum cover of a bipartite graph has
// the size of a maximum matching, so running on the whole graph at once (as
// this package does) gives a cover of exactly the same size.
package vcover

import "fmt"

// Bipartite is a bipartite graph with NL left and NR right vertices, given as
// a CSR adjacency from left to right: the neighbours of left vertex u are
// Adj[Ptr[u]:Ptr[u+1]], each in [0, NR). Parallel edges are allowed.
type Bipartite struct {
	NL, NR int
	Ptr    []int64
	Adj    []int32
}

// Validate checks the structural invariants.
func (b *Bipartite) Validate() error {
	if b.NL < 0 || b.NR < 0 {
		return fmt.Errorf("vcover: negative size %d×%d", b.NL, b.NR)
	}
	if len(b.Ptr) != b.NL+1 || b.Ptr[0] != 0 {
		return fmt.Errorf("vcover: Ptr has %d entries (want NL+1=%d) or Ptr[0]≠0", len(b.Ptr), b.NL+1)
	}
	for u := 0; u < b.NL; u++ {
		if b.Ptr[u+1] < b.Ptr[u] {
			return fmt.Errorf("vcover: Ptr decreases at left vertex %d", u)
		}
	}
	if int64(len(b.Adj)) != b.Ptr[b.NL] {
		return fmt.Errorf("vcover: len(Adj)=%d, want %d", len(b.Adj), b.Ptr[b.NL])
	}
	for k, v := range b.Adj {
		if v < 0 || int(v) >= b.NR {
			return fmt.Errorf("vcover: edge %d goes to right vertex %d outside [0,%d)", k, v, b.NR)
		}
	}
	return nil
}

// NumEdges returns the number of edges.
func (b *Bipartite) NumEdges() int64 { return b.Ptr[b.NL] }

// unmatched marks a vertex without a partner in matchL/matchR.
const unmatched = -1

// infDist marks a left vertex outside the current BFS layering.
const infDist = int32(1<<31 - 1)

// MaxMatching returns a maximum matching of b: matchL[u] is the right partner
// of left vertex u (-1 if none), matchR[v] the left partner of right vertex v,
// and size the number of matched pairs. b must be valid (see Validate). The
// result is deterministic for a given b.
func MaxMatching(b *Bipartite) (matchL, matchR []int32, size int) {
	hk := &hopcroftKarp{b: b, matchL: make([]int32, b.NL), matchR: make([]int32, b.NR),
		dist: make([]int32, b.NL), it: make([]int64, b.NL)}
	for i := range hk.matchL {
		hk.matchL[i] = unmatched
	}
	for i := range hk.matchR {
		hk.matchR[i] = unmatched
	}
	size = hk.greedy()
	for hk.layer() {
		for u := 0; u < b.NL; u++ {
			if hk.matchL[u] == unmatched && hk.augment(int32(u)) {
				size++
			}
		}
	}
	return hk.matchL, hk.matchR, size
}

// hopcroftKarp is the state of one matching computation.
type hopcroftKarp struct {
	b              *Bipartite
	matchL, matchR []int32
	dist           []int32 // BFS layer of left vertices in the current phase
	limit          int32   // layer of the left ends of shortest augmenting paths
	it             []int64 // next edge to try, per left vertex, in this phase
	queue, stack   []int32
}

// greedy seeds the matching with a maximal one (first free neighbour).
func (hk *hopcroftKarp) greedy() int {
	n := 0
	for u := 0; u < hk.b.NL; u++ {
		for k := hk.b.Ptr[u]; k < hk.b.Ptr[u+1]; k++ {
			if v := hk.b.Adj[k]; hk.matchR[v] == unmatched {
				hk.matchL[u], hk.matchR[v] = v, int32(u)
				n++
				break
			}
		}
	}
	return n
}

// layer runs the BFS of one phase from every free left vertex, alternating
// along free and matched edges, and stops at the first layer that reaches a
// free right vertex. It reports whether an augmenting path exists.
func (hk *hopcroftKarp) layer() bool {
	b := hk.b
	hk.queue = hk.queue[:0]
	for u := 0; u < b.NL; u++ {
		hk.it[u] = b.Ptr[u]
		if hk.matchL[u] == unmatched {
			hk.dist[u] = 0
			hk.queue = append(hk.queue, int32(u))
		} else {
			hk.dist[u] = infDist
		}
	}
	hk.limit = infDist
	for head := 0; head < len(hk.queue); head++ {
		u := hk.queue[head]
		if hk.dist[u] >= hk.limit {
			break // the queue is ordered by layer: nothing shorter remains
		}
		for k := b.Ptr[u]; k < b.Ptr[u+1]; k++ {
			w := hk.matchR[b.Adj[k]]
			if w == unmatched {
				hk.limit = hk.dist[u]
			} else if hk.dist[w] == infDist {
				hk.dist[w] = hk.dist[u] + 1
				hk.queue = append(hk.queue, w)
			}
		}
	}
	return hk.limit != infDist
}

// augment looks for a shortest augmenting path from the free left vertex root
// along the layering (iterative DFS; hk.it keeps each vertex's position so
// every edge is scanned once per phase) and flips it when found.
func (hk *hopcroftKarp) augment(root int32) bool {
	b := hk.b
	hk.stack = append(hk.stack[:0], root)
	for len(hk.stack) > 0 {
		u := hk.stack[len(hk.stack)-1]
		if hk.it[u] == b.Ptr[u+1] { // dead end: drop u for the rest of the phase
			hk.dist[u] = infDist
			hk.stack = hk.stack[:len(hk.stack)-1]
			if n := len(hk.stack); n > 0 {
				hk.it[hk.stack[n-1]]++
			}
			continue
		}
		v := b.Adj[hk.it[u]]
		w := hk.matchR[v]
		switch {
		case w == unmatched && hk.dist[u] == hk.limit:
			hk.flip()
			return true
		case w != unmatched && hk.dist[w] == hk.dist[u]+1:
			hk.stack = append(hk.stack, w)
		default:
			hk.it[u]++
		}
	}
	return false
}

// flip augments the matching along the path on the stack: every stacked left
// vertex takes the right vertex its edge pointer names.
func (hk *hopcroftKarp) flip() {
	for _, u := range hk.stack {
		v := hk.b.Adj[hk.it[u]]
		hk.matchL[u], hk.matchR[v] = v, u
		hk.it[u]++
		hk.dist[u] = infDist // u is on a path now; keep paths of a phase disjoint
	}
}

// MinVertexCover returns a minimum vertex cover of b: inL[u] / inR[v] mark
// the covered vertices and size is their number, which equals the size of a
// maximum matching (Kőnig). b must be valid (see Validate).
func MinVertexCover(b *Bipartite) (inL, inR []bool, size int) {
	matchL, matchR, _ := MaxMatching(b)
	return CoverFromMatching(b, matchL, matchR)
}

// CoverFromMatching builds Kőnig's cover from a maximum matching: with Z the
// vertices reachable from free left vertices by alternating paths (any edge
// left→right, the matched edge right→left), the cover is (L∖Z) ∪ (R∩Z).
func CoverFromMatching(b *Bipartite, matchL, matchR []int32) (inL, inR []bool, size int) {
	zL := make([]bool, b.NL)
	zR := make([]bool, b.NR)
	queue := make([]int32, 0, b.NL)
	for u := 0; u < b.NL; u++ {
		if matchL[u] == unmatched {
			zL[u] = true
			queue = append(queue, int32(u))
		}
	}
	for head := 0; head < len(queue); head++ {
		u := queue[head]
		for k := b.Ptr[u]; k < b.Ptr[u+1]; k++ {
			v := b.Adj[k]
			if zR[v] {
				continue
			}
			zR[v] = true
			if w := matchR[v]; w != unmatched && !zL[w] {
				zL[w] = true
				queue = append(queue, w)
			}
		}
	}
	inL, inR = make([]bool, b.NL), zR
	for u := range inL {
		if !zL[u] {
			inL[u] = true
			size++
		}
	}
	for _, z := range zR {
		if z {
			size++
		}
	}
	return inL, inR, size
}

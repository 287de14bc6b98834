package vcover

import (
	"math/bits"
	"math/rand/v2"
	"testing"
)

// randomBipartite draws m edges uniformly (parallel edges possible).
func randomBipartite(rng *rand.Rand, nl, nr, m int) *Bipartite {
	cnt := make([]int64, nl+1)
	src := make([]int32, m)
	dst := make([]int32, m)
	for k := range src {
		src[k], dst[k] = int32(rng.IntN(nl)), int32(rng.IntN(nr))
		cnt[src[k]+1]++
	}
	for u := 0; u < nl; u++ {
		cnt[u+1] += cnt[u]
	}
	b := &Bipartite{NL: nl, NR: nr, Ptr: cnt, Adj: make([]int32, m)}
	next := append([]int64(nil), cnt[:nl]...)
	for k, u := range src {
		b.Adj[next[u]] = dst[k]
		next[u]++
	}
	return b
}

// checkMatching verifies matchL/matchR are consistent, use only edges, and
// have size pairs.
func checkMatching(t *testing.T, b *Bipartite, matchL, matchR []int32, size int) {
	t.Helper()
	n := 0
	for u, v := range matchL {
		if v == unmatched {
			continue
		}
		n++
		if matchR[v] != int32(u) {
			t.Fatalf("matchL[%d]=%d but matchR[%d]=%d", u, v, v, matchR[v])
		}
		found := false
		for _, w := range b.Adj[b.Ptr[u]:b.Ptr[u+1]] {
			found = found || w == v
		}
		if !found {
			t.Fatalf("matched pair (%d,%d) is not an edge", u, v)
		}
	}
	for v, u := range matchR {
		if u != unmatched && matchL[u] != int32(v) {
			t.Fatalf("matchR[%d]=%d but matchL[%d]=%d", v, u, u, matchL[u])
		}
	}
	if n != size {
		t.Fatalf("size %d, %d pairs matched", size, n)
	}
}

// checkCover verifies every edge has a covered end and size counts the cover.
func checkCover(t *testing.T, b *Bipartite, inL, inR []bool, size int) {
	t.Helper()
	n := 0
	for _, c := range inL {
		if c {
			n++
		}
	}
	for _, c := range inR {
		if c {
			n++
		}
	}
	if n != size {
		t.Fatalf("size %d, %d vertices marked", size, n)
	}
	for u := 0; u < b.NL; u++ {
		for _, v := range b.Adj[b.Ptr[u]:b.Ptr[u+1]] {
			if !inL[u] && !inR[v] {
				t.Fatalf("edge (%d,%d) uncovered", u, v)
			}
		}
	}
}

// bruteMinCover tries every subset of the left side: the cheapest cover
// containing exactly that subset adds every right neighbour of the rest.
func bruteMinCover(b *Bipartite) int {
	best := b.NL + b.NR
	for mask := 0; mask < 1<<b.NL; mask++ {
		need := make([]bool, b.NR)
		for u := 0; u < b.NL; u++ {
			if mask&(1<<u) != 0 {
				continue
			}
			for _, v := range b.Adj[b.Ptr[u]:b.Ptr[u+1]] {
				need[v] = true
			}
		}
		size := bits.OnesCount(uint(mask))
		for _, x := range need {
			if x {
				size++
			}
		}
		best = min(best, size)
	}
	return best
}

func TestSmallAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 2000; trial++ {
		nl, nr := rng.IntN(13), rng.IntN(13)
		m := 0
		if nl > 0 && nr > 0 {
			m = rng.IntN(nl*nr/2 + 2)
		}
		b := randomBipartite(rng, nl, nr, m)
		if err := b.Validate(); err != nil {
			t.Fatal(err)
		}
		matchL, matchR, msize := MaxMatching(b)
		checkMatching(t, b, matchL, matchR, msize)
		inL, inR, size := MinVertexCover(b)
		checkCover(t, b, inL, inR, size)
		if want := bruteMinCover(b); size != want || msize != want {
			t.Fatalf("trial %d (%d×%d, %d edges): cover %d, matching %d, brute force %d", trial, nl, nr, m, size, msize, want)
		}
	}
}

func TestLargeRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, shape := range [][3]int{{50000, 50000, 100000}, {1000, 80000, 100000}, {30000, 30000, 30000}} {
		b := randomBipartite(rng, shape[0], shape[1], shape[2])
		matchL, matchR, msize := MaxMatching(b)
		checkMatching(t, b, matchL, matchR, msize)
		inL, inR, size := CoverFromMatching(b, matchL, matchR)
		checkCover(t, b, inL, inR, size)
		if size != msize {
			t.Fatalf("%v: cover %d ≠ matching %d", shape, size, msize)
		}
	}
}

// TestLongAugmentingPaths: a path graph forces augmenting paths through
// every vertex; the iterative search must not care about their length.
func TestLongAugmentingPaths(t *testing.T) {
	const n = 200000
	// Left i — right i and right i+1, so the greedy start (left i takes
	// right i) is perfect; reverse the adjacency so greedy takes right i+1
	// and leaves one long augmenting path.
	b := &Bipartite{NL: n, NR: n, Ptr: make([]int64, n+1)}
	for u := 0; u < n; u++ {
		if u+1 < n {
			b.Adj = append(b.Adj, int32(u+1))
		}
		b.Adj = append(b.Adj, int32(u))
		b.Ptr[u+1] = int64(len(b.Adj))
	}
	matchL, matchR, size := MaxMatching(b)
	checkMatching(t, b, matchL, matchR, size)
	if size != n {
		t.Fatalf("matching %d, want %d", size, n)
	}
	inL, inR, csize := CoverFromMatching(b, matchL, matchR)
	checkCover(t, b, inL, inR, csize)
	if csize != n {
		t.Fatalf("cover %d, want %d", csize, n)
	}
}

func TestValidate(t *testing.T) {
	bad := []*Bipartite{
		{NL: 1, NR: 1, Ptr: []int64{0}},
		{NL: 1, NR: 1, Ptr: []int64{0, 1}, Adj: []int32{1}},
		{NL: 2, NR: 1, Ptr: []int64{0, 1, 0}, Adj: []int32{0}},
		{NL: 1, NR: 1, Ptr: []int64{0, 2}, Adj: []int32{0}},
	}
	for i, b := range bad {
		if b.Validate() == nil {
			t.Errorf("case %d accepted", i)
		}
	}
	if err := (&Bipartite{Ptr: []int64{0}}).Validate(); err != nil {
		t.Errorf("empty graph: %v", err)
	}
}

func BenchmarkMinVertexCover(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	g := randomBipartite(rng, 200000, 200000, 1000000)
	b.ReportAllocs()
	for b.Loop() {
		MinVertexCover(g)
	}
}

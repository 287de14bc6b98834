package partition

import (
	"slices"
	"testing"
)

// π is a bijection of [0, n) for sizes around the domain's powers of four
// (where cycle-walking matters most), and different seeds give different
// permutations.
func TestPermutationBijective(t *testing.T) {
	for _, n := range []int64{0, 1, 2, 3, 4, 5, 15, 16, 17, 63, 64, 65, 1000, 1 << 12, 1<<12 + 1, 50021} {
		p := NewPermutation(n, 11)
		seen := make([]bool, n)
		for v := range n {
			x := p.At(v)
			if x < 0 || x >= n || seen[x] {
				t.Fatalf("n=%d: π(%d)=%d is out of range or repeated", n, v, x)
			}
			seen[x] = true
		}
	}
	a, b := NewPermutation(1000, 1), NewPermutation(1000, 2)
	same := 0
	for v := range int64(1000) {
		if a.At(v) == b.At(v) {
			same++
		}
	}
	if same > 20 {
		t.Fatalf("seeds 1 and 2 agree on %d of 1000 places", same)
	}
}

// Ids far beyond 2^32 stay in range: the graph's size, not the element,
// bounds the walk.
func TestPermutationWide(t *testing.T) {
	const n = int64(1)<<40 + 12345
	p := NewPermutation(n, 3)
	seen := map[int64]bool{}
	for _, v := range []int64{0, 1, 1 << 32, 1<<40 - 1, n - 2, n - 1} {
		x := p.At(v)
		if x < 0 || x >= n || seen[x] {
			t.Fatalf("π(%d)=%d out of [0, %d) or repeated", v, x, n)
		}
		seen[x] = true
	}
}

// Random balances the parts exactly, spreads neighbouring ids, and any
// split of the node range into process ranges gives the same owners.
func TestRandomBalancedAndRangeSplit(t *testing.T) {
	const n, parts = 10007, 8
	owner := Random(n, parts, 5)
	size := make([]int, parts)
	for _, o := range owner {
		size[o]++
	}
	if slices.Max(size)-slices.Min(size) > 1 {
		t.Fatalf("part sizes %v differ by more than one", size)
	}
	run := 0
	for v := 1; v < n; v++ {
		if owner[v] == owner[v-1] {
			run++
		}
	}
	if run > 2*n/parts {
		t.Fatalf("%d of %d neighbouring ids share a part: not spread", run, n)
	}
	var joined []int32
	for _, cut := range [][2]int64{{0, 1}, {1, 4000}, {4000, 4000}, {4000, n}} {
		joined = append(joined, RandomRange(n, cut[0], cut[1], parts, 5)...)
	}
	if !slices.Equal(joined, owner) {
		t.Fatal("owners of ranges 0..1, 1..4000, 4000..n differ from the whole graph's")
	}
	if one := Random(n, 1, 5); slices.Max(one) != 0 {
		t.Fatal("one part: a node outside part 0")
	}
}

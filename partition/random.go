package partition

import (
	"math/bits"

	"github.com/supergcn/supergcn/internal/mix"
)

// Random assigns n nodes to parts uniformly at random with exactly balanced
// part sizes (they differ by at most one): node v goes to part π(v) mod
// parts for a seeded random permutation π of [0, n) (NewPermutation). It is
// the no-locality baseline that METIS is measured against. parts < 1 is
// treated as 1.
func Random(n, parts int, seed uint64) []int32 {
	return RandomRange(int64(n), 0, int64(n), parts, seed)
}

// RandomRange returns the parts of nodes lo..hi-1 under Random(n, parts,
// seed), without the other nodes: a process places its own range of a
// graph in memory proportional to the range.
func RandomRange(n, lo, hi int64, parts int, seed uint64) []int32 {
	owner := make([]int32, hi-lo)
	if parts <= 1 {
		return owner
	}
	pi := NewPermutation(n, seed)
	for i := range owner {
		owner[i] = int32(pi.At(lo+int64(i)) % int64(parts))
	}
	return owner
}

// Permutation is a seeded pseudo-random permutation of [0, n) evaluated
// one element at a time in O(1) memory: a four-round balanced Feistel
// network (round function Mix64 of the half and a round key) on the
// smallest domain of 2·h bits holding n, cycle-walking back into [0, n)
// (at most 4 steps expected, since the domain is below 4n).
type Permutation struct {
	n    uint64
	half uint // bits of each Feistel half
	key  [4]uint64
}

// NewPermutation returns the permutation of [0, n) drawn from seed.
func NewPermutation(n int64, seed uint64) Permutation {
	p := Permutation{n: uint64(max(n, 0))}
	if p.n > 1 {
		p.half = uint(bits.Len64(p.n-1)+1) / 2
	}
	k := mix.Mix64(seed ^ 0x5eed_9c9f_a17c_0de1)
	for r := range p.key {
		k = mix.Mix64(k + 0x9e3779b97f4a7c15)
		p.key[r] = k
	}
	return p
}

// At returns π(v) for v in [0, n).
func (p Permutation) At(v int64) int64 {
	x := uint64(v)
	for {
		x = p.round(x)
		if x < p.n {
			return int64(x)
		}
	}
}

// round is one pass of the Feistel network over the 2·half-bit domain: a
// bijection of it, so cycle-walking from a value below n ends below n.
func (p Permutation) round(x uint64) uint64 {
	mask := uint64(1)<<p.half - 1
	l, r := x>>p.half, x&mask
	for _, k := range p.key {
		l, r = r, l^(mix.Mix64(r^k)&mask)
	}
	return l<<p.half | r
}

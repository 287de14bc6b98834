package partition

import "math/rand/v2"

// Random assigns n nodes to parts uniformly at random with exactly balanced
// part sizes (they differ by at most one): node perm[i] goes to part i mod
// parts for a seeded random permutation perm. It is the no-locality
// baseline that METIS is measured against. parts < 1 is treated as 1.
func Random(n, parts int, seed uint64) []int32 {
	owner := make([]int32, n)
	if parts <= 1 {
		return owner
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed_9c9f_a17c_0de1))
	for i := range owner {
		owner[i] = int32(i % parts)
	}
	rng.Shuffle(n, func(i, j int) { owner[i], owner[j] = owner[j], owner[i] })
	return owner
}

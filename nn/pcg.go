package nn

import "math/bits"

// pcg is math/rand/v2's PCG (128-bit LCG, DXSM output) with its state in
// plain fields, so that drawRow can step it in registers for a whole row
// rather than through a pointer per draw: pcg{hi: seed1, lo: seed2} yields
// exactly the words of rand.NewPCG(seed1, seed2) (TestPCGMatchesRand).
type pcg struct{ hi, lo uint64 }

// pcgNext advances the state (hi, lo) and returns the new state and its
// output word, as rand.PCG.Uint64.
func pcgNext(hi, lo uint64) (nhi, nlo, out uint64) {
	const (
		mulHi    = 2549297995355413924
		mulLo    = 4865540595714422341
		incHi    = 6364136223846793005
		incLo    = 1442695040888963407
		cheapMul = 0xda942042e4dd58b5
	)
	nhi, nlo = bits.Mul64(lo, mulLo)
	nhi += hi*mulLo + lo*mulHi
	nlo, c := bits.Add64(nlo, incLo, 0)
	nhi, _ = bits.Add64(nhi, incHi, c)
	out = nhi
	out ^= out >> 32
	out *= cheapMul
	out ^= out >> 48
	out *= nlo | 1
	return nhi, nlo, out
}

// Uint64 returns the next word.
func (p *pcg) Uint64() uint64 {
	var out uint64
	p.hi, p.lo, out = pcgNext(p.hi, p.lo)
	return out
}

package nn

import "math/bits"

// pcgState is the 128-bit state of math/rand/v2's PCG (hi, lo), stepped
// and output exactly as PCG.Uint64 does, with a jump ahead: sparse input
// dropout draws the decision of one element of the dense dropout stream
// (Dropout.Forward) without drawing those before it.
type pcgState struct{ hi, lo uint64 }

// The LCG of math/rand/v2's PCG: state = state·mul + inc (mod 2^128).
var (
	pcgMul = pcgState{2549297995355413924, 4865540595714422341}
	pcgInc = pcgState{6364136223846793005, 1442695040888963407}
)

// mul returns a·b mod 2^128.
func (a pcgState) mul(b pcgState) pcgState {
	hi, lo := bits.Mul64(a.lo, b.lo)
	hi += a.hi*b.lo + a.lo*b.hi
	return pcgState{hi, lo}
}

// add returns a+b mod 2^128.
func (a pcgState) add(b pcgState) pcgState {
	lo, c := bits.Add64(a.lo, b.lo, 0)
	hi, _ := bits.Add64(a.hi, b.hi, c)
	return pcgState{hi, lo}
}

// pcgJumps are the affine maps state → state·m + a of LCG step counts:
// bin[i] of 2^i steps; byte[p][d] of d·256^p steps, so that a jump of
// fewer than 2^16 steps (every jump inside a dropout block) takes two
// multiply-adds.
type pcgJumps struct {
	bin  [64]pcgAffine
	byte [2][256]pcgAffine
}

// pcgAffine is the map s → s·m + a.
type pcgAffine struct{ m, a pcgState }

// then is the map f, then g.
func (f pcgAffine) then(g pcgAffine) pcgAffine {
	return pcgAffine{f.m.mul(g.m), f.a.mul(g.m).add(g.a)}
}

// apply is f(s).
func (f pcgAffine) apply(s pcgState) pcgState { return s.mul(f.m).add(f.a) }

// newPCGJumps computes the jump tables.
func newPCGJumps() *pcgJumps {
	var t pcgJumps
	t.bin[0] = pcgAffine{pcgMul, pcgInc}
	for i := 1; i < len(t.bin); i++ {
		t.bin[i] = t.bin[i-1].then(t.bin[i-1])
	}
	for p := range t.byte {
		t.byte[p][0] = pcgAffine{m: pcgState{0, 1}}
		for d := 1; d < 256; d++ {
			t.byte[p][d] = t.byte[p][d-1].then(t.bin[8*p])
		}
	}
	return &t
}

// advance steps s by n LCG steps.
func (t *pcgJumps) advance(s pcgState, n uint64) pcgState {
	if n < 1<<16 {
		if lo := n & 0xff; lo != 0 {
			s = t.byte[0][lo].apply(s)
		}
		if hi := n >> 8; hi != 0 {
			s = t.byte[1][hi].apply(s)
		}
		return s
	}
	for i := 0; n != 0; i, n = i+1, n>>1 {
		if n&1 != 0 {
			s = t.bin[i].apply(s)
		}
	}
	return s
}

// output is PCG.Uint64's DXSM output of state s (after its step).
func (s pcgState) output() uint64 {
	const cheapMul = 0xda942042e4dd58b5
	hi := s.hi
	hi ^= hi >> 32
	hi *= cheapMul
	hi ^= hi >> 48
	hi *= s.lo | 1
	return hi
}

// dropStream finds the dense input dropout's decisions of chosen elements
// in increasing order: element e of block b = e/dropoutBlock is decided by
// 16 bits of draw (e%dropoutBlock)/4 of PCG(seed, mix64(b+…)), as
// dropBlock draws them.
type dropStream struct {
	jumps  *pcgJumps
	seed   uint64
	thresh int32
	block  int64    // block of the current state (-1: none)
	draw   int64    // draws made in the block
	state  pcgState // after draw draws
	last   uint64   // the last draw's output
}

// kept reports whether element e (≥ the previous e asked) is kept.
func (d *dropStream) kept(e int64) bool {
	b, k := e/dropoutBlock, (e%dropoutBlock)/4
	if b != d.block {
		d.block, d.draw = b, 0
		d.state = pcgState{d.seed, mix64(uint64(b) + 0x9e3779b97f4a7c15)}
	}
	if k+1 != d.draw {
		d.state = d.jumps.advance(d.state, uint64(k+1-d.draw))
		d.draw = k + 1
		d.last = d.state.output()
	}
	u := int32(d.last >> (16 * uint(e&3)) & 0xffff)
	return u >= d.thresh
}

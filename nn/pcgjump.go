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

// pcgJumps are the affine maps of 2^i LCG steps: state → state·m + a for
// entry i = (m, a).
type pcgJumps [64][2]pcgState

// newPCGJumps computes the jump table.
func newPCGJumps() *pcgJumps {
	var t pcgJumps
	m, a := pcgMul, pcgInc
	for i := range t {
		t[i] = [2]pcgState{m, a}
		a = a.add(m.mul(a)) // two steps of (m, a): (m², a·m + a)
		m = m.mul(m)
	}
	return &t
}

// advance steps s by n LCG steps.
func (t *pcgJumps) advance(s pcgState, n uint64) pcgState {
	for i := 0; n != 0; i, n = i+1, n>>1 {
		if n&1 != 0 {
			s = s.mul(t[i][0]).add(t[i][1])
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

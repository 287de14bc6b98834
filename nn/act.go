package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/par"
)

// ReLU sets m = max(m, 0) in place (negative values and −0 become +0). The
// loop is branchless: signs of activations are random, and a branch per
// element costs more than the whole product around it.
func ReLU(m *dense.Matrix) {
	par.For(len(m.Data), 1<<15, func(lo, hi int) {
		d := m.Data[lo:hi]
		for i, v := range d {
			b := math.Float32bits(v)
			d[i] = math.Float32frombits(b &^ uint32(int32(b)>>31))
		}
	})
}

// ReLUBackward sets g = g·[y > 0] in place, where y is the ReLU output (any
// later in-place dropout of y keeps this exact: dropped entries already have
// a zero gradient). y holds no negative values (it is a ReLU output), so the
// test is y's bits ≠ 0, done without a branch. g and y must have the same
// shape (panics otherwise).
func ReLUBackward(g, y *dense.Matrix) {
	if !dense.SameShape(g, y) {
		panic(fmt.Sprintf("nn.ReLUBackward: shape mismatch %d×%d vs %d×%d", g.Rows, g.Cols, y.Rows, y.Cols))
	}
	par.For(len(g.Data), 1<<15, func(lo, hi int) {
		gd, yd := g.Data[lo:hi], y.Data[lo:hi]
		for i, v := range yd {
			keep := uint32(int32(-math.Float32bits(v)) >> 31) // all ones iff bits(v) in (0, 2³¹)
			gd[i] = math.Float32frombits(math.Float32bits(gd[i]) & keep)
		}
	})
}

// dropoutBlock is the number of elements per independent RNG stream of a
// dropout mask. It is fixed, so a mask depends on the seed only, never on the
// number of threads.
const dropoutBlock = 1 << 14

// Dropout is inverted dropout with rate P: in training each element is kept
// with probability 1-P and scaled by 1/(1-P); otherwise the identity. The
// mask is a pure function of the seed given to Forward (element block b is
// drawn from PCG(seed, mix(b))), so it is reproducible and parallel.
type Dropout struct {
	P float64

	mask   []uint8 // 1 for the kept elements of the last active Forward
	active bool    // whether the last Forward dropped anything
	out    *dense.Matrix
}

// Forward applies dropout to x. With train false or P == 0 it returns x
// itself and draws nothing. Otherwise it writes into a buffer owned by d, or
// into x itself when inPlace is set, and returns that.
func (d *Dropout) Forward(x *dense.Matrix, train, inPlace bool, seed uint64) *dense.Matrix {
	d.active = train && d.P > 0
	if !d.active {
		return x
	}
	out := x
	if !inPlace {
		d.out = dense.Reshape(d.out, x.Rows, x.Cols)
		out = d.out
	}
	if cap(d.mask) < len(x.Data) {
		d.mask = make([]uint8, len(x.Data))
	}
	d.mask = d.mask[:len(x.Data)]
	scale := float32(1 / (1 - d.P))
	// Keep an element when a uniform 16-bit draw is ≥ ⌈P·2¹⁶⌉: the rate is
	// exact for multiples of 2⁻¹⁶ (0.5, 0.25, …) and within 2⁻¹⁶ otherwise.
	thresh := int32(math.Ceil(d.P * (1 << 16)))
	blocks := (len(x.Data) + dropoutBlock - 1) / dropoutBlock
	par.For(blocks, 1, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			start := b * dropoutBlock
			end := min(start+dropoutBlock, len(x.Data))
			dropBlock(x.Data[start:end], out.Data[start:end], d.mask[start:end],
				rand.NewPCG(seed, mix64(uint64(b)+0x9e3779b97f4a7c15)), thresh, scale)
		}
	})
	return out
}

// dropBlock draws the mask of one block, four 16-bit decisions per 64-bit
// draw, and applies it without branches.
func dropBlock(x, out []float32, mask []uint8, src *rand.PCG, thresh int32, scale float32) {
	sc := [2]float32{0, scale}
	var bits uint64
	for i, v := range x {
		if i&3 == 0 {
			bits = src.Uint64()
		}
		u := int32(bits >> (16 * uint(i&3)) & 0xffff)
		keep := uint8(^(u-thresh)>>31) & 1 // u ≥ thresh
		mask[i] = keep
		out[i] = v * sc[keep]
	}
}

// Backward maps g = dL/d(out) to dL/dx in place (g·mask/(1-P)) and returns
// it; the identity after an inactive Forward.
func (d *Dropout) Backward(g *dense.Matrix) *dense.Matrix {
	if !d.active {
		return g
	}
	if len(g.Data) != len(d.mask) {
		panic(fmt.Sprintf("nn.Dropout.Backward: gradient has %d elements, mask %d", len(g.Data), len(d.mask)))
	}
	scale := float32(1 / (1 - d.P))
	par.For(len(g.Data), 1<<15, func(lo, hi int) {
		gd, m := g.Data[lo:hi], d.mask[lo:hi]
		sc := [2]float32{0, scale}
		for i, keep := range m {
			gd[i] *= sc[keep&1]
		}
	})
	return g
}

// mix64 is the SplitMix64 finaliser, used to derive independent stream
// selectors from small integers.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

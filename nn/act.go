package nn

import (
	"fmt"
	"math"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/dispatch"
	"github.com/supergcn/supergcn/internal/par"
	"github.com/supergcn/supergcn/internal/rowk"
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

// reluBias sets m = ReLU(m + b) in place, b added to every row (len(b) is
// m.Cols), in one pass: what dense.AddBias followed by ReLU computes, bit
// for bit (rowk's ReluBias).
func reluBias(m *dense.Matrix, b []float32) {
	k := rowk.Default()
	b = b[:m.Cols]
	par.For(m.Rows, dense.RowGrain(m.Cols), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r := m.Row(i)
			k.ReluBias(r, r, b)
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
// drawn from PCG(seed, mix(b))), so it is reproducible and parallel. The
// mask of the last active Forward is kept as one bit per element.
type Dropout struct {
	P float64

	mask   []uint64 // bit i%64 of word i/64: element i kept in the last active Forward
	n      int      // elements of the last active Forward
	active bool     // whether the last Forward dropped anything
	out    *dense.Matrix
	pool   *arena // where out comes from (nil: d keeps its own)
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
		out = d.pool.lend(&d.out, x.Rows, x.Cols)
	}
	d.n = len(x.Data)
	words := (d.n + 63) / 64
	if cap(d.mask) < words {
		d.mask = make([]uint64, words)
	}
	d.mask = d.mask[:words]
	scale := float32(1 / (1 - d.P))
	// Keep an element when a uniform 16-bit draw is ≥ ⌈P·2¹⁶⌉: the rate is
	// exact for multiples of 2⁻¹⁶ (0.5, 0.25, …) and within 2⁻¹⁶ otherwise.
	thresh := int32(math.Ceil(d.P * (1 << 16)))
	blocks := (len(x.Data) + dropoutBlock - 1) / dropoutBlock
	par.For(blocks, 1, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			start := b * dropoutBlock
			end := min(start+dropoutBlock, len(x.Data))
			dropBlock(drops, x.Data[start:end], out.Data[start:end], d.mask[start/64:(end+63)/64],
				pcg{hi: seed, lo: mix64(uint64(b) + 0x9e3779b97f4a7c15)}, thresh, scale)
		}
	})
	return out
}

// dropBlock draws the mask of one block from src (rand.NewPCG(seed,
// mix)'s stream), four 16-bit decisions per 64-bit draw, applies it without
// branches and stores it as bits (a block starts at a multiple of 64
// elements: its words are its own). Each word of 64 elements takes 16
// draws with the generator's state in registers, and its decisions and
// products on k where the CPU has the kernels (nil: none).
func dropBlock(k *wordKernels, x, out []float32, mask []uint64, src pcg, thresh int32, scale float32) {
	sc := [2]float32{0, scale}
	hi, lo := src.hi, src.lo
	n := len(x)
	out = out[:n]
	w := 0
	if k != nil && thresh <= math.MaxUint16 { // whole words on the kernel
		var u [16]uint64
		for ; w+64 <= n; w += 64 {
			for j := range u {
				hi, lo, u[j] = pcgNext(hi, lo)
			}
			mask[w>>6] = k.word(&x[w], &out[w], &u[0], uint16(thresh), scale)
		}
	}
	for ; w < n; w += 64 {
		e := min(w+64, n)
		xs, os := x[w:e], out[w:e]
		var word uint64
		for j := 0; j < len(xs); j += 4 {
			var bits uint64
			hi, lo, bits = pcgNext(hi, lo)
			if j+4 > len(xs) { // the block's last elements
				for q := range len(xs) - j {
					keep := dropKeep(bits>>(16*uint(q)), thresh)
					word |= keep << uint(j+q)
					os[j+q] = xs[j+q] * sc[keep]
				}
				break
			}
			q, o := xs[j:j+4:j+4], os[j:j+4:j+4]
			k0, k1 := dropKeep(bits, thresh), dropKeep(bits>>16, thresh)
			k2, k3 := dropKeep(bits>>32, thresh), dropKeep(bits>>48, thresh)
			word |= (k0 | k1<<1 | k2<<2 | k3<<3) << uint(j)
			o[0], o[1], o[2], o[3] = q[0]*sc[k0], q[1]*sc[k1], q[2]*sc[k2], q[3]*sc[k3]
		}
		mask[w>>6] = word
	}
}

// wordKernels apply dropout to 64 elements at a time (drop_amd64.s):
// word sets out[j] = x[j]·(u_j ≥ thresh ? scale : 0), u_j the 16-bit
// lane j of u[0:16] (lane 0 the low bits of u[0]), and returns the kept
// elements as bits; apply sets out[j] = x[j]·(bit j of word ? scale : 0).
// Both compute what the scalar loops compute, bit for bit.
type wordKernels struct {
	word  func(x, out *float32, u *uint64, thresh uint16, scale float32) uint64
	apply func(x, out *float32, word uint64, scale float32)
}

// drops are the dropout kernels in use (nil: none, the Go loops): those
// SUPERGCN_KERNEL names (read once, when the process starts), else the
// best this CPU runs; "generic" and the names without kernels of their
// own ("avx2", "neon", "sve") run the Go loops.
var drops = func() *wordKernels {
	f := dispatch.NewFamily(append(archDropWords(), dispatch.Impl[*wordKernels]{Name: dispatch.Generic}),
		map[string]string{"avx2": dispatch.Generic, "neon": dispatch.Generic, "sve": dispatch.Generic})
	im, err := f.Lookup("")
	if err != nil {
		im = f.Best()
	}
	return im.Impl
}()

// applyWords sets out = x·(kept ? scale : 0) over whole words [lo, hi)
// of the mask (in place when out is x), on k where the CPU has it; the
// last word may be partial.
func applyWords(k *wordKernels, x, out []float32, mask []uint64, lo, hi int, scale float32) {
	sc := [2]float32{0, scale}
	for w := lo; w < hi; w++ {
		s, e := w*64, min(w*64+64, len(x))
		if k != nil && e-s == 64 {
			k.apply(&x[s], &out[s], mask[w], scale)
			continue
		}
		for i := s; i < e; i++ {
			out[i] = x[i] * sc[mask[w]>>(uint(i)&63)&1]
		}
	}
}

// dropKeep is 1 when the 16-bit decision in the low bits of u keeps its
// element (u ≥ thresh), 0 when it drops it.
func dropKeep(u uint64, thresh int32) uint64 {
	return uint64(^(int32(u&0xffff)-thresh)>>31) & 1
}

// kept reports whether element i was kept by the last active Forward.
func (d *Dropout) kept(i int) uint64 { return d.mask[i>>6] >> (uint(i) & 63) & 1 }

// Backward maps g = dL/d(out) to dL/dx in place (g·mask/(1-P)) and returns
// it; the identity after an inactive Forward.
func (d *Dropout) Backward(g *dense.Matrix) *dense.Matrix {
	if !d.active {
		return g
	}
	if len(g.Data) != d.n {
		panic(fmt.Sprintf("nn.Dropout.Backward: gradient has %d elements, mask %d", len(g.Data), d.n))
	}
	scale := float32(1 / (1 - d.P))
	par.For(len(d.mask), 1<<9, func(lo, hi int) {
		applyWords(drops, g.Data, g.Data, d.mask, lo, hi, scale)
	})
	return g
}

// restore recomputes the output of the last active out-of-place Forward on
// x (the same input, unmodified) from the kept mask into a buffer owned by
// d, bit for bit what Forward returned, and returns it: the Model gives the
// input dropout's output back to its pool after the first layer's forward
// and restores it for that layer's backward.
func (d *Dropout) restore(x *dense.Matrix) *dense.Matrix {
	if len(x.Data) != d.n {
		panic(fmt.Sprintf("nn.Dropout.restore: input has %d elements, mask %d", len(x.Data), d.n))
	}
	out := d.pool.lend(&d.out, x.Rows, x.Cols)
	scale := float32(1 / (1 - d.P))
	par.For(len(d.mask), 1<<9, func(lo, hi int) {
		applyWords(drops, x.Data, out.Data, d.mask, lo, hi, scale)
	})
	return out
}

// release gives the out-of-place output back to the pool.
func (d *Dropout) release() { d.pool.reclaim(&d.out) }

// mix64 is the SplitMix64 finaliser, used to derive independent stream
// selectors from small integers.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

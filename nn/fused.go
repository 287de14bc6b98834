package nn

import (
	"math"
	"math/rand/v2"
	"sync/atomic"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/par"
)

// hiddenAct is the elementwise stage after hidden convolution i, fused
// into one pass over the activation forward and one backward:
//
//	h = dropout(ReLU(LayerNorm(o + b)))    (LayerNorm optional)
//
// where o is the convolution's output without its bias b (the convolution
// defers the bias to this pass). It computes what LayerNorm.Forward, ReLU
// and Dropout.Forward compute one after the other, with the same dropout
// masks (the same streams per block of dropoutBlock elements) and the same
// rounding, but it reads o once and writes h once, and it keeps less for
// the backward pass:
//   - no dropout mask: h > 0 exactly where both the ReLU and the mask let
//     the gradient through, so backward needs h only;
//   - no normalised copy x̂ with LayerNorm: backward recomputes it from o
//     (which the stage keeps, h being a separate buffer), b and the row's
//     mean and 1/std;
//   - backward overwrites the incoming gradient in place.
//
// Without LayerNorm h overwrites o.
type hiddenAct struct {
	norm *LayerNorm // nil without normalisation (only its parameters and Eps are used)
	p    float64    // dropout rate
	bias []float32  // the convolution's bias (values), added here

	o, h       *dense.Matrix // conv output and activation of the last forward (o == h without norm)
	buf        *dense.Matrix // h's storage with norm (from pool, or kept across calls without one)
	mean, rstd []float64     // per row of the last forward, with norm
	active     bool          // the last forward dropped
	pool       *arena        // the Model's buffer pool (nil: buf is the stage's own)
	nonFinite  atomic.Bool   // h of the last forward held a NaN or an infinity (set by backward, which reads all of h)
}

// forward computes h from the convolution output o (bias not added) and
// returns it. With train and p > 0 it applies dropout with seed.
func (a *hiddenAct) forward(o *dense.Matrix, train bool, seed uint64) *dense.Matrix {
	rows, cols := o.Rows, o.Cols
	a.active = train && a.p > 0
	a.o, a.h = o, o
	if a.norm != nil {
		a.h = a.pool.lend(&a.buf, rows, cols)
		if cap(a.mean) < rows {
			a.mean, a.rstd = make([]float64, rows), make([]float64, rows)
		}
		a.mean, a.rstd = a.mean[:rows], a.rstd[:rows]
	}
	if !a.active {
		par.For(rows, dense.RowGrain(cols), func(lo, hi int) {
			for r := lo; r < hi; r++ {
				a.row(r, 0, cols, true, nil, 0, 0, 0, nil)
			}
		})
		return a.h
	}
	scale := float32(1 / (1 - a.p))
	thresh := int32(math.Ceil(a.p * (1 << 16))) // as Dropout.Forward
	total := rows * cols
	blocks := (total + dropoutBlock - 1) / dropoutBlock
	par.For(blocks, 1, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			s, e := b*dropoutBlock, min((b+1)*dropoutBlock, total)
			src := rand.NewPCG(seed, mix64(uint64(b)+0x9e3779b97f4a7c15))
			var bits uint64 // the current draw, carried across rows
			for r := s / cols; r*cols < e; r++ {
				j0, j1 := max(s-r*cols, 0), min(e-r*cols, cols)
				// A row split between two blocks: the block holding its
				// first element stores its statistics.
				a.row(r, j0, j1, j0 == 0, src, s, thresh, scale, &bits)
			}
		}
	})
	return a.h
}

// finiteBits is the exponent field of a float32: v is a NaN or an infinity
// exactly when bits(v)&finiteBits == finiteBits.
const finiteBits = 0x7f800000

// noteFinite records a non-finite value of h: fin, the minimum over a
// range of h of bits(v)&finiteBits^finiteBits, is 0.
func (a *hiddenAct) noteFinite(fin uint32) {
	if fin == 0 {
		a.nonFinite.Store(true)
	}
}

// release gives h's storage back to the pool (with norm; without, h is the
// convolution's output, which the convolution gives back) and forgets the
// last forward.
func (a *hiddenAct) release() {
	a.pool.reclaim(&a.buf)
	a.o, a.h = nil, nil
}

// row computes h[r][j0:j1]. With src (dropout active) element k = r·cols+j
// draws from src the decision of its offset k-s in its dropout block, four
// 16-bit decisions per 64-bit draw, as dropBlock; the elements of a block
// are visited in order, so the draws come in the same order; *bits carries
// the current draw from one row to the next.
func (a *hiddenAct) row(r, j0, j1 int, store bool, src *rand.PCG, s int, thresh int32, scale float32, bits *uint64) {
	cols := a.o.Cols
	or := a.o.Row(r)
	bias := a.bias[:cols]
	hr := a.h.Row(r)[j0:j1]
	if a.norm == nil {
		b := bias[j0:j1]
		for j, v := range or[j0:j1] {
			hr[j] = relu(v + b[j])
		}
	} else {
		var mean float64
		for j, v := range or {
			mean += float64(v + bias[j])
		}
		mean /= float64(cols)
		var sq float64
		for j, v := range or {
			d := float64(v+bias[j]) - mean
			sq += d * d
		}
		rstd := 1 / math.Sqrt(sq/float64(cols)+a.norm.Eps)
		if store {
			a.mean[r], a.rstd[r] = mean, rstd
		}
		b, gamma, beta := bias[j0:j1], a.norm.Gamma.W[j0:j1], a.norm.Beta.W[j0:j1]
		gamma, beta = gamma[:len(hr)], beta[:len(hr)]
		for j, v := range or[j0:j1] {
			hr[j] = relu(float32((float64(v+b[j])-mean)*rstd)*gamma[j] + beta[j])
		}
	}
	if src == nil {
		return
	}
	sc := [2]float32{0, scale}
	k, cur := r*cols+j0-s, *bits
	for j, v := range hr {
		if q := uint(k+j) & 3; q == 0 {
			cur = src.Uint64()
		}
		u := int32(cur >> (16 * (uint(k+j) & 3)) & 0xffff)
		hr[j] = v * sc[uint8(^(u-thresh)>>31)&1]
	}
	*bits = cur
}

// relu is max(v, 0) with −0 and negatives to +0, without a branch, as ReLU.
func relu(v float32) float32 {
	b := math.Float32bits(v)
	return math.Float32frombits(b &^ uint32(int32(b)>>31))
}

// backward maps g = dL/dh (the next convolution's input gradient, which
// the stage may overwrite) to dL/do = dL/d(o+b) in place and returns g; with
// normalisation it sets the LayerNorm's Gamma.G and Beta.G. It computes
// what Dropout.Backward, ReLUBackward and LayerNorm.Backward compute one
// after the other, with the same rounding and summation order.
func (a *hiddenAct) backward(g *dense.Matrix) *dense.Matrix {
	scale := float32(1)
	if a.active {
		scale = float32(1 / (1 - a.p))
	}
	a.nonFinite.Store(false)
	if a.norm == nil {
		par.For(len(g.Data), 1<<15, func(lo, hi int) {
			a.noteFinite(gateRange(g.Data[lo:hi], a.h.Data[lo:hi], scale, a.active))
		})
		return g
	}
	dim := a.norm.Dim
	gamma, bias := a.norm.Gamma.W, a.bias
	dense.ColReduce(g.Rows, 2*dim, func(lo, hi int, acc []float64) {
		xh := make([]float32, dim)
		fin := uint32(finiteBits)
		for i := lo; i < hi; i++ {
			gr, or := g.Row(i), a.o.Row(i)
			fin = min(fin, gateRange(gr, a.h.Row(i), scale, a.active))
			mean, rstd := a.mean[i], a.rstd[i]
			var sg, sgx float64
			for j, v := range gr {
				x := float32((float64(or[j]+bias[j]) - mean) * rstd)
				xh[j] = x
				acc[j] += float64(v * x)
				acc[dim+j] += float64(v)
				gh := float64(v * gamma[j])
				sg += gh
				sgx += gh * float64(x)
			}
			sg /= float64(dim)
			sgx /= float64(dim)
			r := float64(float32(rstd)) // as LayerNorm.Backward, which keeps 1/std in float32
			for j, v := range gr {
				gh := float64(v * gamma[j])
				gr[j] = float32(r * (gh - sg - float64(xh[j])*sgx))
			}
		}
		a.noteFinite(fin)
	}, func(sum []float64) {
		for j := range dim {
			a.norm.Gamma.G[j] = float32(sum[j])
			a.norm.Beta.G[j] = float32(sum[dim+j])
		}
	})
	return g
}

// gateRange sets g = g·scale where h > 0 (with dropout active; g where
// h > 0 without) and +0 elsewhere: the gradient through dropout (h is 0
// wherever the mask dropped) and the ReLU (h is its output, never
// negative), without a branch. It returns the minimum over h of
// bits(v)&finiteBits^finiteBits: 0 when h holds a NaN or an infinity.
func gateRange(g, h []float32, scale float32, active bool) uint32 {
	h = h[:len(g)]
	fin := uint32(finiteBits)
	if active {
		for i, v := range h {
			b := math.Float32bits(v)
			keep := uint32(int32(-b) >> 31) // all ones iff b in (0, 2³¹)
			g[i] = math.Float32frombits(math.Float32bits(g[i]*scale) & keep)
			fin = min(fin, b&finiteBits^finiteBits)
		}
		return fin
	}
	for i, v := range h {
		b := math.Float32bits(v)
		keep := uint32(int32(-b) >> 31)
		g[i] = math.Float32frombits(math.Float32bits(g[i]) & keep)
		fin = min(fin, b&finiteBits^finiteBits)
	}
	return fin
}

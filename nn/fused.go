package nn

import (
	"math"
	"sync/atomic"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/par"
	"github.com/supergcn/supergcn/internal/rowk"
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
	// kern is the row kernel set (Model.SetKernel; every set rounds as the
	// generic one, so the choice changes speed only)
	kern rowk.Set
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
			xb := a.scratch(cols)
			for r := lo; r < hi; r++ {
				a.row(r, 0, cols, true, nil, 0, 0, 0, nil, xb, nil)
			}
		})
		return a.h
	}
	scale := float32(1 / (1 - a.p))
	thresh := int32(math.Ceil(a.p * (1 << 16))) // as Dropout.Forward
	total := rows * cols
	blocks := (total + dropoutBlock - 1) / dropoutBlock
	par.For(blocks, 1, func(lo, hi int) {
		xb := a.scratch(cols)
		u := make([]uint16, cols+3) // the row's dropout decisions
		for b := lo; b < hi; b++ {
			s, e := b*dropoutBlock, min((b+1)*dropoutBlock, total)
			// rand.NewPCG(seed, …)'s stream, as Dropout.Forward
			src := &pcg{hi: seed, lo: mix64(uint64(b) + 0x9e3779b97f4a7c15)}
			var bits uint64 // the current draw, carried across rows
			for r := s / cols; r*cols < e; r++ {
				j0, j1 := max(s-r*cols, 0), min(e-r*cols, cols)
				// A row split between two blocks: the block holding its
				// first element stores its statistics.
				a.row(r, j0, j1, j0 == 0, src, s, thresh, scale, &bits, xb, u)
			}
		}
	})
	return a.h
}

// finiteBits is the exponent field of a float32: v is a NaN or an infinity
// exactly when bits(v)&finiteBits == finiteBits.
const finiteBits = 0x7f800000

// noteFinite records a non-finite value of h: fin, the minimum of
// gateRange's results over a range of h, is 0.
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

// scratch returns a row of cols float64 for row's biased input (o + b,
// rounded to float32, then widened) with normalisation; nil without.
func (a *hiddenAct) scratch(cols int) []float64 {
	if a.norm == nil {
		return nil
	}
	return make([]float64, cols)
}

// row computes h[r][j0:j1]. With src (dropout active) element k = r·cols+j
// draws from src the decision of its offset k-s in its dropout block, four
// 16-bit decisions per 64-bit draw, as dropBlock; the elements of a block
// are visited in order, so the draws come in the same order; *bits carries
// the current draw from one row to the next. With normalisation xb is a
// scratch row of cols elements (see scratch) and u, with src, one of
// cols+3 decisions (see drawRow).
func (a *hiddenAct) row(r, j0, j1 int, store bool, src *pcg, s int, thresh int32, scale float32, bits *uint64, xb []float64, u []uint16) {
	cols := a.o.Cols
	or := a.o.Row(r)
	bias := a.bias[:cols]
	hr := a.h.Row(r)[j0:j1]
	n := len(hr)
	if a.norm == nil {
		or, b := or[j0:j1][:n], bias[j0:j1][:n]
		if src != nil {
			*bits = drawRow(u, n, uint(r*cols+j0-s), src, *bits)
			a.kern.ReluBiasDrop(hr, or, b, u, thresh, scale)
			return
		}
		a.kern.ReluBias(hr, or, b)
		return
	}
	xb = xb[:cols]
	mean, rstd := biasStats(a.kern, xb, or, bias, a.norm.Eps)
	if store {
		a.mean[r], a.rstd[r] = mean, rstd
	}
	x, gamma, beta := xb[j0:j1][:n], a.norm.Gamma.W[j0:j1][:n], a.norm.Beta.W[j0:j1][:n]
	if src != nil {
		*bits = drawRow(u, n, uint(r*cols+j0-s), src, *bits)
		a.kern.NormDrop(hr, x, gamma, beta, u, mean, rstd, thresh, scale)
		return
	}
	a.kern.Norm(hr, x, gamma, beta, mean, rstd)
}

// drawRow sets u[j], j < n, to the 16-bit dropout decision of block
// offset k+j, drawn from src as dropRow draws them (four decisions per
// 64-bit draw, a new draw at each offset ≡ 0 (mod 4); cur is the current
// draw on entry) and returns the current draw on exit; len(u) ≥ n+3.
// rowk's NormDrop then applies them: the normalisation and dropout in one
// pass, rounded as the two passes.
func drawRow(u []uint16, n int, k uint, src *pcg, cur uint64) uint64 {
	j := 0
	for ; j < n && (k+uint(j))&3 != 0; j++ { // up to the next draw
		u[j] = uint16(cur >> (16 * ((k + uint(j)) & 3)))
	}
	hi, lo := src.hi, src.lo // in registers for the row
	for ; j < n; j += 4 {
		hi, lo, cur = pcgNext(hi, lo)
		q := u[j : j+4 : j+4]
		q[0], q[1], q[2], q[3] = uint16(cur), uint16(cur>>16), uint16(cur>>32), uint16(cur>>48)
	}
	src.hi, src.lo = hi, lo
	return cur
}

// backward maps g = dL/dh (the next convolution's input gradient, which
// the stage may overwrite) to dL/do = dL/d(o+b) in place and returns g; with
// normalisation it sets the LayerNorm's Gamma.G and Beta.G. It computes
// what Dropout.Backward, ReLUBackward and LayerNorm.Backward compute one
// after the other, with the same rounding and summation order.
// The row sums of LayerNorm (here and in LayerNorm.Forward/Backward) run
// as eight partial sums in a fixed order (see rowStats), shared through
// rowStats/biasStats/rowRstd, gradStats/normGradRow and normGradOut.
func (a *hiddenAct) backward(g *dense.Matrix) *dense.Matrix {
	scale := float32(1)
	if a.active {
		scale = float32(1 / (1 - a.p))
	}
	a.nonFinite.Store(false)
	if a.norm == nil {
		par.For(len(g.Data), 1<<15, func(lo, hi int) {
			a.noteFinite(gateRange(a.kern, g.Data[lo:hi], a.h.Data[lo:hi], scale, a.active))
		})
		return g
	}
	dim := a.norm.Dim
	gamma, bias := a.norm.Gamma.W, a.bias
	dense.ColReduce(g.Rows, 2*dim, func(lo, hi int, acc []float64) {
		n := dim
		xh := make([]float32, n)
		ag, ab, bias, gamma := acc[:n], acc[n : 2*n][:n], bias[:n], gamma[:n]
		xh = xh[:n]
		fin := uint32(finiteBits)
		for i := lo; i < hi; i++ {
			gr, or := g.Row(i)[:n], a.o.Row(i)[:n]
			mean, rstd := a.mean[i], a.rstd[i]
			sg, sgx, f := normGradRow(a.kern, gr, a.h.Row(i), or, bias, gamma, xh, ag, ab, mean, rstd, scale, a.active)
			fin = min(fin, f)
			normGradOut(a.kern, gr, gr, gamma, xh, float64(float32(rstd)), sg, sgx) // 1/std in float32, as LayerNorm.Backward keeps it
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
// negative), without a branch (rowk's Gate). It returns 0 when h holds a
// NaN or an infinity, finiteBits otherwise.
func gateRange(k rowk.Set, g, h []float32, scale float32, active bool) uint32 {
	return k.Gate(g, h, scale, active)
}

// normGradRow is one row of the fused backward's first pass: it gates g
// in place as gateRange(g, h, scale, active) does (and returns what that
// returns as fin), recomputes x̂ = (o+b-mean)·rstd into xh, adds g·x̂ and g
// to the column sums ag and ab, and returns gradStats(g, gamma, xh), with
// the same partial sums in the same order, all in one pass (rowk's
// NormGrad). All slices have len(g) elements.
func normGradRow(k rowk.Set, g, h, o, bias, gamma, xh []float32, ag, ab []float64, mean, rstd float64, scale float32, active bool) (sg, sgx float64, fin uint32) {
	return k.NormGrad(g, h, o, bias, gamma, xh, ag, ab, mean, rstd, scale, active)
}

// normGradOut sets dst[j] = rstd·(ĝ_j - sg - x̂_j·sgx), ĝ_j = g[j]·gamma[j]
// (the product rounded to float32, then widened): the LayerNorm input
// gradient of one row (rowk's NormGradOut). LayerNorm.Backward and the
// fused stage (in place, dst = g) both use it.
func normGradOut(k rowk.Set, dst, g, gamma, xh []float32, rstd, sg, sgx float64) {
	k.NormGradOut(dst, g, gamma, xh, rstd, sg, sgx)
}

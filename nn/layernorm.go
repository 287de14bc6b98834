package nn

import (
	"math"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/par"
	"github.com/supergcn/supergcn/internal/rowk"
)

// LayerNorm normalises each row over its features, like torch.nn.LayerNorm
// with elementwise affine: y = (x - mean)/sqrt(var + Eps)·gamma + beta, with
// the biased variance. gamma starts at 1 and beta at 0. Statistics are
// accumulated in float64.
type LayerNorm struct {
	Dim         int
	Eps         float64
	Gamma, Beta *Param

	xhat, out, gx *dense.Matrix
	rstd          []float32 // 1/sqrt(var+eps) per row of the last Forward
	kern          rowk.Set  // the row kernels (NewLayerNorm: rowk.Default; a Model's: Model.SetKernel)
}

// NewLayerNorm returns a LayerNorm over dim features with parameters
// name+".weight" (gamma) and name+".bias" (beta), eps 1e-5.
func NewLayerNorm(name string, dim int) *LayerNorm {
	l := &LayerNorm{Dim: dim, Eps: LayerNormEps, kern: rowk.Default(),
		Gamma: newParam(name+".weight", 1, dim),
		Beta:  newParam(name+".bias", 1, dim)}
	for i := range l.Gamma.W {
		l.Gamma.W[i] = 1
	}
	return l
}

// Params returns gamma and beta.
func (l *LayerNorm) Params() []*Param { return []*Param{l.Gamma, l.Beta} }

// Forward normalises the rows of x (x.Cols must be Dim; panics otherwise) into
// a buffer owned by l and returns it.
func (l *LayerNorm) Forward(x *dense.Matrix) *dense.Matrix {
	if x.Cols != l.Dim {
		panic("nn.LayerNorm.Forward: input width differs from Dim")
	}
	l.xhat = dense.Reshape(l.xhat, x.Rows, x.Cols)
	l.out = dense.Reshape(l.out, x.Rows, x.Cols)
	if cap(l.rstd) < x.Rows {
		l.rstd = make([]float32, x.Rows)
	}
	l.rstd = l.rstd[:x.Rows]
	gamma, beta := l.Gamma.W, l.Beta.W
	par.For(x.Rows, dense.RowGrain(x.Cols), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row, xh, y := x.Row(i), l.xhat.Row(i), l.out.Row(i)
			mean, rstd := rowStats(row, l.Eps)
			l.rstd[i] = float32(rstd)
			xh, y = xh[:len(row)], y[:len(row)]
			g, b := gamma[:len(row)], beta[:len(row)]
			for j, v := range row {
				h := float32((float64(v) - mean) * rstd)
				xh[j] = h
				y[j] = float32(h*g[j]) + b[j] // rounded as the fused stage (no FMA)
			}
		}
	})
	return l.out
}

// Backward sets Gamma.G and Beta.G from g = dL/dy and returns dL/dx in a
// buffer owned by l:
//
//	dx = rstd·(ĝ - mean(ĝ) - x̂·mean(ĝ·x̂)),  ĝ = g·gamma.
func (l *LayerNorm) Backward(g *dense.Matrix) *dense.Matrix {
	if l.xhat == nil || !dense.SameShape(g, l.xhat) {
		panic("nn.LayerNorm.Backward: gradient shape differs from the last Forward")
	}
	dim := l.Dim
	dense.ColReduce(g.Rows, 2*dim, func(lo, hi int, acc []float64) {
		for i := lo; i < hi; i++ {
			gr, xh := g.Row(i), l.xhat.Row(i)
			for j, v := range gr {
				acc[j] += float64(v * xh[j])
				acc[dim+j] += float64(v)
			}
		}
	}, func(sum []float64) {
		for j := range dim {
			l.Gamma.G[j] = float32(sum[j])
			l.Beta.G[j] = float32(sum[dim+j])
		}
	})
	l.gx = dense.Reshape(l.gx, g.Rows, g.Cols)
	gamma := l.Gamma.W
	par.For(g.Rows, dense.RowGrain(g.Cols), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			gr, xh, gx := g.Row(i), l.xhat.Row(i), l.gx.Row(i)
			sg, sgx := gradStats(gr, gamma, xh)
			normGradOut(l.kern, gx, gr, gamma, xh, float64(l.rstd[i]), sg, sgx)
		}
	})
	return l.gx
}

// rowStats returns the mean of x and 1/sqrt(var+eps) with the biased
// variance, accumulated in float64. Each sum runs as eight independent
// partial sums (element j into partial j mod 8, the partials added as
// rowk.Sum8) rather than one serial chain of float64 additions, so the
// loops run at the adder's throughput rather than its latency. The fused
// hidden stage (through biasStats) and LayerNorm.Forward both use this
// order, so they round identically; it depends on the row only, not on
// the threads.
func rowStats(x []float32, eps float64) (mean, rstd float64) {
	n := len(x)
	var s0, s1, s2, s3, s4, s5, s6, s7 float64
	j := 0
	for ; j+8 <= n; j += 8 {
		q := x[j : j+8 : j+8]
		s0 += float64(q[0])
		s1 += float64(q[1])
		s2 += float64(q[2])
		s3 += float64(q[3])
		s4 += float64(q[4])
		s5 += float64(q[5])
		s6 += float64(q[6])
		s7 += float64(q[7])
	}
	s := [8]float64{s0, s1, s2, s3, s4, s5, s6, s7}
	for k, v := range x[j:] { // the last n mod 8 elements, into partials 0..6
		s[k] += float64(v)
	}
	mean = rowk.Sum8(&s) / float64(n)
	return mean, rowRstd(x, mean, eps)
}

// biasStats sets x = o + bias (rounded to float32, as dense.AddBias, and
// widened) and returns rowStats of the biased row, the sums in the same
// order, with the mean taken in the same pass that writes x (rowk's
// BiasStats).
func biasStats(k rowk.Set, x []float64, o, bias []float32, eps float64) (mean, rstd float64) {
	return k.BiasStats(x, o, bias, eps)
}

// rowRstd returns 1/sqrt(var+eps), var = mean((x-mean)²), with the sum of
// squares in rowStats' order; x float32 or the same values widened.
func rowRstd[T float32 | float64](x []T, mean, eps float64) float64 {
	n := len(x)
	var s0, s1, s2, s3, s4, s5, s6, s7 float64
	j := 0
	for ; j+8 <= n; j += 8 {
		q := x[j : j+8 : j+8]
		d0, d1, d2, d3 := float64(q[0])-mean, float64(q[1])-mean, float64(q[2])-mean, float64(q[3])-mean
		d4, d5, d6, d7 := float64(q[4])-mean, float64(q[5])-mean, float64(q[6])-mean, float64(q[7])-mean
		s0 += float64(d0 * d0)
		s1 += float64(d1 * d1)
		s2 += float64(d2 * d2)
		s3 += float64(d3 * d3)
		s4 += float64(d4 * d4)
		s5 += float64(d5 * d5)
		s6 += float64(d6 * d6)
		s7 += float64(d7 * d7)
	}
	s := [8]float64{s0, s1, s2, s3, s4, s5, s6, s7}
	for k, v := range x[j:] {
		d := float64(v) - mean
		s[k] += float64(d * d)
	}
	return 1 / math.Sqrt(rowk.Sum8(&s)/float64(n)+eps)
}

// gradStats returns mean(ĝ) and mean(ĝ·x̂) over a row, ĝ = g·gamma (the
// product rounded to float32, then widened), accumulated in float64 as
// eight partial sums in rowStats' order. The fused hidden stage and
// LayerNorm.Backward both use it, so they round identically.
func gradStats(g, gamma, xh []float32) (sg, sgx float64) {
	n := len(g)
	gamma, xh = gamma[:n], xh[:n]
	var a, b [8]float64
	j := 0
	for ; j+8 <= n; j += 8 {
		q, m, x := g[j:j+8:j+8], gamma[j:j+8:j+8], xh[j:j+8:j+8]
		h0, h1, h2, h3 := float64(q[0]*m[0]), float64(q[1]*m[1]), float64(q[2]*m[2]), float64(q[3]*m[3])
		h4, h5, h6, h7 := float64(q[4]*m[4]), float64(q[5]*m[5]), float64(q[6]*m[6]), float64(q[7]*m[7])
		a[0], a[1], a[2], a[3] = a[0]+h0, a[1]+h1, a[2]+h2, a[3]+h3
		a[4], a[5], a[6], a[7] = a[4]+h4, a[5]+h5, a[6]+h6, a[7]+h7
		b[0] += float64(h0 * float64(x[0]))
		b[1] += float64(h1 * float64(x[1]))
		b[2] += float64(h2 * float64(x[2]))
		b[3] += float64(h3 * float64(x[3]))
		b[4] += float64(h4 * float64(x[4]))
		b[5] += float64(h5 * float64(x[5]))
		b[6] += float64(h6 * float64(x[6]))
		b[7] += float64(h7 * float64(x[7]))
	}
	for k := range n - j { // the last n mod 8 elements, into partials 0..6
		h := float64(g[j+k] * gamma[j+k])
		a[k] += h
		b[k] += float64(h * float64(xh[j+k]))
	}
	return rowk.Sum8(&a) / float64(n), rowk.Sum8(&b) / float64(n)
}

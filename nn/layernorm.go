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
// variance, accumulated in float64. Each sum runs as four independent
// partial sums (element j into partial j mod 4, the partials added as
// (p0+p1)+(p2+p3)) rather than one serial chain of float64 additions, so
// the loops run at the adder's throughput rather than its latency. The
// fused hidden stage (through biasStats) and LayerNorm.Forward both use
// this order, so they round identically; it depends on the row only, not
// on the threads.
func rowStats(x []float32, eps float64) (mean, rstd float64) {
	n := len(x)
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= n; j += 4 {
		q := x[j : j+4 : j+4]
		s0 += float64(q[0])
		s1 += float64(q[1])
		s2 += float64(q[2])
		s3 += float64(q[3])
	}
	switch q := x[j:]; len(q) {
	case 3:
		s2 += float64(q[2])
		fallthrough
	case 2:
		s1 += float64(q[1])
		fallthrough
	case 1:
		s0 += float64(q[0])
	}
	mean = ((s0 + s1) + (s2 + s3)) / float64(n)
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
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= n; j += 4 {
		q := x[j : j+4 : j+4]
		d0, d1 := float64(q[0])-mean, float64(q[1])-mean
		d2, d3 := float64(q[2])-mean, float64(q[3])-mean
		s0 += float64(d0 * d0)
		s1 += float64(d1 * d1)
		s2 += float64(d2 * d2)
		s3 += float64(d3 * d3)
	}
	switch q := x[j:]; len(q) {
	case 3:
		d := float64(q[2]) - mean
		s2 += float64(d * d)
		fallthrough
	case 2:
		d := float64(q[1]) - mean
		s1 += float64(d * d)
		fallthrough
	case 1:
		d := float64(q[0]) - mean
		s0 += float64(d * d)
	}
	sq := (s0 + s1) + (s2 + s3)
	return 1 / math.Sqrt(sq/float64(n)+eps)
}

// gradStats returns mean(ĝ) and mean(ĝ·x̂) over a row, ĝ = g·gamma (the
// product rounded to float32, then widened), accumulated in float64 as
// four partial sums in rowStats' order. The fused hidden stage and
// LayerNorm.Backward both use it, so they round identically.
func gradStats(g, gamma, xh []float32) (sg, sgx float64) {
	n := len(g)
	gamma, xh = gamma[:n], xh[:n]
	var a0, a1, a2, a3, b0, b1, b2, b3 float64
	j := 0
	for ; j+4 <= n; j += 4 {
		q, m, x := g[j:j+4:j+4], gamma[j:j+4:j+4], xh[j:j+4:j+4]
		h0, h1 := float64(q[0]*m[0]), float64(q[1]*m[1])
		h2, h3 := float64(q[2]*m[2]), float64(q[3]*m[3])
		a0 += h0
		a1 += h1
		a2 += h2
		a3 += h3
		b0 += float64(h0 * float64(x[0]))
		b1 += float64(h1 * float64(x[1]))
		b2 += float64(h2 * float64(x[2]))
		b3 += float64(h3 * float64(x[3]))
	}
	for k := range n - j { // the last n mod 4 elements, into partials 0, 1, 2
		h := float64(g[j+k] * gamma[j+k])
		switch k {
		case 0:
			a0 += h
			b0 += float64(h * float64(xh[j+k]))
		case 1:
			a1 += h
			b1 += float64(h * float64(xh[j+k]))
		case 2:
			a2 += h
			b2 += float64(h * float64(xh[j+k]))
		}
	}
	return ((a0 + a1) + (a2 + a3)) / float64(n), ((b0 + b1) + (b2 + b3)) / float64(n)
}

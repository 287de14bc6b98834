package nn

import (
	"math"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/par"
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
}

// NewLayerNorm returns a LayerNorm over dim features with parameters
// name+".weight" (gamma) and name+".bias" (beta), eps 1e-5.
func NewLayerNorm(name string, dim int) *LayerNorm {
	l := &LayerNorm{Dim: dim, Eps: 1e-5,
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
			var mean, sq float64
			for _, v := range row {
				mean += float64(v)
			}
			mean /= float64(len(row))
			for _, v := range row {
				d := float64(v) - mean
				sq += d * d
			}
			rstd := 1 / math.Sqrt(sq/float64(len(row))+l.Eps)
			l.rstd[i] = float32(rstd)
			for j, v := range row {
				h := float32((float64(v) - mean) * rstd)
				xh[j] = h
				y[j] = h*gamma[j] + beta[j]
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
			var sg, sgx float64
			for j, v := range gr {
				gh := float64(v * gamma[j])
				sg += gh
				sgx += gh * float64(xh[j])
			}
			sg /= float64(dim)
			sgx /= float64(dim)
			rstd := float64(l.rstd[i])
			for j, v := range gr {
				gh := float64(v * gamma[j])
				gx[j] = float32(rstd * (gh - sg - float64(xh[j])*sgx))
			}
		}
	})
	return l.gx
}

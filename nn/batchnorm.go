package nn

import (
	"math"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/par"
)

// Reducer sums float64 vectors over the ranks of a distributed run, in
// place, every rank getting the same sums. A Model's graph operator
// supplies it when its rows are one part of a distributed graph (package
// exchange's Propagator); an operator without it holds every row.
type Reducer interface {
	SumFloat64(x []float64) error
}

// BatchNorm normalises each feature over all nodes of the graph, every
// rank's rows, like torch.nn.BatchNorm1d (PyG's BatchNorm) on the whole
// node set: in training passes with the batch mean and biased variance
// (statistics summed over the ranks by the operator's Reducer: the
// normalisation of one process), updating the running mean and the running
// unbiased variance with momentum 0.1; in evaluation passes with the
// running statistics. gamma starts at 1, beta at 0, the running mean at 0
// and the running variance at 1. The running statistics are parameters
// without a gradient (G stays 0, never decayed), so that checkpoints hold
// them; every rank updates them from the same sums.
type BatchNorm struct {
	Dim           int
	Eps, Momentum float64
	Gamma, Beta   *Param
	Mean, Var     *Param // running statistics

	sum           Reducer // nil: the rows are all the rows
	xhat, out, gx *dense.Matrix
	rstd          []float64 // per feature, of the last Forward
	n             float64   // rows over every rank in the last training Forward
	train         bool      // the last Forward normalised with batch statistics
}

// NewBatchNorm returns a BatchNorm over dim features with parameters
// name+".weight", ".bias", ".running_mean" and ".running_var" (torch's
// names), eps 1e-5 and momentum 0.1, summing statistics with sum (nil: one
// process).
func NewBatchNorm(name string, dim int, sum Reducer) *BatchNorm {
	b := &BatchNorm{Dim: dim, Eps: LayerNormEps, Momentum: 0.1, sum: sum, rstd: make([]float64, dim)}
	b.Gamma, b.Beta = newParam(name+".weight", 1, dim), newParam(name+".bias", 1, dim)
	b.Mean, b.Var = newParam(name+".running_mean", 1, dim), newParam(name+".running_var", 1, dim)
	b.Mean.buffer, b.Var.buffer = true, true
	for i := range dim {
		b.Gamma.W[i], b.Var.W[i] = 1, 1
	}
	return b
}

// Params returns gamma, beta and the running mean and variance.
func (b *BatchNorm) Params() []*Param { return []*Param{b.Gamma, b.Beta, b.Mean, b.Var} }

// allSum sums v over the ranks.
func (b *BatchNorm) allSum(v []float64) error {
	if b.sum == nil {
		return nil
	}
	return b.sum.SumFloat64(v)
}

// featureSums returns per column Σ f(row, j) over x's rows (float64, in
// ColReduce's fixed block order) with one extra slot for the row count.
func featureSums(x *dense.Matrix, f func(v float32, j int) float64) []float64 {
	var out []float64
	dense.ColReduce(x.Rows, x.Cols, func(lo, hi int, acc []float64) {
		for i := lo; i < hi; i++ {
			for j, v := range x.Row(i) {
				acc[j] += f(v, j)
			}
		}
	}, func(s []float64) { out = append(s, float64(x.Rows)) })
	return out
}

// Forward normalises x (x.Cols must be Dim) into a buffer owned by b.
func (b *BatchNorm) Forward(train bool, x *dense.Matrix) (*dense.Matrix, error) {
	dim := b.Dim
	mean := make([]float64, dim)
	b.train = train
	if train { // two passes, each summed over the ranks: the mean, then the centred squares
		s := featureSums(x, func(v float32, _ int) float64 { return float64(v) })
		if err := b.allSum(s); err != nil {
			return nil, err
		}
		b.n = s[dim]
		for j := range dim {
			mean[j] = s[j] / b.n
		}
		q := featureSums(x, func(v float32, j int) float64 { d := float64(v) - mean[j]; return d * d })
		if err := b.allSum(q); err != nil {
			return nil, err
		}
		for j := range dim {
			v := q[j] / b.n
			b.rstd[j] = 1 / math.Sqrt(v+b.Eps)
			unbiased := v * b.n / max(b.n-1, 1)
			b.Mean.W[j] = float32((1-b.Momentum)*float64(b.Mean.W[j]) + b.Momentum*mean[j])
			b.Var.W[j] = float32((1-b.Momentum)*float64(b.Var.W[j]) + b.Momentum*unbiased)
		}
	} else {
		for j := range dim {
			mean[j] = float64(b.Mean.W[j])
			b.rstd[j] = 1 / math.Sqrt(float64(b.Var.W[j])+b.Eps)
		}
	}
	b.xhat = dense.Reshape(b.xhat, x.Rows, x.Cols)
	b.out = dense.Reshape(b.out, x.Rows, x.Cols)
	gamma, beta := b.Gamma.W, b.Beta.W
	par.For(x.Rows, dense.RowGrain(x.Cols), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			xh, y := b.xhat.Row(i), b.out.Row(i)
			for j, v := range x.Row(i) {
				h := float32((float64(v) - mean[j]) * b.rstd[j])
				xh[j] = h
				y[j] = h*gamma[j] + beta[j]
			}
		}
	})
	return b.out, nil
}

// Backward sets Gamma.G and Beta.G (this rank's rows: the caller sums
// parameter gradients over the ranks) from g = dL/dy and returns dL/dx in
// a buffer owned by b: after a training Forward
//
//	dx = gamma·rstd·(g - Σg/N - x̂·Σ(g·x̂)/N)
//
// with the sums over every rank's rows; after an evaluation Forward
// gamma·rstd·g.
func (b *BatchNorm) Backward(g *dense.Matrix) (*dense.Matrix, error) {
	dim := b.Dim
	s := make([]float64, 2*dim)
	dense.ColReduce(g.Rows, 2*dim, func(lo, hi int, acc []float64) {
		for i := lo; i < hi; i++ {
			xh := b.xhat.Row(i)
			for j, v := range g.Row(i) {
				acc[j] += float64(v * xh[j])
				acc[dim+j] += float64(v)
			}
		}
	}, func(sum []float64) { copy(s, sum) })
	for j := range dim {
		b.Gamma.G[j], b.Beta.G[j] = float32(s[j]), float32(s[dim+j])
	}
	clear(b.Mean.G)
	clear(b.Var.G)
	sgx, sg := make([]float32, dim), make([]float32, dim)
	if b.train {
		if err := b.allSum(s); err != nil {
			return nil, err
		}
		for j := range dim {
			sgx[j], sg[j] = float32(s[j]/b.n), float32(s[dim+j]/b.n)
		}
	}
	scale := make([]float32, dim)
	for j := range dim {
		scale[j] = float32(float64(b.Gamma.W[j]) * b.rstd[j])
	}
	b.gx = dense.Reshape(b.gx, g.Rows, g.Cols)
	par.For(g.Rows, dense.RowGrain(g.Cols), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			xh, gx := b.xhat.Row(i), b.gx.Row(i)
			for j, v := range g.Row(i) {
				gx[j] = scale[j] * (v - sg[j] - xh[j]*sgx[j])
			}
		}
	})
	return b.gx, nil
}

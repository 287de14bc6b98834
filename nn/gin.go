package nn

import (
	"github.com/supergcn/supergcn/dense"
)

// GINLayer is the graph isomorphism network layer of Xu et al. (ICLR 2019;
// PyG GINConv with an MLP of two linear layers):
//
//	out = MLP((1+ε)·X + A·X),  MLP(U) = ReLU(U·W₁ + b₁)·W₂ + b₂
//
// with A the plain sum over in-neighbours (OpSum), W₁ In×Hidden, W₂
// Hidden×Out (the model's hidden width is the MLP's inner width), both
// initialised like torch.nn.Linear, and ε 0, learned with train-eps (PyG's
// train_eps), else fixed.
//
// As (1+ε)·X·W₁ + A·X·W₁ = ((1+ε)·I + A)·X·W₁, the sum aggregates the
// narrower of In and Hidden (transform first when Hidden ≤ In).
type GINLayer struct {
	In, Hidden, Out int
	W1, B1, W2, B2  *Param
	Eps             *Param // nil: ε fixed at 0

	convBase
	xw  *dense.Matrix // X·W₁ (transform-first) or U = (1+ε)·X + A·X (propagate-first), kept for Backward
	z   *dense.Matrix // ReLU(U·W₁ + b₁), kept for Backward
	gz  *dense.Matrix // the gradient of z's pre-activation
	gxw *dense.Matrix // the gradient of xw
}

// ginHypers are GIN's hyperparameters.
var ginHypers = []Hyper{{Name: "train-eps", Bool: true, Max: 1, Help: "learn ε, the weight of a node's own row (fixed at 0 without)"}}

// ginPlan declares a GIN layer: W₁, b₁, W₂, b₂ (the weights decayed in the
// first layer), and ε with train-eps.
func ginPlan(s LayerShape) LayerPlan {
	b1, b2 := linearBound(s.In), linearBound(s.Hidden)
	ps := []ParamSpec{
		{Suffix: ".nn.0.weight", Rows: s.In, Cols: s.Hidden, Bound: b1, Weight: true},
		{Suffix: ".nn.0.bias", Rows: 1, Cols: s.Hidden, Bound: b1},
		{Suffix: ".nn.2.weight", Rows: s.Hidden, Cols: s.Out, Bound: b2, Weight: true},
		{Suffix: ".nn.2.bias", Rows: 1, Cols: s.Out, Bound: b2}}
	if s.trainEps() {
		ps = append(ps, ParamSpec{Suffix: ".eps", Rows: 1, Cols: 1})
	}
	return LayerPlan{Params: ps, Cost: ginCost(s), Mem: ginMem(s)}
}

// trainEps is hyperparameter train-eps of layer s's model.
func (s LayerShape) trainEps() bool { return s.Hyper["train-eps"] != 0 }

// ginMem is GINLayer's memory: X·W₁ or U (Hidden or In wide) and Z kept,
// their gradients in Backward.
func ginMem(s LayerShape) LayerMem {
	w := s.Hidden // X·W₁
	if s.Hidden > s.In {
		w = s.In // U
	}
	return LayerMem{Kept: s.Hidden + w, Backward: s.Hidden + w}
}

// ginCost is GINLayer's schedule.
func ginCost(s LayerShape) LayerCost {
	in, h, out := s.In, s.Hidden, s.Out
	var c LayerCost
	if h <= in {
		c.Forward = []CostStep{gemm("nn", in, h), aggregate(s.Op, h), elem(16, h)}
	} else {
		c.Forward = []CostStep{aggregate(s.Op, in), elem(12, in), gemm("nn", in, h), elem(8, h)}
		c.Forward[0].Input = true
	}
	c.Forward = append(c.Forward, gemm("nn", h, out))
	c.Backward = []CostStep{colSums(out), gemm("tn", h, out), gemm("nt", out, h), elem(12, h), colSums(h)}
	if h <= in {
		c.Backward = append(c.Backward, aggregate(s.Op, h), elem(12, h), gemm("tn", in, h))
		c.Backward = append(c.Backward, inputGrad(gemm("nt", h, in))...)
		return c
	}
	c.Backward = append(c.Backward, gemm("tn", in, h))
	du := []CostStep{gemm("nt", h, in)}
	if !s.trainEps() {
		du = inputGrad(du...)
	}
	c.Backward = append(c.Backward, du...)
	c.Backward = append(c.Backward, inputGrad(aggregate(s.Op, in), elem(12, in))...)
	return c
}

// buildGIN builds a GIN layer on W₁, b₁, W₂, b₂ [, ε].
func buildGIN(s LayerShape, ps []*Param) Conv {
	l := &GINLayer{In: s.In, Hidden: s.Hidden, Out: s.Out, W1: ps[0], B1: ps[1], W2: ps[2], B2: ps[3],
		convBase: convBase{bias: ps[3]}}
	if len(ps) > 4 {
		l.Eps = ps[4]
	}
	return l
}

// Params returns W₁, b₁, W₂, b₂ and ε when learned.
func (l *GINLayer) Params() []*Param {
	ps := []*Param{l.W1, l.B1, l.W2, l.B2}
	if l.Eps != nil {
		ps = append(ps, l.Eps)
	}
	return ps
}

// self is 1+ε, the weight of a node's own row.
func (l *GINLayer) self() float32 {
	if l.Eps == nil {
		return 1
	}
	return 1 + l.Eps.W[0]
}

func (l *GINLayer) transformFirst() bool { return l.Hidden <= l.In }

// aggregatesInput reports whether Forward starts with A·X (propagate-first).
func (l *GINLayer) aggregatesInput() bool { return !l.transformFirst() }

// Forward computes MLP((1+ε)·X + A·X).
func (l *GINLayer) Forward(p Pass, op Operator, x *dense.Matrix) (*dense.Matrix, error) {
	return l.forward(p, op, x, nil)
}

// forwardAggregated is Forward with A·x given (read only).
func (l *GINLayer) forwardAggregated(p Pass, op Operator, x, ax *dense.Matrix) (*dense.Matrix, error) {
	return l.forward(p, op, x, ax)
}

func (l *GINLayer) forward(p Pass, op Operator, x, ax *dense.Matrix) (*dense.Matrix, error) {
	prop, err := l.begin("GIN", op, x, ax, l.In, l.transformFirst())
	if err != nil {
		return nil, err
	}
	n := x.Rows
	z := l.pool.lend(&l.z, n, l.Hidden)
	pc := p
	pc.Consume = false // the aggregated rows are read again for the node's own term
	if l.transformFirst() {
		xw := l.pool.lend(&l.xw, n, l.Hidden)
		l.pool.gemm(false, false, 1, x, l.W1.values(), 0, xw)
		if err := prop.Forward(pc, xw, z); err != nil {
			return nil, err
		}
		axpby(z, 1, l.self(), xw)
	} else {
		u := l.pool.lend(&l.xw, n, l.In)
		if ax == nil {
			if err := prop.Forward(pc, x, u); err != nil {
				return nil, err
			}
		} else {
			copy(u.Data, ax.Data)
		}
		axpby(u, 1, l.self(), x)
		l.pool.gemm(false, false, 1, u, l.W1.values(), 0, z)
	}
	reluBias(z, l.B1.W)
	out := l.pool.lend(&l.out, n, l.Out)
	l.pool.gemm(false, false, 1, z, l.W2.values(), 0, out)
	l.addBias(out)
	return out, nil
}

// Backward sets the parameters' gradients from gout and returns dL/dX when
// wantInputGrad.
func (l *GINLayer) Backward(p Pass, op Operator, gout *dense.Matrix, wantInputGrad bool) (*dense.Matrix, error) {
	prop, err := l.beginBackward("GIN", op, gout, l.Out)
	if err != nil {
		return nil, err
	}
	n := gout.Rows
	defer l.releaseSaved()
	dense.ColSums(gout, l.B2.G)
	l.pool.gemm(true, false, 1, l.z, gout, 0, l.W2.grad())
	gz := l.pool.lend(&l.gz, n, l.Hidden)
	defer l.pool.reclaim(&l.gz)
	l.pool.gemm(false, true, 1, gout, l.W2.values(), 0, gz)
	ReLUBackward(gz, l.z)
	dense.ColSums(gz, l.B1.G)
	pc := p
	pc.Consume = false // read again for the node's own term
	if l.transformFirst() {
		// Z = (A + (1+ε)I)·XW₁: dXW₁ = Aᵀ·dZ + (1+ε)·dZ, dε = Σ dZ⊙XW₁.
		if l.Eps != nil {
			l.Eps.G[0] = float32(dot64(gz, l.xw))
		}
		gxw := l.pool.lend(&l.gxw, n, l.Hidden)
		defer l.pool.reclaim(&l.gxw)
		if err := prop.Backward(pc, gz, gxw); err != nil {
			return nil, err
		}
		axpby(gxw, 1, l.self(), gz)
		l.pool.gemm(true, false, 1, l.x, gxw, 0, l.W1.grad())
		if !wantInputGrad {
			return nil, nil
		}
		return l.pool.inputGrad(&l.gx, l.x, gxw, l.W1.values(), nil, nil), nil
	}
	// U = A·X + (1+ε)·X: dW₁ = Uᵀ·dZ, dU = dZ·W₁ᵀ, dε = Σ dU⊙X,
	// dX = Aᵀ·dU + (1+ε)·dU.
	l.pool.gemm(true, false, 1, l.xw, gz, 0, l.W1.grad())
	if !wantInputGrad && l.Eps == nil {
		return nil, nil
	}
	gu := l.pool.lend(&l.gxw, n, l.In)
	defer l.pool.reclaim(&l.gxw)
	l.pool.gemm(false, true, 1, gz, l.W1.values(), 0, gu)
	if l.Eps != nil {
		l.Eps.G[0] = float32(dot64(gu, l.x))
	}
	if !wantInputGrad {
		return nil, nil
	}
	gx := l.pool.lend(&l.gx, n, l.In)
	if err := prop.Backward(pc, gu, gx); err != nil {
		return nil, err
	}
	axpby(gx, 1, l.self(), gu)
	return gx, nil
}

// releaseSaved gives back what Forward kept for Backward.
func (l *GINLayer) releaseSaved() {
	l.pool.reclaim(&l.xw)
	l.pool.reclaim(&l.z)
}

// needsInput reports whether Backward reads the input of Forward (the
// weight gradient of a transform-first layer, ε's gradient of a
// propagate-first one).
func (l *GINLayer) needsInput() bool { return l.transformFirst() || l.Eps != nil }

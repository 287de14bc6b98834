package nn

import (
	"math/rand/v2"

	"github.com/supergcn/supergcn/dense"
)

// SAGELayer is GraphSAGE with mean aggregation and a root weight (PyG
// SAGEConv, aggr="mean", root_weight=True, normalize=False):
//
//	out = mean_agg(X)·W_l + X·W_r + b
//
// with mean_agg the layer's Propagator (normally OpMean) and b the bias of
// lin_l, as in PyG. Weights and bias are initialised like torch.nn.Linear:
// uniform in ±1/sqrt(In).
//
// Because mean_agg(X)·W_l == mean_agg(X·W_l), the neighbour term aggregates
// the narrower width: Out columns when Out ≤ In, else In.
//
// Forward keeps a reference to its input x for Backward (x must stay
// unmodified until then). Returned matrices are owned by the layer and valid
// until its next Forward/Backward.
type SAGELayer struct {
	In, Out int
	WL, WR  *Param // In×Out: neighbour (lin_l) and root (lin_r) weights
	B       *Param // bias of lin_l

	convBase
	ax  *dense.Matrix // X·W_l (transform-first) or Â·X (propagate-first); Backward reuses it for Âᵀ·G or G·W_lᵀ
	agg *dense.Matrix // Â·X of the last propagate-first Forward: ax, or the caller's precomputed aggregate (read only)
}

// sagePlan declares a SAGE layer: W_l, b, W_r (torch.nn.Linear's
// initialisation, drawn in that order; the two weights are weights).
func sagePlan(s LayerShape) LayerPlan {
	bound := linearBound(s.In)
	return LayerPlan{
		Params: []ParamSpec{
			{Suffix: ".lin_l.weight", Rows: s.In, Cols: s.Out, Bound: bound, Weight: true},
			{Suffix: ".lin_l.bias", Rows: 1, Cols: s.Out, Bound: bound},
			{Suffix: ".lin_r.weight", Rows: s.In, Cols: s.Out, Bound: bound, Weight: true}},
		Cost: linearPropCost(s.Op, s.In, s.Out, 1, true),
		Mem:  linearPropMem(s.In, s.Out, 1)}
}

// newSAGE builds a SAGE layer on parameters W_l, b, W_r.
func newSAGE(s LayerShape, ps []*Param) Conv {
	return &SAGELayer{In: s.In, Out: s.Out, WL: ps[0], B: ps[1], WR: ps[2], convBase: convBase{bias: ps[1]}}
}

// NewSAGELayer returns a SAGE layer with parameters name+".lin_l.weight",
// name+".lin_l.bias" and name+".lin_r.weight" (PyG's names), initialised
// from r in that order.
func NewSAGELayer(name string, in, out int, r *rand.Rand) *SAGELayer {
	s := LayerShape{Name: name, In: in, Out: out, Op: OpMean}
	return newSAGE(s, sagePlan(s).newParams(name, r)).(*SAGELayer)
}

// Params returns W_l, b, W_r.
func (l *SAGELayer) Params() []*Param { return []*Param{l.WL, l.B, l.WR} }

func (l *SAGELayer) transformFirst() bool { return l.Out <= l.In }

// Forward computes mean_agg(X)·W_l + X·W_r + b.
func (l *SAGELayer) Forward(p Pass, op Operator, x *dense.Matrix) (*dense.Matrix, error) {
	return l.forward(p, op, x, nil)
}

// aggregatesInput reports whether Forward starts with mean_agg(X)
// (propagate-first).
func (l *SAGELayer) aggregatesInput() bool { return !l.transformFirst() }

// forwardAggregated is Forward with mean_agg(x) given (aggregatesInput
// layers only): ax (prop.Rows() × In) is read, never written, and must stay
// unmodified until Backward.
func (l *SAGELayer) forwardAggregated(p Pass, op Operator, x, ax *dense.Matrix) (*dense.Matrix, error) {
	return l.forward(p, op, x, ax)
}

// forward is Forward, with ax = mean_agg(x) precomputed when non-nil.
func (l *SAGELayer) forward(p Pass, op Operator, x, ax *dense.Matrix) (*dense.Matrix, error) {
	prop, err := l.begin("SAGE", op, x, ax, l.In, l.transformFirst())
	if err != nil {
		return nil, err
	}
	n := x.Rows
	var out *dense.Matrix
	if l.transformFirst() {
		xw := l.pool.lend(&l.ax, n, l.Out)
		l.pool.gemm(false, false, 1, x, l.WL.values(), 0, xw)
		out = l.pool.lend(&l.out, n, l.Out)
		pc := p
		pc.Consume = true // X·W_l is read by nothing else
		if err := prop.Forward(pc, xw, out); err != nil {
			return nil, err
		}
		l.pool.reclaim(&l.ax) // X·W_l is dead: Backward takes a buffer for Âᵀ·G
		l.pool.gemm(false, false, 1, x, l.WR.values(), 1, out)
	} else {
		pc := p
		pc.Consume = false // the root weight reads x below
		if ax, err = l.aggregateInput(pc, prop, 1, x, ax, &l.ax, nil); err != nil {
			return nil, err
		}
		l.agg = ax
		out = l.pool.lend(&l.out, n, l.Out)
		l.pool.gemm2(false, ax, l.WL.values(), x, l.WR.values(), 0, out)
	}
	l.addBias(out)
	return out, nil
}

// Backward sets the parameter gradients from gout = dL/d(out) and, when
// wantInputGrad is set, returns dL/dX (nil otherwise).
func (l *SAGELayer) Backward(p Pass, op Operator, gout *dense.Matrix, wantInputGrad bool) (*dense.Matrix, error) {
	prop, err := l.beginBackward("SAGE", op, gout, l.Out)
	if err != nil {
		return nil, err
	}
	n := gout.Rows
	p.Consume = false // gout is read again after the propagation (G·W_rᵀ)
	dense.ColSums(gout, l.B.G)
	l.pool.gemm(true, false, 1, l.x, gout, 0, l.WR.grad())
	if l.transformFirst() {
		// H = X·W_l, out = Â·H + ...: dH = Âᵀ·G, dW_l = Xᵀ·dH,
		// dX = dH·W_lᵀ + G·W_rᵀ.
		// X·W is dead after Forward: its storage (or a buffer of the
		// pool) holds Âᵀ·G.
		gtmp := l.pool.lend(&l.ax, n, l.Out)
		defer l.pool.reclaim(&l.ax)
		if err := prop.Backward(p, gout, gtmp); err != nil {
			return nil, err
		}
		l.pool.gemm(true, false, 1, l.x, gtmp, 0, l.WL.grad())
		if !wantInputGrad {
			return nil, nil
		}
		return l.pool.inputGrad(&l.gx, l.x, gtmp, l.WL.values(), gout, l.WR.values()), nil
	}
	// AX = Â·X, out = AX·W_l + ...: dW_l = AXᵀ·G, dX = Âᵀ·(G·W_lᵀ) + G·W_rᵀ.
	l.pool.gemm(true, false, 1, l.agg, gout, 0, l.WL.grad())
	defer l.pool.reclaim(&l.ax)
	if !wantInputGrad {
		return nil, nil
	}
	// Â·X is dead after the weight gradient: the layer's own storage (which
	// held it unless the caller gave it) holds G·Wᵀ.
	gtmp := l.ax
	if gtmp == nil || l.pool == nil {
		gtmp = l.pool.lend(&l.ax, n, l.In)
	}
	l.pool.gemm(false, true, 1, gout, l.WL.values(), 0, gtmp)
	gx := l.pool.lend(&l.gx, n, l.In)
	pc := p
	pc.Consume = true // G·W_lᵀ is read by nothing else
	if err := prop.Backward(pc, gtmp, gx); err != nil {
		return nil, err
	}
	l.pool.gemm(false, true, 1, gout, l.WR.values(), 1, gx)
	return gx, nil
}

// releaseSaved gives back what Forward kept for Backward (Backward gives
// it back itself).
func (l *SAGELayer) releaseSaved() {
	l.pool.reclaim(&l.ax)
	l.agg = nil
}

// needsInput reports whether Backward reads the input of Forward (the
// root weight's gradient always does).
func (l *SAGELayer) needsInput() bool { return true }

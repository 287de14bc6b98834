package nn

import (
	"math/rand/v2"

	"github.com/supergcn/supergcn/dense"
)

// GCNLayer is the graph convolution of Kipf & Welling (PyG GCNConv):
//
//	out = Â·(X·W) + b
//
// with Â the layer's Propagator (normally OpGCN). W is In×Out, Glorot-uniform
// initialised; b is zero-initialised. With K > 1 steps it is
// out = Â^K·(X·W) + b, SGC's layer (NewSGCLayer).
//
// The product is evaluated in the cheaper order: when Out ≤ In the features
// are transformed first and Â aggregates Out columns, otherwise Â aggregates
// the In columns of X first. Both orders are the same operator.
//
// Forward keeps a reference to its input x (and its own buffers) for
// Backward: x must stay unmodified until Backward returns. Buffers are reused
// across calls; returned matrices are owned by the layer and valid until its
// next Forward/Backward.
type GCNLayer struct {
	In, Out int
	W, B    *Param
	K       int // propagation steps, ≥ 1

	convBase
	xw  *dense.Matrix    // X·W (transform-first) or Â^K·X (propagate-first); Backward reuses it for (Âᵀ)^K·G or G·Wᵀ
	agg *dense.Matrix    // Â^K·X of the last propagate-first Forward: xw, or the caller's precomputed aggregate (read only)
	tmp [2]*dense.Matrix // between propagation steps (K > 1)
}

// gcnPlan declares a GCN layer: W (Glorot, a weight) and b (zeros).
func gcnPlan(s LayerShape) LayerPlan {
	return LayerPlan{
		Params: []ParamSpec{
			{Suffix: ".lin.weight", Rows: s.In, Cols: s.Out, Bound: glorotBound(s.In, s.Out), Weight: true},
			{Suffix: ".bias", Rows: 1, Cols: s.Out}},
		Cost: linearPropCost(s.Op, s.In, s.Out, 1, false),
		Mem:  linearPropMem(s.In, s.Out, 1)}
}

// newGCN builds a GCN layer of k steps on parameters W, b.
func newGCN(s LayerShape, ps []*Param, k int) *GCNLayer {
	return &GCNLayer{In: s.In, Out: s.Out, W: ps[0], B: ps[1], K: k, convBase: convBase{bias: ps[1]}}
}

// NewGCNLayer returns a GCN layer whose parameters are named name+".lin.weight"
// and name+".bias" (PyG's names), initialised from r.
func NewGCNLayer(name string, in, out int, r *rand.Rand) *GCNLayer {
	s := LayerShape{Name: name, In: in, Out: out, Op: OpGCN}
	return newGCN(s, gcnPlan(s).newParams(name, r), 1)
}

// Params returns W and b.
func (l *GCNLayer) Params() []*Param { return []*Param{l.W, l.B} }

// transformFirst reports whether X·W is computed before propagation.
func (l *GCNLayer) transformFirst() bool { return l.Out <= l.In }

// Forward computes Â^K·(X·W) + b for x (Rows = op.Rows(), Cols = In).
func (l *GCNLayer) Forward(p Pass, op Operator, x *dense.Matrix) (*dense.Matrix, error) {
	return l.forward(p, op, x, nil)
}

// aggregatesInput reports whether Forward starts with Â·X (propagate-first).
func (l *GCNLayer) aggregatesInput() bool { return !l.transformFirst() }

// forwardAggregated is Forward with Â·x given (aggregatesInput layers
// only): ax (op.Rows() × In) is read, never written, and must stay
// unmodified until Backward.
func (l *GCNLayer) forwardAggregated(p Pass, op Operator, x, ax *dense.Matrix) (*dense.Matrix, error) {
	return l.forward(p, op, x, ax)
}

// forward is Forward, with ax = Â·x precomputed when non-nil.
func (l *GCNLayer) forward(p Pass, op Operator, x, ax *dense.Matrix) (*dense.Matrix, error) {
	prop, err := l.begin("GCN", op, x, ax, l.In, l.transformFirst())
	if err != nil {
		return nil, err
	}
	n := x.Rows
	if l.transformFirst() {
		xw := l.pool.lend(&l.xw, n, l.Out)
		l.pool.gemm(false, false, 1, x, l.W.values(), 0, xw)
		out := l.pool.lend(&l.out, n, l.Out)
		pc := p
		pc.Consume = true // X·W is read by nothing else
		if err := l.steps(pc, prop, l.K, false, xw, out, &l.tmp); err != nil {
			return nil, err
		}
		l.pool.reclaim(&l.xw) // X·W is dead: Backward takes a buffer for Âᵀ·G
	} else {
		var err error
		if ax, err = l.aggregateInput(p, prop, l.K, x, ax, &l.xw, &l.tmp); err != nil {
			return nil, err
		}
		l.agg = ax
		l.pool.gemm(false, false, 1, ax, l.W.values(), 0, l.pool.lend(&l.out, n, l.Out))
	}
	l.addBias(l.out)
	return l.out, nil
}

// Backward sets W.G and B.G from gout = dL/d(out) of the last Forward and,
// when wantInputGrad is set, returns dL/dX (nil otherwise; propagate-first
// layers then skip their Âᵀ product entirely). With p.Consume the caller
// lets gout go: it may be overwritten.
func (l *GCNLayer) Backward(p Pass, op Operator, gout *dense.Matrix, wantInputGrad bool) (*dense.Matrix, error) {
	prop, err := l.beginBackward("GCN", op, gout, l.Out)
	if err != nil {
		return nil, err
	}
	n := gout.Rows
	dense.ColSums(gout, l.B.G)
	if l.transformFirst() {
		// H = X·W, out = Â·H: dH = Âᵀ·G, dW = Xᵀ·dH, dX = dH·Wᵀ.
		// X·W is dead after Forward: its storage (or a buffer of the
		// pool) holds Âᵀ·G.
		gtmp := l.pool.lend(&l.xw, n, l.Out)
		defer l.pool.reclaim(&l.xw)
		// gout's last read: the propagator may overwrite it when the
		// caller lets it go (p.Consume).
		if err := l.steps(p, prop, l.K, true, gout, gtmp, &l.tmp); err != nil {
			return nil, err
		}
		l.pool.gemm(true, false, 1, l.x, gtmp, 0, l.W.grad())
		if !wantInputGrad {
			return nil, nil
		}
		return l.pool.inputGrad(&l.gx, l.x, gtmp, l.W.values(), nil, nil), nil
	}
	// AX = Â·X, out = AX·W: dW = AXᵀ·G, dX = Âᵀ·(G·Wᵀ).
	l.pool.gemm(true, false, 1, l.agg, gout, 0, l.W.grad())
	defer l.pool.reclaim(&l.xw)
	if !wantInputGrad {
		return nil, nil
	}
	// Â·X is dead after the weight gradient: the layer's own storage (which
	// held it unless the caller gave it) holds G·Wᵀ.
	gtmp := l.xw
	if gtmp == nil || l.pool == nil {
		gtmp = l.pool.lend(&l.xw, n, l.In)
	}
	l.pool.gemm(false, true, 1, gout, l.W.values(), 0, gtmp)
	gx := l.pool.lend(&l.gx, n, l.In)
	p.Consume = true // G·Wᵀ is read by nothing else
	if err := l.steps(p, prop, l.K, true, gtmp, gx, &l.tmp); err != nil {
		return nil, err
	}
	return gx, nil
}

// releaseSaved gives back what Forward kept for Backward (Backward gives
// it back itself).
func (l *GCNLayer) releaseSaved() {
	l.pool.reclaim(&l.xw)
	l.agg = nil
}

// needsInput reports whether Backward reads the input of Forward.
func (l *GCNLayer) needsInput() bool { return l.transformFirst() }

// buildGCN builds the GCN layer of the model table.
func buildGCN(s LayerShape, ps []*Param) Conv { return newGCN(s, ps, 1) }

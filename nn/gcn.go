package nn

import (
	"fmt"
	"math/rand/v2"

	"github.com/supergcn/supergcn/dense"
)

// GCNLayer is the graph convolution of Kipf & Welling (PyG GCNConv):
//
//	out = Â·(X·W) + b
//
// with Â the layer's Propagator (normally OpGCN). W is In×Out, Glorot-uniform
// initialised; b is zero-initialised.
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

	x       *dense.Matrix // input of the last Forward
	xw      *dense.Matrix // X·W (transform-first) or Â·X (propagate-first); Backward reuses it for Âᵀ·G or G·Wᵀ
	agg     *dense.Matrix // Â·X of the last propagate-first Forward: xw, or the caller's precomputed aggregate (read only)
	out, gx *dense.Matrix
	noBias  bool   // Forward leaves the bias to a fused stage (deferBias)
	pool    *arena // the Model's buffer pool (nil: the layer keeps its own buffers)
}

// NewGCNLayer returns a GCN layer whose parameters are named name+".lin.weight"
// and name+".bias" (PyG's names), initialised from r.
func NewGCNLayer(name string, in, out int, r *rand.Rand) *GCNLayer {
	l := &GCNLayer{In: in, Out: out,
		W: newParam(name+".lin.weight", in, out),
		B: newParam(name+".bias", 1, out)}
	uniform(l.W.W, glorotBound(in, out), r)
	return l
}

// Params returns W and b.
func (l *GCNLayer) Params() []*Param { return []*Param{l.W, l.B} }

// transformFirst reports whether X·W is computed before propagation.
func (l *GCNLayer) transformFirst() bool { return l.Out <= l.In }

// Forward computes Â·(X·W) + b for x (Rows = prop.Rows(), Cols = In).
func (l *GCNLayer) Forward(p Pass, prop Propagator, x *dense.Matrix) (*dense.Matrix, error) {
	return l.forward(p, prop, x, nil)
}

// aggregatesInput reports whether Forward starts with Â·X (propagate-first).
func (l *GCNLayer) aggregatesInput() bool { return !l.transformFirst() }

// forwardAggregated is Forward with Â·x given (aggregatesInput layers
// only): ax (prop.Rows() × In) is read, never written, and must stay
// unmodified until Backward.
func (l *GCNLayer) forwardAggregated(p Pass, prop Propagator, x, ax *dense.Matrix) (*dense.Matrix, error) {
	return l.forward(p, prop, x, ax)
}

// forward is Forward, with ax = Â·x precomputed when non-nil.
func (l *GCNLayer) forward(p Pass, prop Propagator, x, ax *dense.Matrix) (*dense.Matrix, error) {
	if err := checkInput("GCN", prop, x, l.In); err != nil {
		return nil, err
	}
	if err := checkAggregate("GCN", l.transformFirst(), x, ax); err != nil {
		return nil, err
	}
	n := x.Rows
	l.x = x
	if l.transformFirst() {
		xw := l.pool.lend(&l.xw, n, l.Out)
		l.pool.gemm(false, false, 1, x, l.W.values(), 0, xw)
		out := l.pool.lend(&l.out, n, l.Out)
		pc := p
		pc.Consume = true // X·W is read by nothing else
		if err := prop.Forward(pc, xw, out); err != nil {
			return nil, err
		}
		l.pool.reclaim(&l.xw) // X·W is dead: Backward takes a buffer for Âᵀ·G
	} else {
		if ax == nil {
			ax = l.pool.lend(&l.xw, n, l.In)
			if err := prop.Forward(p, x, ax); err != nil {
				return nil, err
			}
		}
		l.agg = ax
		l.pool.gemm(false, false, 1, ax, l.W.values(), 0, l.pool.lend(&l.out, n, l.Out))
	}
	if !l.noBias {
		dense.AddBias(l.out, l.B.W)
	}
	return l.out, nil
}

// Backward sets W.G and B.G from gout = dL/d(out) of the last Forward and,
// when wantInputGrad is set, returns dL/dX (nil otherwise; propagate-first
// layers then skip their Âᵀ product entirely). With p.Consume the caller
// lets gout go: it may be overwritten.
func (l *GCNLayer) Backward(p Pass, prop Propagator, gout *dense.Matrix, wantInputGrad bool) (*dense.Matrix, error) {
	if err := checkGrad("GCN", l.x, gout, l.Out); err != nil {
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
		if err := prop.Backward(p, gout, gtmp); err != nil {
			return nil, err
		}
		l.pool.gemm(true, false, 1, l.x, gtmp, 0, l.W.grad())
		if !wantInputGrad {
			return nil, nil
		}
		gx := l.pool.lend(&l.gx, n, l.In)
		l.pool.gemm(false, true, 1, gtmp, l.W.values(), 0, gx)
		return gx, nil
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
	if err := prop.Backward(p, gtmp, gx); err != nil {
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

// releaseOut gives back the output of the last Forward.
func (l *GCNLayer) releaseOut() { l.pool.reclaim(&l.out) }

// releaseGrad gives back the input gradient of the last Backward.
func (l *GCNLayer) releaseGrad() { l.pool.reclaim(&l.gx) }

// needsInput reports whether Backward reads the input of Forward.
func (l *GCNLayer) needsInput() bool { return l.transformFirst() }

// setInput replaces the input Backward reads by x, an identical copy.
func (l *GCNLayer) setInput(x *dense.Matrix) { l.x = x }

// setPool makes the layer take its buffers from a.
func (l *GCNLayer) setPool(a *arena) { l.pool = a }

// checkInput validates a layer input against the propagator and layer width.
func checkInput(layer string, prop Propagator, x *dense.Matrix, in int) error {
	if x.Rows != prop.Rows() || x.Cols != in {
		return fmt.Errorf("nn: %s forward: input is %d×%d, want %d×%d (propagator rows × layer input width)",
			layer, x.Rows, x.Cols, prop.Rows(), in)
	}
	return nil
}

// checkAggregate validates a precomputed aggregate Â·x (nil: none) given to
// a layer whose Forward is propagate-first unless transformFirst.
func checkAggregate(layer string, transformFirst bool, x, ax *dense.Matrix) error {
	switch {
	case ax == nil:
		return nil
	case transformFirst:
		return fmt.Errorf("nn: %s forward: a precomputed aggregate given to a transform-first layer", layer)
	case ax.Rows != x.Rows || ax.Cols != x.Cols:
		return fmt.Errorf("nn: %s forward: precomputed aggregate is %d×%d, want %d×%d", layer, ax.Rows, ax.Cols, x.Rows, x.Cols)
	case ax == x:
		return fmt.Errorf("nn: %s forward: precomputed aggregate is the input itself", layer)
	}
	return nil
}

// checkGrad validates an output gradient against the last Forward.
func checkGrad(layer string, x, gout *dense.Matrix, out int) error {
	if x == nil {
		return fmt.Errorf("nn: %s backward before forward", layer)
	}
	if gout.Rows != x.Rows || gout.Cols != out {
		return fmt.Errorf("nn: %s backward: gradient is %d×%d, want %d×%d", layer, gout.Rows, gout.Cols, x.Rows, out)
	}
	return nil
}

// deferBias makes Forward return the output without the bias, which the
// fused stage after the layer adds (Model); it returns the bias values.
// Backward is unchanged: the bias gradient is the column sums of gout
// either way.
func (l *GCNLayer) deferBias() []float32 {
	l.noBias = true
	return l.B.W
}

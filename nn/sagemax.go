package nn

import (
	"fmt"

	"github.com/supergcn/supergcn/dense"
)

// SAGEMaxLayer is GraphSAGE with max aggregation (PyG SAGEConv aggr="max",
// root_weight=True) or, with Pool, the GraphSAGE paper's pooling
// aggregator (PyG SAGEConv aggr="max", project=True):
//
//	max:  out = max_agg(X)·W_l + X·W_r + b
//	pool: out = max_agg(ReLU(X·W_p + b_p))·W_l + X·W_r + b
//
// with max_agg the element-wise maximum over in-neighbours (the layer's
// MaxAggregator; 0 for a node without in-neighbours) and W_p In×In. The
// maximum does not commute with the weights, so the layer always
// aggregates In columns. Weights and biases are initialised like
// torch.nn.Linear (uniform in ±1/sqrt(In)), in PyG's order: lin (pool),
// lin_l, lin_r.
type SAGEMaxLayer struct {
	In, Out   int
	Pool      bool
	WP, BP    *Param // the pool's projection lin (In×In) and its bias; nil without Pool
	WL, B, WR *Param // neighbour weight, its bias, root weight (In×Out)

	convBase
	src  *dense.Matrix // Pool: ReLU(X·W_p + b_p), kept for Backward
	own  *dense.Matrix // max_agg of X or src, kept for Backward; then (Pool) the gradient of src
	agg  *dense.Matrix // the aggregate Backward reads: own, or the caller's (forwardAggregated; read only)
	gagg *dense.Matrix // Backward: the gradient of agg
}

// sageMaxPlan declares a SAGE-max layer: W_l, b, W_r.
func sageMaxPlan(s LayerShape) LayerPlan { return sageMaxLayerPlan(s, false) }

// sagePoolPlan declares a SAGE-pool layer: W_p, b_p, W_l, b, W_r.
func sagePoolPlan(s LayerShape) LayerPlan { return sageMaxLayerPlan(s, true) }

func sageMaxLayerPlan(s LayerShape, pool bool) LayerPlan {
	bound := linearBound(s.In)
	var ps []ParamSpec
	if pool {
		ps = append(ps, ParamSpec{Suffix: ".lin.weight", Rows: s.In, Cols: s.In, Bound: bound, Weight: true},
			ParamSpec{Suffix: ".lin.bias", Rows: 1, Cols: s.In, Bound: bound})
	}
	ps = append(ps, ParamSpec{Suffix: ".lin_l.weight", Rows: s.In, Cols: s.Out, Bound: bound, Weight: true},
		ParamSpec{Suffix: ".lin_l.bias", Rows: 1, Cols: s.Out, Bound: bound},
		ParamSpec{Suffix: ".lin_r.weight", Rows: s.In, Cols: s.Out, Bound: bound, Weight: true})
	return LayerPlan{Params: ps, Cost: sageMaxCost(s.In, s.Out, pool), Mem: sageMaxMem(s.In, pool)}
}

// sageMaxCost is SAGEMaxLayer's schedule: (pool: X·W_p, bias and ReLU),
// the maximum of In columns, the two weights; backward the weights'
// gradients, then (always with Pool, else for the input gradient) G·W_lᵀ,
// the arg-max routing, (pool: ReLU mask, bias and W_p gradients) and the
// input gradient's products.
func sageMaxCost(in, out int, pool bool) LayerCost {
	var c LayerCost
	if pool {
		c.Forward = append(c.Forward, gemm("nn", in, in), elem(8, in))
	}
	agg := aggregate(OpMax, in)
	if !pool {
		markInput(&agg) // SAGE-max's evaluation reuses the features' maximum (Model.SetEvalInput)
	}
	c.Forward = append(c.Forward, agg, gemm("nn", in, out), gemm("nn", in, out))
	c.Backward = []CostStep{colSums(out), gemm("tn", in, out), gemm("tn", in, out)}
	route := []CostStep{gemm("nt", out, in), aggregate(OpMax, in)}
	if !pool {
		c.Backward = append(c.Backward, inputGrad(append(route, gemm("nt", out, in))...)...)
		return c
	}
	c.Backward = append(c.Backward, route...)
	c.Backward = append(c.Backward, elem(12, in), colSums(in), gemm("tn", in, in))
	c.Backward = append(c.Backward, inputGrad(gemm("nt", in, in), gemm("nt", out, in))...)
	return c
}

// sageMaxMem is SAGEMaxLayer's memory: the aggregate (and the pool's
// activation) kept, the operator's arg max (one int32 a value, held from
// the first Forward; under MPI also one per value of every row sent),
// the aggregate's gradient in Backward.
func sageMaxMem(in int, pool bool) LayerMem {
	m := LayerMem{Kept: in, Held: in, HaloKept: in, Backward: in}
	if pool {
		m.Kept += in
	}
	return m
}

// newSAGEMax builds a SAGE-max layer on W_l, b, W_r.
func newSAGEMax(s LayerShape, ps []*Param) Conv {
	return &SAGEMaxLayer{In: s.In, Out: s.Out, WL: ps[0], B: ps[1], WR: ps[2], convBase: convBase{bias: ps[1]}}
}

// newSAGEPool builds a SAGE-pool layer on W_p, b_p, W_l, b, W_r.
func newSAGEPool(s LayerShape, ps []*Param) Conv {
	return &SAGEMaxLayer{In: s.In, Out: s.Out, Pool: true, WP: ps[0], BP: ps[1], WL: ps[2], B: ps[3], WR: ps[4], convBase: convBase{bias: ps[3]}}
}

// Params returns (W_p, b_p,) W_l, b, W_r.
func (l *SAGEMaxLayer) Params() []*Param {
	if l.Pool {
		return []*Param{l.WP, l.BP, l.WL, l.B, l.WR}
	}
	return []*Param{l.WL, l.B, l.WR}
}

// maxAggregator is op as the MaxAggregator a layer calls.
func maxAggregator(op Operator) (MaxAggregator, error) {
	m, ok := op.(MaxAggregator)
	if !ok {
		return nil, fmt.Errorf("nn: SAGE-max: the operator %T is not a MaxAggregator", op)
	}
	return m, nil
}

// Forward computes the layer's output (see SAGEMaxLayer).
func (l *SAGEMaxLayer) Forward(p Pass, op Operator, x *dense.Matrix) (*dense.Matrix, error) {
	return l.forward(p, op, x, nil)
}

// aggregatesInput reports whether Forward starts with max_agg(X): SAGE-max
// (its input is then dense, and an evaluation pass may give the
// aggregate); SAGE-pool transforms its input first.
func (l *SAGEMaxLayer) aggregatesInput() bool { return !l.Pool }

// forwardAggregated is Forward with ax = max_agg(x) given (SAGE-max only):
// ax is read, never written, and must stay unmodified until Backward.
func (l *SAGEMaxLayer) forwardAggregated(p Pass, op Operator, x, ax *dense.Matrix) (*dense.Matrix, error) {
	return l.forward(p, op, x, ax)
}

// forward is Forward, with ax = max_agg(x) precomputed when non-nil.
func (l *SAGEMaxLayer) forward(p Pass, op Operator, x, ax *dense.Matrix) (*dense.Matrix, error) {
	agg, err := maxAggregator(op)
	if err != nil {
		return nil, err
	}
	if err := checkInput("SAGE-max", op, x, l.In); err != nil {
		return nil, err
	}
	if err := checkAggregate("SAGE-max", l.Pool, x, ax); err != nil {
		return nil, err
	}
	l.x = x
	n, src := x.Rows, x
	if l.Pool {
		src = l.pool.lend(&l.src, n, l.In)
		l.pool.gemm(false, false, 1, x, l.WP.values(), 0, src)
		reluBias(src, l.BP.W)
	}
	l.agg = ax
	if ax == nil {
		l.agg = l.pool.lend(&l.own, n, l.In)
		if err := agg.MaxForward(p, src, l.agg); err != nil {
			return nil, err
		}
	}
	// Two products, not gemm2: x may be the model's sparse input (SAGE-pool).
	out := l.pool.lend(&l.out, n, l.Out)
	l.pool.gemm(false, false, 1, l.agg, l.WL.values(), 0, out)
	l.pool.gemm(false, false, 1, x, l.WR.values(), 1, out)
	l.addBias(out)
	return out, nil
}

// Backward sets the parameter gradients from gout = dL/d(out) and, when
// wantInputGrad is set, returns dL/dX (nil otherwise).
func (l *SAGEMaxLayer) Backward(p Pass, op Operator, gout *dense.Matrix, wantInputGrad bool) (*dense.Matrix, error) {
	agg, err := maxAggregator(op)
	if err != nil {
		return nil, err
	}
	if err := checkGrad("SAGE-max", l.x, gout, l.Out); err != nil {
		return nil, err
	}
	defer l.releaseSaved()
	n := gout.Rows
	dense.ColSums(gout, l.B.G)
	l.pool.gemm(true, false, 1, l.x, gout, 0, l.WR.grad())
	l.pool.gemm(true, false, 1, l.agg, gout, 0, l.WL.grad())
	if !wantInputGrad && !l.Pool {
		return nil, nil
	}
	// dagg = G·W_lᵀ, routed to the arg max: the gradient of the
	// aggregated rows (X, or the pool's activation, in agg's storage).
	gagg := l.pool.lend(&l.gagg, n, l.In)
	l.pool.gemm(false, true, 1, gout, l.WL.values(), 0, gagg)
	if !l.Pool {
		gx := l.pool.lend(&l.gx, n, l.In)
		if err := agg.MaxBackward(p, gagg, gx); err != nil {
			return nil, err
		}
		l.pool.gemm(false, true, 1, gout, l.WR.values(), 1, gx)
		return gx, nil
	}
	gsrc := l.own // the pool's own aggregate, dead after W_l's gradient
	if err := agg.MaxBackward(p, gagg, gsrc); err != nil {
		return nil, err
	}
	l.pool.reclaim(&l.gagg)
	ReLUBackward(gsrc, l.src)
	dense.ColSums(gsrc, l.BP.G)
	l.pool.gemm(true, false, 1, l.x, gsrc, 0, l.WP.grad())
	if !wantInputGrad {
		return nil, nil
	}
	gx := l.pool.lend(&l.gx, n, l.In)
	l.pool.gemm2(true, gsrc, l.WP.values(), gout, l.WR.values(), 0, gx)
	return gx, nil
}

// releaseSaved gives back what Forward kept for Backward.
func (l *SAGEMaxLayer) releaseSaved() {
	l.pool.reclaim(&l.src)
	l.pool.reclaim(&l.own)
	l.pool.reclaim(&l.gagg)
	l.agg = nil
}

// needsInput reports whether Backward reads the input of Forward (the
// root weight's gradient always does).
func (l *SAGEMaxLayer) needsInput() bool { return true }

package nn

import (
	"fmt"
	"math/rand/v2"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/par"
)

// Operator is the graph operator a Model hands its layers. Which interface
// a layer calls on it depends on the model's operator kind (OpKind.check):
// a Propagator for OpGCN, OpMean and OpSum. NewModel checks the operator
// against the kind before it builds a layer.
type Operator interface {
	Rows() int // owned nodes: the rows of every matrix the layers see
}

// Conv is the contract of a model's graph layer (GCNLayer, SAGELayer,
// GINLayer, APPNPLayer). A layer is built from its model's table row
// (models in model.go): the row's plan declares the parameters, their
// initialisation and weight decay, and the cost schedule; its build wires
// the parameters NewModel allocated into the layer. The buffer methods are
// convBase's (embed it) unless the layer keeps other buffers.
//
// Forward reads x (op.Rows() × In) and returns the layer's output, owned by
// the layer until its next Forward; x must stay unmodified until Backward.
// Backward sets every parameter's G from gout = dL/d(out) and returns dL/dx
// when wantInputGrad (nil otherwise); with p.Consume it may overwrite gout.
type Conv interface {
	Forward(p Pass, op Operator, x *dense.Matrix) (*dense.Matrix, error)
	Backward(p Pass, op Operator, gout *dense.Matrix, wantInputGrad bool) (*dense.Matrix, error)
	Params() []*Param

	setPool(a *arena) // take buffers from the Model's pool
	releaseSaved()    // what Forward kept for Backward
	releaseOut()      // the output of the last Forward
	releaseGrad()     // the input gradient of the last Backward
	// needsInput reports whether Backward reads the input of Forward;
	// setInput gives it an identical copy of that input.
	needsInput() bool
	setInput(x *dense.Matrix)
	// deferBias makes Forward return its output without the bias, which
	// the Model's fused hidden stage adds; it returns the bias values (nil:
	// the layer keeps its bias, the stage adds none). Backward is
	// unchanged: the bias gradient is the column sums of gout either way.
	deferBias() []float32
}

// inputAggregator is a Conv whose Forward can start from a precomputed
// aggregate Â·x of its input (a propagate-first GCN or SAGE layer): an
// optional capability, which Model uses for SetEvalInput.
type inputAggregator interface {
	aggregatesInput() bool
	forwardAggregated(p Pass, op Operator, x, ax *dense.Matrix) (*dense.Matrix, error)
}

// LayerShape is what a model's table row is given to plan and build layer
// Index of Layers: its widths, the model's hidden width (the inner width
// of a layer with an MLP inside) and the model's hyperparameters.
type LayerShape struct {
	Name          string // parameter name prefix ("conv0")
	Index, Layers int
	In, Out       int
	Hidden        int                // the model's hidden width (0 with one layer)
	Op            OpKind             // the model's operator kind
	Heads         int                // attention heads of this layer (attention models)
	AttnDropout   float64            // dropout on the attention coefficients (attention models)
	Seed          uint64             // the model's seed (layers with random streams of their own)
	Hyper         map[string]float64 // the model's declared hyperparameters (Hyper), every one
}

// Last reports whether the layer is the model's output layer.
func (s LayerShape) Last() bool { return s.Index == s.Layers-1 }

// ParamSpec declares one parameter of a layer: its name suffix, shape,
// initialisation (uniform in ±Bound, drawn in declaration order; 0: zeros,
// no draws) and whether it is a weight matrix, which the default weight
// decay rule decays in the first layer (Model.SetDecayAll).
type ParamSpec struct {
	Suffix     string
	Rows, Cols int
	Bound      float64
	Weight     bool
}

// LayerPlan is what a layer declares before it is built: its parameters,
// its cost schedule and its memory schedule.
type LayerPlan struct {
	Params []ParamSpec
	Cost   LayerCost
	Mem    LayerMem
}

// numParams is the number of scalars of the plan's parameters.
func (p LayerPlan) numParams() int64 {
	var n int64
	for _, s := range p.Params {
		n += int64(s.Rows) * int64(s.Cols)
	}
	return n
}

// newParams allocates the plan's parameters with prefix name and
// initialises them from r in declaration order.
func (p LayerPlan) newParams(name string, r *rand.Rand) []*Param {
	ps := make([]*Param, len(p.Params))
	for i, s := range p.Params {
		ps[i] = newParam(name+s.Suffix, s.Rows, s.Cols)
		ps[i].weight = s.Weight
		if s.Bound != 0 {
			uniform(ps[i].W, s.Bound, r)
		}
	}
	return ps
}

// convBase is the plumbing every layer shares: its input, output and input
// gradient buffers from the Model's pool, the bias and its deferral to the
// fused hidden stage. Layers embed it.
type convBase struct {
	x       *dense.Matrix // input of the last Forward
	out, gx *dense.Matrix
	bias    *Param // nil: no bias
	noBias  bool   // Forward leaves the bias to a fused stage (deferBias)
	pool    *arena // the Model's buffer pool (nil: the layer keeps its own buffers)
}

// setPool makes the layer take its buffers from a.
func (b *convBase) setPool(a *arena) { b.pool = a }

// releaseOut gives back the output of the last Forward.
func (b *convBase) releaseOut() { b.pool.reclaim(&b.out) }

// releaseGrad gives back the input gradient of the last Backward.
func (b *convBase) releaseGrad() { b.pool.reclaim(&b.gx) }

// setInput replaces the input Backward reads by x, an identical copy.
func (b *convBase) setInput(x *dense.Matrix) { b.x = x }

// deferBias makes Forward leave the bias to the fused stage.
func (b *convBase) deferBias() []float32 {
	if b.bias == nil {
		return nil
	}
	b.noBias = true
	return b.bias.W
}

// addBias adds the bias to out unless it is deferred.
func (b *convBase) addBias(out *dense.Matrix) {
	if b.bias != nil && !b.noBias {
		dense.AddBias(out, b.bias.W)
	}
}

// propagator is op as the Propagator a layer of kind layer calls.
func propagator(layer string, op Operator) (Propagator, error) {
	p, ok := op.(Propagator)
	if !ok {
		return nil, fmt.Errorf("nn: %s: the operator %T is not a Propagator", layer, op)
	}
	return p, nil
}

// begin checks a Forward of layer (input width in; ax: a precomputed
// aggregate or nil, for a layer that is transform-first or not) and
// records x for Backward; it returns op as the layer's Propagator.
func (b *convBase) begin(layer string, op Operator, x, ax *dense.Matrix, in int, transformFirst bool) (Propagator, error) {
	prop, err := propagator(layer, op)
	if err != nil {
		return nil, err
	}
	if err := checkInput(layer, op, x, in); err != nil {
		return nil, err
	}
	if err := checkAggregate(layer, transformFirst, x, ax); err != nil {
		return nil, err
	}
	b.x = x
	return prop, nil
}

// beginBackward checks a Backward of layer (output width out) and returns
// op as the layer's Propagator.
func (b *convBase) beginBackward(layer string, op Operator, gout *dense.Matrix, out int) (Propagator, error) {
	if err := checkGrad(layer, b.x, gout, out); err != nil {
		return nil, err
	}
	return propagator(layer, op)
}

// check reports whether op offers the interface the layers of kind k call.
func (k OpKind) check(op Operator) error {
	switch k {
	case OpGCN, OpMean, OpSum:
		if _, ok := op.(Propagator); !ok {
			return fmt.Errorf("the %s operator is a Propagator; got %T", k, op)
		}
		return nil
	case OpAttention:
		if _, ok := op.(Attention); !ok {
			return fmt.Errorf("the %s operator is an Attention; got %T", k, op)
		}
		return nil
	case OpAttentionV2:
		if _, ok := op.(AttentionV2); !ok {
			return fmt.Errorf("the %s operator is an AttentionV2; got %T", k, op)
		}
		return nil
	case OpMax:
		if _, ok := op.(MaxAggregator); !ok {
			return fmt.Errorf("the %s operator is a MaxAggregator; got %T", k, op)
		}
		return nil
	}
	return fmt.Errorf("operator kind %d has no interface", int(k))
}

// checkInput validates a layer input against the operator and layer width.
func checkInput(layer string, op Operator, x *dense.Matrix, in int) error {
	if x.Rows != op.Rows() || x.Cols != in {
		return fmt.Errorf("nn: %s forward: input is %d×%d, want %d×%d (propagator rows × layer input width)",
			layer, x.Rows, x.Cols, op.Rows(), in)
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

// steps sets out = Â^k·x (backward: (Âᵀ)^k·x), k ≥ 1, through the
// temporaries tmp between steps (given back before it returns). p.Consume
// applies to x; the intermediates are consumed.
func (b *convBase) steps(p Pass, prop Propagator, k int, backward bool, x, out *dense.Matrix, tmp *[2]*dense.Matrix) error {
	cur := x
	for i := range k {
		dst := out
		if i < k-1 {
			dst = b.pool.lend(&tmp[i%2], x.Rows, x.Cols)
		}
		pc := p
		if i > 0 {
			pc.Consume = true
		}
		var err error
		if backward {
			err = prop.Backward(pc, cur, dst)
		} else {
			err = prop.Forward(pc, cur, dst)
		}
		if err != nil {
			return err
		}
		cur = dst
	}
	if k > 1 {
		b.pool.reclaim(&tmp[0])
		b.pool.reclaim(&tmp[1])
	}
	return nil
}

// aggregateInput returns Â^k·x in *own, or starting from ax = Â·x when
// given (read only: returned as is when k is 1).
func (b *convBase) aggregateInput(p Pass, prop Propagator, k int, x, ax *dense.Matrix, own **dense.Matrix, tmp *[2]*dense.Matrix) (*dense.Matrix, error) {
	if ax == nil {
		dst := b.pool.lend(own, x.Rows, x.Cols)
		return dst, b.steps(p, prop, k, false, x, dst, tmp)
	}
	if k == 1 {
		return ax, nil
	}
	dst := b.pool.lend(own, x.Rows, x.Cols)
	pc := p
	pc.Consume = false // the caller's aggregate
	return dst, b.steps(pc, prop, k-1, false, ax, dst, tmp)
}

// axpby sets dst = a·dst + b·src (same shapes), row blocks in parallel.
func axpby(dst *dense.Matrix, a, b float32, src *dense.Matrix) {
	par.For(dst.Rows, dense.RowGrain(dst.Cols), func(lo, hi int) {
		d, s := dst.Data[lo*dst.Cols:hi*dst.Cols], src.Data[lo*src.Cols:hi*src.Cols]
		s = s[:len(d)]
		for i, v := range s {
			d[i] = a*d[i] + b*v
		}
	})
}

// dot64 is Σ x⊙y in float64 over x's rows (y has x's shape), on the rank's
// threads in row blocks added in block order (sumRowBlocks): the same sum
// at every thread count.
func dot64(x, y *dense.Matrix) float64 {
	cols := x.Cols
	return sumRowBlocks(x.Rows, func(lo, hi int) float64 {
		var d float64
		yd := y.Data[lo*cols : hi*cols]
		for i, v := range x.Data[lo*cols : hi*cols] {
			d += float64(v) * float64(yd[i])
		}
		return d
	})
}

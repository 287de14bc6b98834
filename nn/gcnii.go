package nn

import (
	"math"

	"github.com/supergcn/supergcn/dense"
)

// GCNII (Chen et al., ICML 2020, "Simple and deep graph convolutional
// networks"; PyG's GCN2Conv and its gcn2_cora example) is a body of its
// own: a linear layer and ReLU make the initial representation H⁰, then
// Layers convolutions, each
//
//	S = (1-α)·Â·H + α·H⁰,  H' = ReLU((1-β)·S + β·S·W),  β = ln(θ/l + 1)
//
// for layer l = 1…Layers (initial residual α, identity mapping θ, PyG's
// theta, the paper's λ), and a linear output layer:
//
//	x → dropout → Linear → ReLU = H⁰ → (dropout → conv_l)ˡ → dropout → Linear
//
// Â is the GCN operator (OpGCN). The row's plan declares layer 0's
// parameters with the input layer's, the last layer's with the output
// layer's, so parameter counts, shapes, costs and memory derive from the
// plans as for every model.
var gcniiHypers = []Hyper{appnpHypers[1],
	{Name: "theta", Default: 0.5, Min: 0, Max: 1000,
		Help: "identity-mapping strength θ (the paper's λ): layer l mixes in β = ln(θ/l + 1) of its weight"},
	{Name: "conv-decay", Default: 0.01, Min: 0, Max: 1,
		Help: "weight decay of the convolutions' weights (the linear layers take --weight-decay)"},
}

// gcniiPlan declares layer s of GCNII: the input layer's weight and bias
// in the first, the convolution's weight W (Hidden×Hidden, Glorot), the
// output layer's weight and bias in the last.
func gcniiPlan(s LayerShape) LayerPlan {
	h := s.Hidden
	var ps []ParamSpec
	var c LayerCost
	m := LayerMem{Kept: h, Forward: h, Backward: 3 * h} // S kept; a dropped input; dH, dS, dH⁰
	if s.Index == 0 {
		ps = append(ps, ParamSpec{Suffix: ".lin_in.weight", Rows: s.In, Cols: h, Bound: linearBound(s.In), Weight: true},
			ParamSpec{Suffix: ".lin_in.bias", Rows: 1, Cols: h, Bound: linearBound(s.In)})
		c.Forward = append(c.Forward, gemm("nn", s.In, h), elem(8, h), elem(8, h)) // X·W + b, ReLU, dropout
		m.Kept += h                                                                // H⁰
	}
	ps = append(ps, ParamSpec{Suffix: ".weight", Rows: h, Cols: h, Bound: glorotBound(h, h), Weight: true})
	c.Forward = append(c.Forward, aggregate(s.Op, h), elem(12, h), gemm("nn", h, h), elem(12, h), elem(8, h))
	c.Backward = append(c.Backward, elem(12, h), gemm("nt", h, h), elem(12, h), gemm("tn", h, h),
		elem(12, h), elem(8, h), aggregate(s.Op, h), elem(12, h))
	if s.Last() {
		ps = append(ps, ParamSpec{Suffix: ".lin_out.weight", Rows: h, Cols: s.Out, Bound: linearBound(h), Weight: true},
			ParamSpec{Suffix: ".lin_out.bias", Rows: 1, Cols: s.Out, Bound: linearBound(h)})
		c.Forward = append(c.Forward, elem(8, h), gemm("nn", h, s.Out)) // dropout, X·W + b
		c.Backward = append([]CostStep{colSums(s.Out), gemm("tn", h, s.Out), gemm("nt", s.Out, h), elem(8, h)}, c.Backward...)
		m.Kept += h // the last convolution's output, the output layer's input
	}
	if s.Index == 0 {
		c.Backward = append(c.Backward, elem(12, h), colSums(h), gemm("tn", s.In, h))
		c.Backward = append(c.Backward, inputGrad(gemm("nt", h, s.In))...)
	}
	return LayerPlan{Params: ps, Cost: c, Mem: m}
}

// gcniiBody is GCNII over the planned parameters.
type gcniiBody struct {
	layers         int
	in, h, classes int
	alpha          float32
	beta           []float32 // per convolution
	convDecay      float64
	win, bin       *Param
	w              []*Param // per convolution
	wout, bout     *Param
	params         []*Param
	drops          []*Dropout // 0: the input; l+1: before convolution l; layers+1: before the output layer
	pool           *arena
	x              *dense.Matrix   // the last Forward's input
	x0             *dense.Matrix   // H⁰
	s, r           []*dense.Matrix // per convolution: S, and its output (dropped in place by the next dropout)
	out, hidden    *dense.Matrix   // the logits; the output layer's input
	dr, ds, dx0    *dense.Matrix   // Backward's gradients
	gx             *dense.Matrix
}

// newGCNIIBody wires GCNII on the parameters its plan declared.
func newGCNIIBody(c Config, shapes []LayerShape, params [][]*Param) body {
	s0, last := shapes[0], shapes[len(shapes)-1]
	b := &gcniiBody{layers: len(shapes), in: s0.In, h: s0.Hidden, classes: last.Out,
		alpha: float32(s0.Hyper["alpha"]), convDecay: s0.Hyper["conv-decay"],
		s: make([]*dense.Matrix, len(shapes)), r: make([]*dense.Matrix, len(shapes))}
	for i, ps := range params {
		b.params = append(b.params, ps...)
		if i == 0 {
			b.win, b.bin, ps = ps[0], ps[1], ps[2:]
		}
		b.w = append(b.w, ps[0])
		if i == len(params)-1 {
			b.wout, b.bout = ps[1], ps[2]
		}
		b.beta = append(b.beta, float32(math.Log(s0.Hyper["theta"]/float64(i+1)+1)))
	}
	for range b.layers + 2 {
		b.drops = append(b.drops, &Dropout{P: c.Dropout})
	}
	return b
}

func (b *gcniiBody) setPool(a *arena) {
	b.pool = a
	for _, d := range b.drops {
		d.pool = a
	}
}

// setDecay decays every parameter (the published settings): the linear
// layers at the optimiser's rate, the convolutions' weights at conv-decay.
func (b *gcniiBody) setDecay(bool) {
	for _, p := range b.params {
		p.Decay = true
	}
	for _, p := range b.w {
		p.Decay, p.DecayRate = b.convDecay > 0, b.convDecay
	}
}

func (b *gcniiBody) lastHidden() *dense.Matrix { return b.hidden }

func (b *gcniiBody) release() {
	for i := range b.s {
		b.pool.reclaim(&b.s[i])
		b.pool.reclaim(&b.r[i])
	}
	for _, own := range []**dense.Matrix{&b.x0, &b.out, &b.dr, &b.ds, &b.dx0, &b.gx} {
		b.pool.reclaim(own)
	}
	for _, d := range b.drops {
		d.release()
	}
	b.hidden = nil
}

// forward runs x → dropout → Linear → ReLU → (dropout → conv)ˡ → dropout
// → Linear.
func (b *gcniiBody) forward(p Pass, op Operator, x *dense.Matrix, seed func(int) uint64) (*dense.Matrix, error) {
	prop, err := propagator("GCNII", op)
	if err != nil {
		return nil, err
	}
	n := x.Rows
	b.x = x
	a := b.drops[0].Forward(x, p.Train, false, seed(0))
	x0 := b.pool.lend(&b.x0, n, b.h)
	b.pool.gemm(false, false, 1, a, b.win.values(), 0, x0)
	reluBias(x0, b.bin.W)
	b.drops[0].release() // restored for the backward
	cur := b.drops[1].Forward(x0, p.Train, false, seed(1))
	for l := range b.layers {
		p.Layer = l
		if l > 0 { // the previous output, dropped in place: its ReLU mask stays exact
			cur = b.drops[l+1].Forward(b.r[l-1], p.Train, true, seed(l+1))
		}
		s := b.pool.lend(&b.s[l], n, b.h)
		pc := p
		pc.Consume = l == 0 && cur != x0 // the first dropped H⁰ is read by nothing else
		if err := prop.Forward(pc, cur, s); err != nil {
			return nil, err
		}
		if l == 0 {
			b.drops[1].release()
		}
		axpby(s, 1-b.alpha, b.alpha, x0)
		r := b.pool.lend(&b.r[l], n, b.h)
		b.pool.gemm(false, false, b.beta[l], s, b.w[l].values(), 0, r)
		axpby(r, 1, 1-b.beta[l], s)
		ReLU(r)
	}
	b.hidden = b.drops[b.layers+1].Forward(b.r[b.layers-1], p.Train, true, seed(b.layers+1))
	out := b.pool.lend(&b.out, n, b.classes)
	b.pool.gemm(false, false, 1, b.hidden, b.wout.values(), 0, out)
	dense.AddBias(out, b.bout.W)
	return out, nil
}

// backward: through the output layer, then per convolution l (Z its
// pre-activation) dZ = dH'·[H' > 0], dS = (1-β)·dZ + β·dZ·Wᵀ, dW =
// β·Sᵀ·dZ, dH⁰ += α·dS, dH = Âᵀ·((1-α)·dS); the input layer last, from
// dH⁰ and the first convolution's input gradient.
func (b *gcniiBody) backward(p Pass, op Operator, g *dense.Matrix, wantInputGrad bool) (*dense.Matrix, error) {
	prop, err := propagator("GCNII", op)
	if err != nil {
		return nil, err
	}
	n := g.Rows
	dense.ColSums(g, b.bout.G)
	b.pool.gemm(true, false, 1, b.hidden, g, 0, b.wout.grad())
	dr := b.pool.lend(&b.dr, n, b.h)
	b.pool.gemm(false, true, 1, g, b.wout.values(), 0, dr)
	b.drops[b.layers+1].Backward(dr)
	b.hidden = nil
	dx0 := b.pool.lend(&b.dx0, n, b.h)
	clear(dx0.Data)
	for l := b.layers - 1; l >= 0; l-- {
		p.Layer = l
		ReLUBackward(dr, b.r[l])
		ds := b.pool.lend(&b.ds, n, b.h)
		b.pool.gemm(false, true, b.beta[l], dr, b.w[l].values(), 0, ds)
		axpby(ds, 1, 1-b.beta[l], dr)
		b.pool.gemm(true, false, b.beta[l], b.s[l], dr, 0, b.w[l].grad())
		b.pool.reclaim(&b.s[l])
		b.pool.reclaim(&b.r[l])
		axpby(dx0, 1, b.alpha, ds)
		dense.Scale(1-b.alpha, ds.Data)
		pc := p
		pc.Consume = true
		if err := prop.Backward(pc, ds, dr); err != nil {
			return nil, err
		}
		b.drops[l+1].Backward(dr)
	}
	dense.Add(dx0, dr) // the first convolution's input was H⁰ (dropped)
	b.pool.reclaim(&b.dr)
	b.pool.reclaim(&b.ds)
	ReLUBackward(dx0, b.x0)
	dense.ColSums(dx0, b.bin.G)
	a := b.x
	if b.drops[0].active {
		a = b.drops[0].restore(b.x)
	}
	b.pool.gemm(true, false, 1, a, dx0, 0, b.win.grad())
	b.drops[0].release()
	if !wantInputGrad {
		return nil, nil
	}
	gx := b.pool.lend(&b.gx, n, b.in)
	b.pool.gemm(false, true, 1, dx0, b.win.values(), 0, gx)
	return b.drops[0].Backward(gx), nil
}

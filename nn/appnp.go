package nn

import (
	"github.com/supergcn/supergcn/dense"
)

// APPNPLayer is a layer of APPNP (Gasteiger et al., ICLR 2019, "Predict
// then propagate"; PyG's APPNP example): a linear layer H = X·W + b, and in
// the model's last layer K steps of personalised-PageRank propagation
//
//	Z⁰ = H,  Zᵏ = (1-α)·Â·Zᵏ⁻¹ + α·H,  out = Zᴷ
//
// with Â the Propagator (OpGCN). The layers before the last are the MLP's
// hidden layers (no propagation; the Model's ReLU and dropout between
// them). Weights and bias are initialised like torch.nn.Linear.
type APPNPLayer struct {
	In, Out int
	W, B    *Param
	K       int     // propagation steps: 0 except in the last layer
	Alpha   float64 // teleport probability

	convBase
	h   *dense.Matrix    // X·W + b while propagating; α·Σ gradients in Backward
	tmp [2]*dense.Matrix // Zᵏ between steps
}

// appnpHypers are APPNP's hyperparameters.
var appnpHypers = []Hyper{stepsHyper(10),
	{Name: "alpha", Default: 0.1, Min: 0, MinOpen: true, Max: 1, Help: "teleport probability α (appnp), initial residual α (gcnii)"}}

// appnpPlan declares an APPNP layer: W (a weight) and b.
func appnpPlan(s LayerShape) LayerPlan {
	bound := linearBound(s.In)
	k := appnpSteps(s)
	c := LayerCost{
		Forward:  []CostStep{gemm("nn", s.In, s.Out)},
		Backward: []CostStep{colSums(s.Out)}}
	if k > 0 {
		c.Backward = append(c.Backward, elem(4, s.Out)) // α·Σ dZᵏ cleared
	}
	for range k { // Â·Z, then the teleport; backward α·dZ summed, Âᵀ·dZ, scaled by 1-α
		c.Forward = append(c.Forward, aggregate(s.Op, s.Out), elem(12, s.Out))
		c.Backward = append(c.Backward, elem(12, s.Out), aggregate(s.Op, s.Out), elem(8, s.Out))
	}
	if k > 0 {
		c.Backward = append(c.Backward, elem(12, s.Out)) // + dZ⁰
	}
	c.Backward = append(c.Backward, gemm("tn", s.In, s.Out))
	c.Backward = append(c.Backward, inputGrad(gemm("nt", s.Out, s.In))...)
	// Memory: H, the scaled copy of H (the first step) and up to two
	// steps' results in Forward; α·Σ dZᵏ and up to two steps' in Backward.
	var m LayerMem
	if k > 0 {
		m = LayerMem{Forward: s.Out * (2 + min(k-1, 2)), Backward: s.Out * (1 + min(k, 2))}
	}
	return LayerPlan{
		Params: []ParamSpec{
			{Suffix: ".lin.weight", Rows: s.In, Cols: s.Out, Bound: bound, Weight: true},
			{Suffix: ".lin.bias", Rows: 1, Cols: s.Out, Bound: bound}},
		Cost: c, Mem: m}
}

// appnpSteps is the propagation steps of layer s: K in the last layer.
func appnpSteps(s LayerShape) int {
	if s.Last() {
		return s.steps()
	}
	return 0
}

// buildAPPNP builds an APPNP layer on W, b.
func buildAPPNP(s LayerShape, ps []*Param) Conv {
	return &APPNPLayer{In: s.In, Out: s.Out, W: ps[0], B: ps[1], K: appnpSteps(s), Alpha: s.Hyper["alpha"],
		convBase: convBase{bias: ps[1]}}
}

// Params returns W and b.
func (l *APPNPLayer) Params() []*Param { return []*Param{l.W, l.B} }

// Forward computes the linear layer and, with K steps, its propagation.
func (l *APPNPLayer) Forward(p Pass, op Operator, x *dense.Matrix) (*dense.Matrix, error) {
	prop, err := l.begin("APPNP", op, x, nil, l.In, true)
	if err != nil {
		return nil, err
	}
	n := x.Rows
	if l.K == 0 {
		out := l.pool.lend(&l.out, n, l.Out)
		l.pool.gemm(false, false, 1, x, l.W.values(), 0, out)
		l.addBias(out)
		return out, nil
	}
	h := l.pool.lend(&l.h, n, l.Out)
	l.pool.gemm(false, false, 1, x, l.W.values(), 0, h)
	dense.AddBias(h, l.B.W) // inside the propagation: never deferred
	a := float32(l.Alpha)
	cur := h
	for k := range l.K {
		own := &l.tmp[k%2]
		if k == l.K-1 {
			own = &l.out
		}
		dst := l.pool.lend(own, n, l.Out)
		pc := p
		pc.Consume = cur != h // H is read by every step
		if err := prop.Forward(pc, cur, dst); err != nil {
			return nil, err
		}
		axpby(dst, 1-a, a, h)
		cur = dst
	}
	l.pool.reclaim(&l.tmp[0])
	l.pool.reclaim(&l.tmp[1])
	l.pool.reclaim(&l.h)
	return l.out, nil
}

// Backward sets W.G and B.G from gout and returns dL/dX when wantInputGrad.
// With K steps the gradient of H is Σₖ α·dZᵏ (k ≥ 1) plus dZ⁰, dZᵏ⁻¹ =
// (1-α)·Âᵀ·dZᵏ.
func (l *APPNPLayer) Backward(p Pass, op Operator, gout *dense.Matrix, wantInputGrad bool) (*dense.Matrix, error) {
	prop, err := l.beginBackward("APPNP", op, gout, l.Out)
	if err != nil {
		return nil, err
	}
	n := gout.Rows
	gh := gout
	if l.K > 0 {
		a := float32(l.Alpha)
		acc := l.pool.lend(&l.h, n, l.Out) // α·Σ dZᵏ
		clear(acc.Data)
		cur := gout
		for k := range l.K {
			axpby(acc, 1, a, cur)
			dst := l.pool.lend(&l.tmp[k%2], n, l.Out)
			pc := p
			pc.Consume = p.Consume || cur != gout
			if err := prop.Backward(pc, cur, dst); err != nil {
				return nil, err
			}
			dense.Scale(1-a, dst.Data)
			cur = dst
		}
		dense.Add(acc, cur)
		l.pool.reclaim(&l.tmp[0])
		l.pool.reclaim(&l.tmp[1])
		gh = acc
		defer l.pool.reclaim(&l.h)
	}
	dense.ColSums(gh, l.B.G)
	l.pool.gemm(true, false, 1, l.x, gh, 0, l.W.grad())
	if !wantInputGrad {
		return nil, nil
	}
	return l.pool.inputGrad(&l.gx, l.x, gh, l.W.values(), nil, nil), nil
}

// deferBias leaves the bias to the fused stage in the layers without
// propagation only (the last layer propagates H with its bias).
func (l *APPNPLayer) deferBias() []float32 {
	if l.K > 0 {
		return nil
	}
	return l.convBase.deferBias()
}

// releaseSaved gives back what Forward kept for Backward: nothing but the
// input, which is the caller's.
func (l *APPNPLayer) releaseSaved() {}

// needsInput reports whether Backward reads the input of Forward (the
// weight gradient does).
func (l *APPNPLayer) needsInput() bool { return true }

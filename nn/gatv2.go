package nn

import (
	"errors"
	"math/rand/v2"

	"github.com/supergcn/supergcn/attn"
	"github.com/supergcn/supergcn/dense"
)

// gatv2Hypers are GATv2's declared hyperparameters.
var gatv2Hypers = []Hyper{
	{Name: "share-weights", Default: 0, Min: 0, Max: 1, Int: true,
		Help: "1: one projection for the sources and the targets (PyG GATv2Conv share_weights), 0: two"},
}

// GATv2Layer is dynamic graph attention (Brody et al., ICLR 2022; PyG
// GATv2Conv with add_self_loops, negative_slope 0.2, bias, share_weights
// as the hyperparameter says):
//
//	Zs = X·W_s + b_s,  Zt = X·W_t + b_t     (Zt = Zs with shared weights)
//	e_vu,h = ⟨a[h], LeakyReLU(Zs[u,h] + Zt[v,h])⟩
//	O[v,h] = Σ_u softmax_u(e_vu,h) Zs[u,h]  (the layer's AttentionV2 operator)
//	out = concat_h O[v,h] + b (hidden layers), or mean_h O[v,h] + b (output)
//
// with Heads heads of width Width each: W_s and W_t are In × Heads·Width,
// a is Heads × Width, b has Out = Heads·Width (concat) or Width (mean)
// entries. Attention dropout (Drop) applies to α in training passes. The
// layer's operator must implement AttentionV2.
type GATv2Layer struct {
	In, Out, Heads, Width int
	Concat, Shared        bool
	Drop                  float64 // attention dropout in [0, 1)
	WS, BS, WT, BT        *Param  // WT, BT nil when Shared
	Att, B                *Param

	convBase
	seed        uint64        // attention dropout stream (mixed with Pass.Epoch)
	zs, zt, agg *dense.Matrix // agg: the attention output
	gzs, gzt    *dense.Matrix
	gagg        *dense.Matrix
	params      []*Param
}

// gatv2Plan declares a GATv2 layer: lin_l (the sources' projection: weight
// glorot, bias zero), lin_r (the targets'; absent with shared weights),
// att (Heads × Width, glorot) and the bias, PyG's names and shapes.
func gatv2Plan(s LayerShape) LayerPlan {
	h, width := s.Heads, s.Out
	if !s.Last() {
		width = s.Out / h
	}
	hf := h * width
	shared := s.Hyper["share-weights"] == 1
	ps := []ParamSpec{
		{Suffix: ".lin_l.weight", Rows: s.In, Cols: hf, Bound: glorotBound(s.In, hf), Weight: true},
		{Suffix: ".lin_l.bias", Rows: 1, Cols: hf}}
	if !shared {
		ps = append(ps, ParamSpec{Suffix: ".lin_r.weight", Rows: s.In, Cols: hf, Bound: glorotBound(s.In, hf), Weight: true},
			ParamSpec{Suffix: ".lin_r.bias", Rows: 1, Cols: hf})
	}
	ps = append(ps, ParamSpec{Suffix: ".att", Rows: h, Cols: width, Bound: glorotBound(h, width)},
		ParamSpec{Suffix: ".bias", Rows: 1, Cols: s.Out})
	return LayerPlan{Params: ps, Cost: gatv2Cost(s.In, s.Out, hf, h, shared), Mem: gatv2Mem(s, hf, shared)}
}

// gatv2Mem is a GATv2 layer's memory with its operator's: the layer keeps
// Zs, Zt (not with shared weights) and the attention output; the operator
// holds per row the states (max and sum before and after merging), per edge
// and head the softmax numerators (and the dropped weights), per received
// row the row; backward takes the gradients of Zs and Zt (and of the heads
// before their mean), the operator the scaled output gradients and per
// edge and head two values.
func gatv2Mem(s LayerShape, hf int, shared bool) LayerMem {
	h, zt := s.Heads, hf
	if shared {
		zt = 0
	}
	m := LayerMem{Kept: 2*hf + zt, Held: 2*hf + 6*h, Backward: 2*hf + zt + 2*h, EdgeKept: h, EdgeTemp: 2 * h, HaloKept: hf}
	if s.Last() {
		m.Backward += hf
	}
	if s.AttnDropout > 0 {
		m.EdgeKept += h
	}
	return m
}

// gatv2Cost is a GATv2 layer's schedule: the two projections, the
// attention (its exchange carries the sources' rows and, for the edges
// another rank pre-aggregates, the targets' rows), the head mean; backward
// the adjoints.
func gatv2Cost(in, out, hf, h int, shared bool) LayerCost {
	proj, grads := []CostStep{gemm("nn", in, hf)}, []CostStep{gemm("tn", in, hf), colSums(hf)}
	inGrad := inputGrad(gemm("nt", hf, in))
	if !shared {
		proj = append(proj, gemm("nn", in, hf))
		grads = append(grads, gemm("tn", in, hf), colSums(hf))
		inGrad = append(inGrad, inputGrad(gemm("nt", hf, in))...)
	}
	fwd := append(append(proj, elem(8, hf)), attentionV2(h, hf), elem(8, hf))
	bwd := append([]CostStep{colSums(out), elem(8, hf), attentionV2(h, hf), elem(12, hf)}, grads...)
	return LayerCost{Forward: fwd, Backward: append(bwd, inGrad...)}
}

// buildGATv2 builds a GATv2 layer on its plan's parameters.
func buildGATv2(s LayerShape, ps []*Param) Conv {
	l := &GATv2Layer{In: s.In, Out: s.Out, Heads: s.Heads, Concat: !s.Last(), Drop: s.AttnDropout,
		WS: ps[0], BS: ps[1], params: ps}
	rest := ps[2:]
	if len(ps) == 6 {
		l.WT, l.BT, rest = ps[2], ps[3], ps[4:]
	} else {
		l.Shared = true
	}
	l.Att, l.B = rest[0], rest[1]
	l.Width = l.Att.Cols
	l.convBase = convBase{bias: l.B}
	l.seed = mix64(s.Seed ^ mix64(uint64(s.Index)+0x67617432)) // "gat2"
	return l
}

// NewGATv2Layer returns a GATv2 layer of heads heads, concatenated (out =
// heads·width) or averaged (out = width), with attention dropout drop and
// shared projections when shared, initialised from r (gatv2Plan).
func NewGATv2Layer(name string, in, out, heads int, concat, shared bool, drop float64, r *rand.Rand) *GATv2Layer {
	s := LayerShape{Name: name, Index: 0, Layers: 2, In: in, Out: out, Op: OpAttentionV2, Heads: heads, AttnDropout: drop,
		Hyper: map[string]float64{"share-weights": 0}}
	if shared {
		s.Hyper["share-weights"] = 1
	}
	if !concat {
		s.Index = 1
	}
	return buildGATv2(s, gatv2Plan(s).newParams(name, r)).(*GATv2Layer)
}

// Params returns the plan's parameters: lin_l's weight and bias, lin_r's
// (without shared weights), att, the bias.
func (l *GATv2Layer) Params() []*Param { return l.params }

// spec is the attention pass of p.
func (l *GATv2Layer) spec(p Pass) attn.Spec {
	sp := attn.Spec{Heads: l.Heads, Width: l.Width, Slope: GATSlope}
	if p.Train && l.Drop > 0 {
		sp.Drop, sp.Seed = float32(l.Drop), mix64(l.seed^mix64(uint64(p.Epoch)))
	}
	return sp
}

// project sets z = x·w + b.
func (l *GATv2Layer) project(x *dense.Matrix, w, b *Param, z *dense.Matrix) {
	l.pool.gemm(false, false, 1, x, w.values(), 0, z)
	dense.AddBias(z, b.W)
}

// Forward computes the layer output for x (Rows = op.Rows(), Cols = In).
func (l *GATv2Layer) Forward(p Pass, op Operator, x *dense.Matrix) (*dense.Matrix, error) {
	if err := checkInput("GATv2", op, x, l.In); err != nil {
		return nil, err
	}
	att, ok := op.(AttentionV2)
	if !ok {
		return nil, errors.New("nn: GATv2 forward: the graph operator does not implement GATv2 attention")
	}
	n, hf := x.Rows, l.Heads*l.Width
	l.x = x
	zs := l.pool.lend(&l.zs, n, hf)
	l.project(x, l.WS, l.BS, zs)
	zt := zs
	if !l.Shared {
		zt = l.pool.lend(&l.zt, n, hf)
		l.project(x, l.WT, l.BT, zt)
	}
	agg := l.pool.lend(&l.agg, n, hf)
	if err := att.AttendV2(p, l.spec(p), zs, zt, l.Att.W, agg); err != nil {
		return nil, err
	}
	// A copy, as GAT's: the operator reads agg in the backward pass.
	out := l.pool.lend(&l.out, n, l.Out)
	if l.Concat {
		copy(out.Data, agg.Data)
	} else {
		headMean(agg, l.Heads, out)
	}
	l.addBias(out)
	return out, nil
}

// Backward sets the parameter gradients from gout = dL/d(out) and, when
// wantInputGrad is set, returns dL/dX (nil otherwise).
func (l *GATv2Layer) Backward(p Pass, op Operator, gout *dense.Matrix, wantInputGrad bool) (*dense.Matrix, error) {
	if err := checkGrad("GATv2", l.x, gout, l.Out); err != nil {
		return nil, err
	}
	att, ok := op.(AttentionV2)
	if !ok {
		return nil, errors.New("nn: GATv2 backward: the graph operator does not implement GATv2 attention")
	}
	n, hf := gout.Rows, l.Heads*l.Width
	dense.ColSums(gout, l.B.G)
	gagg := gout
	if !l.Concat {
		gagg = l.pool.lend(&l.gagg, n, hf)
		spreadMean(gout, l.Heads, gagg)
	}
	gzs, gzt := l.pool.lend(&l.gzs, n, hf), l.pool.lend(&l.gzt, n, hf)
	if err := att.AttendV2Backward(p, gagg, gzs, gzt, l.Att.G); err != nil {
		return nil, err
	}
	l.pool.reclaim(&l.gagg)
	l.releaseSaved()
	defer l.pool.reclaim(&l.gzs)
	defer l.pool.reclaim(&l.gzt)
	if l.Shared {
		axpby(gzs, 1, 1, gzt)
	} else {
		l.pool.gemm(true, false, 1, l.x, gzt, 0, l.WT.grad())
		dense.ColSums(gzt, l.BT.G)
	}
	l.pool.gemm(true, false, 1, l.x, gzs, 0, l.WS.grad())
	dense.ColSums(gzs, l.BS.G)
	if !wantInputGrad {
		return nil, nil
	}
	gx := l.pool.lend(&l.gx, n, l.In)
	if l.Shared {
		l.pool.gemm(false, true, 1, gzs, l.WS.values(), 0, gx)
	} else {
		l.pool.gemm2(true, gzs, l.WS.values(), gzt, l.WT.values(), 0, gx)
	}
	return gx, nil
}

// releaseSaved gives back what Forward kept for Backward.
func (l *GATv2Layer) releaseSaved() {
	l.pool.reclaim(&l.zs)
	l.pool.reclaim(&l.zt)
	l.pool.reclaim(&l.agg)
}

// needsInput reports that Backward reads the input of Forward (Xᵀ·dZ).
func (l *GATv2Layer) needsInput() bool { return true }

// attentionV2 is the attention step of a GATv2 layer (CostStep.TargetRows).
func attentionV2(heads, width int) CostStep {
	s := attention(heads, width)
	s.TargetRows = true
	return s
}

package nn

import (
	"errors"
	"math/rand/v2"

	"github.com/supergcn/supergcn/attn"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/internal/par"
)

// GAT's fixed hyper-parameters (Veličković et al.; PyG GATConv defaults).
const (
	GATSlope = 0.2 // LeakyReLU negative slope of the attention scores
)

// GATLayer is graph attention (Veličković et al.; PyG GATConv with
// add_self_loops, negative_slope 0.2, bias):
//
//	Z = X·W,  src[u,h] = ⟨a_src[h], Z[u,h]⟩,  dst[v,h] = ⟨a_dst[h], Z[v,h]⟩
//	O[v,h] = Σ_u α_vu,h Z[u,h]   (the layer's Attention operator)
//	out = concat_h O[v,h] + b    (hidden layers), or mean_h O[v,h] + b (output)
//
// with Heads heads of width Width each: W is In × Heads·Width, a_src and
// a_dst are Heads × Width, b has Out = Heads·Width (concat) or Width (mean)
// entries. Attention dropout (Drop) applies to α in training passes. The
// layer's Propagator must implement Attention.
type GATLayer struct {
	In, Out, Heads, Width int
	Concat                bool
	Drop                  float64 // attention dropout in [0, 1)
	W, ASrc, ADst, B      *Param

	convBase
	seed             uint64        // attention dropout stream (mixed with Pass.Epoch)
	z, src, dst, agg *dense.Matrix // agg: the attention output (also the layer's output when direct)
	gz, gagg         *dense.Matrix
	gsrc, gdst       *dense.Matrix
}

// gatPlan declares a GAT layer of s.Heads heads: hidden layers concatenate
// them (Out = Heads·Width), the output layer averages them (Width = Out).
// W (In × Heads·Width), a_src and a_dst (Heads × Width) are glorot, the
// bias zero; PyG's names.
func gatPlan(s LayerShape) LayerPlan {
	h, width := s.Heads, s.Out
	if !s.Last() {
		width = s.Out / h
	}
	hf := h * width
	return LayerPlan{
		Params: []ParamSpec{
			{Suffix: ".lin.weight", Rows: s.In, Cols: hf, Bound: glorotBound(s.In, hf), Weight: true},
			{Suffix: ".att_src", Rows: h, Cols: width, Bound: glorotBound(h, width)},
			{Suffix: ".att_dst", Rows: h, Cols: width, Bound: glorotBound(h, width)},
			{Suffix: ".bias", Rows: 1, Cols: s.Out}},
		Cost: gatCost(s.In, s.Out, hf, h),
		Mem:  gatMem(s, hf)}
}

// gatMem is a GAT layer's memory with its Attention operator's: the layer
// keeps z, its terms and the attention output (its own output is a copy,
// which the operator's backward does not see changed); the operator holds the owned
// and halo graphs' states (row sums, max and sum before and after merging),
// per received row the row and its terms, and nothing per edge (the
// backward recomputes the softmax). Backward takes the gradients of z and
// its terms (and of the heads before their mean), the operator the scaled
// output gradients of both graphs, per row the terms it gathers (three a
// head) and, unless its heads run eight to a vector (attn recomputes their
// score gradients), per edge and head the score gradient.
func gatMem(s LayerShape, hf int) LayerMem {
	h := s.Heads
	m := LayerMem{Kept: 2*hf + 2*h, Held: 2*hf + 6*h, Backward: 3*hf + 7*h, HaloKept: hf + 3*h}
	if hf != 8*h || h%8 != 0 {
		m.EdgeTemp = h
	}
	if s.Last() {
		m.Backward += hf
	}
	return m
}

// gatCost is a GAT layer's schedule: X·W, the score terms, the attention
// (one pass of h heads over Heads·Width columns, whose exchange also
// carries the per-head scalars), the head mean; backward the adjoints.
func gatCost(in, out, hf, h int) LayerCost {
	return LayerCost{
		Forward: []CostStep{gemm("nn", in, hf), elem(8, hf), attention(h, hf), elem(8, hf)},
		Backward: []CostStep{colSums(out), elem(8, hf), attention(h, hf), elem(12, hf),
			gemm("tn", in, hf), inputGrad(gemm("nt", hf, in))[0]},
	}
}

// buildGAT builds a GAT layer on its plan's parameters.
func buildGAT(s LayerShape, ps []*Param) Conv {
	l := &GATLayer{In: s.In, Out: s.Out, Heads: s.Heads, Width: ps[1].Cols, Concat: !s.Last(), Drop: s.AttnDropout,
		W: ps[0], ASrc: ps[1], ADst: ps[2], B: ps[3], convBase: convBase{bias: ps[3]}}
	l.seed = mix64(s.Seed ^ mix64(uint64(s.Index)+0x676174)) // "gat"
	return l
}

// NewGATLayer returns a GAT layer of heads heads, concatenated (out =
// heads·width) or averaged (out = width), with attention dropout drop,
// initialised from r (gatPlan).
func NewGATLayer(name string, in, out, heads int, concat bool, drop float64, r *rand.Rand) *GATLayer {
	s := LayerShape{Name: name, Index: 0, Layers: 2, In: in, Out: out, Op: OpAttention, Heads: heads, AttnDropout: drop}
	if !concat {
		s.Index = 1
	}
	return buildGAT(s, gatPlan(s).newParams(name, r)).(*GATLayer)
}

// Params returns W, a_src, a_dst, b.
func (l *GATLayer) Params() []*Param { return []*Param{l.W, l.ASrc, l.ADst, l.B} }

// spec is the attention pass of p.
func (l *GATLayer) spec(p Pass) attn.Spec {
	sp := attn.Spec{Heads: l.Heads, Width: l.Width, Slope: GATSlope}
	if p.Train && l.Drop > 0 {
		sp.Drop, sp.Seed = float32(l.Drop), mix64(l.seed^mix64(uint64(p.Epoch)))
	}
	return sp
}

// Forward computes the layer output for x (Rows = prop.Rows(), Cols = In).
func (l *GATLayer) Forward(p Pass, op Operator, x *dense.Matrix) (*dense.Matrix, error) {
	if err := checkInput("GAT", op, x, l.In); err != nil {
		return nil, err
	}
	att, ok := op.(Attention)
	if !ok {
		return nil, errors.New("nn: GAT forward: the graph operator does not implement attention")
	}
	n, hf := x.Rows, l.Heads*l.Width
	l.x = x
	z := l.pool.lend(&l.z, n, hf)
	l.pool.gemm(false, false, 1, x, l.W.values(), 0, z)
	src, dst := l.pool.lend(&l.src, n, l.Heads), l.pool.lend(&l.dst, n, l.Heads)
	headDots(z, l.ASrc.W, l.ADst.W, l.Width, src, dst)
	agg := l.pool.lend(&l.agg, n, hf)
	if err := att.Attend(p, l.spec(p), z, src, dst, agg); err != nil {
		return nil, err
	}
	// The output is a copy: the attention operator reads agg (its forward
	// output) in the backward pass, and the hidden stage after this layer
	// (bias, ReLU, dropout) works on the output in place.
	out := l.pool.lend(&l.out, n, l.Out)
	if l.Concat {
		copy(out.Data, agg.Data)
	} else {
		headMean(agg, l.Heads, out)
	}
	l.addBias(out)
	return out, nil
}

// headDots sets src[v,h] = ⟨as[h], z[v,h]⟩ and dst[v,h] = ⟨ad[h], z[v,h]⟩.
func headDots(z *dense.Matrix, as, ad []float32, width int, src, dst *dense.Matrix) {
	h := src.Cols
	par.For(z.Rows, dense.RowGrain(z.Cols), func(lo, hi int) {
		for v := lo; v < hi; v++ {
			for hd := range h {
				zr := z.Data[v*z.Cols+hd*width : v*z.Cols+(hd+1)*width]
				var s, d float32
				for j, x := range zr {
					s += as[hd*width+j] * x
					d += ad[hd*width+j] * x
				}
				src.Data[v*h+hd], dst.Data[v*h+hd] = s, d
			}
		}
	})
}

// headMean sets out[v] = mean over the heads of agg[v] (heads blocks of
// out.Cols columns).
func headMean(agg *dense.Matrix, heads int, out *dense.Matrix) {
	f, inv := out.Cols, 1/float32(heads)
	par.For(out.Rows, dense.RowGrain(agg.Cols), func(lo, hi int) {
		for v := lo; v < hi; v++ {
			o := out.Data[v*f : (v+1)*f]
			clear(o)
			for hd := range heads {
				dense.Axpy(1, agg.Data[v*agg.Cols+hd*f:v*agg.Cols+(hd+1)*f], o)
			}
			dense.Scale(inv, o)
		}
	})
}

// Backward sets the parameter gradients from gout = dL/d(out) and, when
// wantInputGrad is set, returns dL/dX (nil otherwise).
func (l *GATLayer) Backward(p Pass, op Operator, gout *dense.Matrix, wantInputGrad bool) (*dense.Matrix, error) {
	if err := checkGrad("GAT", l.x, gout, l.Out); err != nil {
		return nil, err
	}
	att, ok := op.(Attention)
	if !ok {
		return nil, errors.New("nn: GAT backward: the graph operator does not implement attention")
	}
	n, hf := gout.Rows, l.Heads*l.Width
	dense.ColSums(gout, l.B.G)
	gagg := gout
	if !l.Concat {
		gagg = l.pool.lend(&l.gagg, n, hf)
		spreadMean(gout, l.Heads, gagg)
	}
	gz := l.pool.lend(&l.gz, n, hf)
	gsrc, gdst := l.pool.lend(&l.gsrc, n, l.Heads), l.pool.lend(&l.gdst, n, l.Heads)
	if err := att.AttendBackward(p, gagg, gz, gsrc, gdst); err != nil {
		return nil, err
	}
	l.pool.reclaim(&l.gagg)
	headGrads(l.z, gsrc, gdst, l.ASrc, l.ADst, l.Width, gz)
	l.pool.reclaim(&l.gsrc)
	l.pool.reclaim(&l.gdst)
	l.releaseSaved()
	l.pool.gemm(true, false, 1, l.x, gz, 0, l.W.grad())
	defer l.pool.reclaim(&l.gz)
	if !wantInputGrad {
		return nil, nil
	}
	return l.pool.inputGrad(&l.gx, l.x, gz, l.W.values(), nil, nil), nil
}

// spreadMean sets g[v,h] = gout[v]/heads for every head.
func spreadMean(gout *dense.Matrix, heads int, g *dense.Matrix) {
	f, inv := gout.Cols, 1/float32(heads)
	for v := range gout.Rows {
		src := gout.Data[v*f : (v+1)*f]
		for hd := range heads {
			dst := g.Data[v*g.Cols+hd*f : v*g.Cols+(hd+1)*f]
			for j, x := range src {
				dst[j] = x * inv
			}
		}
	}
}

// headGrads adds the score terms to gz (gz[v,h] += gsrc[v,h]·a_src[h] +
// gdst[v,h]·a_dst[h]) and sets the gradients of a_src and a_dst
// (Σ_v gsrc[v,h]·z[v,h], Σ_v gdst[v,h]·z[v,h]); z is the projection.
func headGrads(z, gsrc, gdst *dense.Matrix, as, ad *Param, width int, gz *dense.Matrix) {
	h, hf := gsrc.Cols, z.Cols
	clear(as.G)
	clear(ad.G)
	for v := range z.Rows {
		for hd := range h {
			s, d := gsrc.Data[v*h+hd], gdst.Data[v*h+hd]
			zr := z.Data[v*hf+hd*width : v*hf+(hd+1)*width]
			gr := gz.Data[v*hf+hd*width : v*hf+(hd+1)*width]
			a, b := as.G[hd*width:(hd+1)*width], ad.G[hd*width:(hd+1)*width]
			for j, x := range zr {
				gr[j] += s*as.W[hd*width+j] + d*ad.W[hd*width+j]
				a[j] += s * x
				b[j] += d * x
			}
		}
	}
}

// releaseSaved gives back what Forward kept for Backward.
func (l *GATLayer) releaseSaved() {
	l.pool.reclaim(&l.z)
	l.pool.reclaim(&l.src)
	l.pool.reclaim(&l.dst)
	l.pool.reclaim(&l.agg)
}

// needsInput reports that Backward reads the input of Forward (Xᵀ·dZ).
func (l *GATLayer) needsInput() bool { return true }

// validateHeads checks the attention fields of c against model m: only
// attention models take them, and the hidden layers' heads divide Hidden.
func (c Config) validateHeads(m modelKind) error {
	bad := func(name, format string, args ...any) error {
		return field.Errorf("nn.Config."+name, format, args...)
	}
	att := m.op.Attends()
	switch {
	case !att && c.Heads != 0:
		return bad("Heads", "%d, but %s has no attention heads", c.Heads, m.name)
	case !att && c.OutHeads != 0:
		return bad("OutHeads", "%d, but %s has no attention heads", c.OutHeads, m.name)
	case !att && c.AttnDropout != 0:
		return bad("AttnDropout", "%g, but %s has no attention", c.AttnDropout, m.name)
	case c.Heads < 0 || c.Heads > MaxWidth:
		return bad("Heads", "%d, need 1 to %d", c.Heads, MaxWidth)
	case c.OutHeads < 0 || c.OutHeads > MaxWidth:
		return bad("OutHeads", "%d, need 1 to %d", c.OutHeads, MaxWidth)
	case c.Layers > 1 && c.Hidden%max(c.Heads, 1) != 0:
		return bad("Heads", "%d heads do not divide the hidden width %d", c.Heads, c.Hidden)
	case !(c.AttnDropout >= 0 && c.AttnDropout < 1):
		return bad("AttnDropout", "%g is not in [0, 1)", c.AttnDropout)
	}
	return nil
}

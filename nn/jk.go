package nn

import (
	"math/rand/v2"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/internal/par"
)

// Jumping knowledge (Xu et al., ICML 2018; PyG's BasicGNN with jk): every
// convolution of the row, the last one too, is Hidden wide and followed by
// [normalisation] → ReLU → dropout; the layers' outputs are combined
// (Config.JK: "cat" concatenates them, "max" takes the elementwise
// maximum, "last" the last one) and a linear layer maps the combination
// to the classes:
//
//	x → dropout → (conv_i → [norm] → ReLU → dropout = h_i)ⁱ → JK(h_0…h_{L-1}) → Linear
//
// Its parameters follow the convolutions' and normalisations': jk.lin.weight
// ((Layers·Hidden or Hidden) × Out, torch.nn.Linear's initialisation) and
// jk.lin.bias.

// jumping reports whether c's model combines its layers by jumping
// knowledge.
func (c Config) jumping() bool { return c.JK != "" && c.JK != "none" }

// validateJK checks Config.JK against model m: a pipeline row without
// attention.
func (c Config) validateJK(m modelKind) error {
	switch {
	case !c.jumping():
		return nil
	case c.JK != "cat" && c.JK != "max" && c.JK != "last":
		return field.Errorf("nn.Config.JK", "%q is not none, cat, max or last", c.JK)
	case m.body != nil || m.op.Attends():
		return field.Errorf("nn.Config.JK", "%s, but %s does not combine its layers (jumping knowledge takes gcn, sage, gin, sgc, appnp)", c.JK, m.name)
	case c.Hidden < 1:
		return field.Errorf("nn.Config.Hidden", "%d, need at least 1 with jumping knowledge", c.Hidden)
	}
	return nil
}

// jkWidth is the width of the combination of c's layers.
func (c Config) jkWidth() int {
	if c.JK == "cat" {
		return c.Layers * c.Hidden
	}
	return c.Hidden
}

// jkParams is the shapes of the jumping-knowledge linear layer (none
// without jumping knowledge).
func (c Config) jkParams() []ParamShape {
	if !c.jumping() {
		return nil
	}
	return []ParamShape{{Name: "jk.lin.weight", Rows: c.jkWidth(), Cols: c.Out, Weight: true}, {Name: "jk.lin.bias", Rows: 1, Cols: c.Out}}
}

// jkBody is the jumping-knowledge model over the row's convolutions.
type jkBody struct {
	mode   string
	hidden int
	convs  []Conv
	norms  []*LayerNorm
	bnorms []*BatchNorm
	drops  []*Dropout // 0: the input; i+1: after convolution i
	w, b   *Param
	params []*Param
	pool   *arena
	xs     []*dense.Matrix // h_i of the last Forward
	arg    []uint16        // "max": the layer of each maximum
	z, out *dense.Matrix   // the combination, the logits
	dz, d  *dense.Matrix
	gx     *dense.Matrix
}

// newJK builds m's jumping-knowledge body on the convolutions of row
// kind, drawing their parameters from r in Model.Params order.
func (m *Model) newJK(kind modelKind, r *rand.Rand) error {
	cfg := m.cfg
	b := &jkBody{mode: cfg.JK, hidden: cfg.Hidden, xs: make([]*dense.Matrix, cfg.Layers)}
	b.drops = append(b.drops, &Dropout{P: cfg.Dropout})
	for i := range cfg.Layers {
		c, err := buildLayer(kind, cfg.shape(kind, i), r)
		if err != nil {
			return err
		}
		b.convs = append(b.convs, c)
		b.params = append(b.params, c.Params()...)
		var ln *LayerNorm
		var bn *BatchNorm
		switch cfg.Norm {
		case "layer":
			ln = NewLayerNorm(normName(i), cfg.Hidden)
			b.params = append(b.params, ln.Params()...)
		case "batch":
			sum, _ := m.op.(Reducer)
			bn = NewBatchNorm(normName(i), cfg.Hidden, sum)
			b.params = append(b.params, bn.Params()...)
		}
		b.norms, b.bnorms = append(b.norms, ln), append(b.bnorms, bn)
		b.drops = append(b.drops, &Dropout{P: cfg.Dropout})
	}
	lin := LayerPlan{Params: []ParamSpec{
		{Suffix: ".weight", Rows: cfg.jkWidth(), Cols: cfg.Out, Bound: linearBound(cfg.jkWidth()), Weight: true},
		{Suffix: ".bias", Rows: 1, Cols: cfg.Out, Bound: linearBound(cfg.jkWidth())}}}
	ps := lin.newParams("jk.lin", r)
	b.w, b.b = ps[0], ps[1]
	b.params = append(b.params, ps...)
	m.params = b.params
	m.pool = &arena{}
	m.pool.work.Precision, _ = dense.ParsePrecision(cfg.Precision) // validated
	m.body = b
	b.setPool(m.pool)
	m.SetDecayAll(false)
	return nil
}

func (b *jkBody) setPool(a *arena) {
	b.pool = a
	for _, c := range b.convs {
		c.setPool(a)
	}
	for _, d := range b.drops {
		d.pool = a
	}
}

// setDecay: every parameter but the running statistics, or the first
// convolution's weight matrices (Model.SetDecayAll).
func (b *jkBody) setDecay(all bool) {
	first := map[*Param]bool{}
	for _, p := range b.convs[0].Params() {
		first[p] = p.weight
	}
	for _, p := range b.params {
		p.Decay = !p.buffer && (all || first[p])
	}
}

func (b *jkBody) lastHidden() *dense.Matrix { return b.z }

func (b *jkBody) release() {
	for _, c := range b.convs {
		c.releaseSaved()
		c.releaseOut()
		c.releaseGrad()
	}
	for _, d := range b.drops {
		d.release()
	}
	for _, own := range []**dense.Matrix{&b.out, &b.dz, &b.d, &b.gx} {
		b.pool.reclaim(own)
	}
	if b.mode != "last" {
		b.pool.reclaim(&b.z)
	}
	b.z = nil
	clear(b.xs)
}

func (b *jkBody) forward(p Pass, op Operator, x *dense.Matrix, seed func(int) uint64) (*dense.Matrix, error) {
	h := b.drops[0].Forward(x, p.Train, false, seed(0))
	for i, c := range b.convs {
		p.Layer = i
		out, err := c.Forward(p, op, h)
		if err != nil {
			return nil, err
		}
		if b.norms[i] != nil {
			out = b.norms[i].Forward(out)
		}
		if b.bnorms[i] != nil {
			if out, err = b.bnorms[i].Forward(p.Train, out); err != nil {
				return nil, err
			}
		}
		ReLU(out)
		h = b.drops[i+1].Forward(out, p.Train, true, seed(i+1))
		b.xs[i] = h
	}
	b.combine()
	out := b.pool.lend(&b.out, x.Rows, b.w.Cols)
	b.pool.gemm(false, false, 1, b.z, b.w.values(), 0, out)
	dense.AddBias(out, b.b.W)
	return out, nil
}

// combine sets b.z from the layers' outputs.
func (b *jkBody) combine() {
	n, hd, layers := b.xs[0].Rows, b.hidden, len(b.xs)
	switch b.mode {
	case "last":
		b.z = b.xs[layers-1]
	case "cat":
		z := b.pool.lend(&b.z, n, layers*hd)
		par.For(n, dense.RowGrain(z.Cols), func(lo, hi int) {
			for r := lo; r < hi; r++ {
				for i, h := range b.xs {
					copy(z.Row(r)[i*hd:(i+1)*hd], h.Row(r))
				}
			}
		})
	case "max":
		z := b.pool.lend(&b.z, n, hd)
		if cap(b.arg) < n*hd {
			b.arg = make([]uint16, n*hd)
		}
		b.arg = b.arg[:n*hd]
		par.For(n*hd, 1<<15, func(lo, hi int) {
			copy(z.Data[lo:hi], b.xs[0].Data[lo:hi])
			clear(b.arg[lo:hi])
			for i, h := range b.xs[1:] {
				for k := lo; k < hi; k++ {
					if v := h.Data[k]; v > z.Data[k] { // ties: the earliest layer (torch.max's first index)
						z.Data[k], b.arg[k] = v, uint16(i+1)
					}
				}
			}
		})
	}
}

// share writes into d the part of dz that reaches layer i's output.
func (b *jkBody) share(i int, dz, d *dense.Matrix) {
	hd, layers := b.hidden, len(b.xs)
	switch b.mode {
	case "last":
		if i == layers-1 {
			copy(d.Data, dz.Data)
		} else {
			clear(d.Data)
		}
	case "cat":
		par.For(d.Rows, dense.RowGrain(hd), func(lo, hi int) {
			for r := lo; r < hi; r++ {
				copy(d.Row(r), dz.Row(r)[i*hd:(i+1)*hd])
			}
		})
	case "max":
		par.For(len(d.Data), 1<<15, func(lo, hi int) {
			for k := lo; k < hi; k++ {
				d.Data[k] = 0
				if int(b.arg[k]) == i {
					d.Data[k] = dz.Data[k]
				}
			}
		})
	}
}

func (b *jkBody) backward(p Pass, op Operator, g *dense.Matrix, wantInputGrad bool) (*dense.Matrix, error) {
	n := g.Rows
	dense.ColSums(g, b.b.G)
	b.pool.gemm(true, false, 1, b.z, g, 0, b.w.grad())
	dz := b.pool.lend(&b.dz, n, b.z.Cols)
	b.pool.gemm(false, true, 1, g, b.w.values(), 0, dz)
	p.Consume = true
	var above *dense.Matrix // the input gradient of convolution i+1
	for i := len(b.convs) - 1; i >= 0; i-- {
		p.Layer = i
		d := b.pool.lend(&b.d, n, b.hidden)
		b.share(i, dz, d)
		if above != nil {
			dense.Add(d, above)
			b.convs[i+1].releaseGrad()
		}
		d = b.drops[i+1].Backward(d)
		ReLUBackward(d, b.xs[i])
		if b.norms[i] != nil {
			d = b.norms[i].Backward(d)
		}
		if b.bnorms[i] != nil {
			var err error
			if d, err = b.bnorms[i].Backward(d); err != nil {
				return nil, err
			}
		}
		gx, err := b.convs[i].Backward(p, op, d, i > 0 || wantInputGrad)
		if err != nil {
			return nil, err
		}
		above = gx
	}
	if !wantInputGrad {
		return nil, nil
	}
	return b.drops[0].Backward(above), nil
}

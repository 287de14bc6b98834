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
// Its parameters follow the convolutions', normalisations' and residual
// projections': jk.lin.weight
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

// stackBody is the pipeline of the row's convolutions run in separate
// passes, with jumping knowledge (mode "cat", "max", "last": every
// convolution hidden, combined by a linear layer) or without (mode "": the
// last convolution is the output layer), and with or without residual
// connections (residual.go).
type stackBody struct {
	mode   string
	hidden int
	convs  []Conv
	norms  []*LayerNorm // per hidden convolution
	bnorms []*BatchNorm
	skips  []*skip    // per hidden convolution; nil without residual connections
	drops  []*Dropout // 0: the input; i+1: after hidden convolution i
	w, b   *Param     // the jumping-knowledge linear layer (nil without)
	params []*Param
	pool   *arena
	h0     *dense.Matrix   // the dropped input of the last Forward
	xs     []*dense.Matrix // h_{i+1} of the last Forward, per hidden convolution i
	acts   []*dense.Matrix // with skips: the activations ReLU([norm](conv_i)), their masks
	zs     []*dense.Matrix // with skips: activation + skip, dropped in place to h_{i+1}
	arg    []uint16        // "max": the layer of each maximum
	z, out *dense.Matrix   // the combination, the logits
	dz, d  *dense.Matrix
}

// newStack builds m's separate-pass body on the convolutions of row
// kind, drawing their parameters from r in Model.Params order (per layer
// the convolution's, the normalisation's, the projection's; the
// jumping-knowledge linear layer last).
func (m *Model) newStack(kind modelKind, r *rand.Rand) error {
	cfg := m.cfg
	nh := cfg.Layers - 1
	b := &stackBody{hidden: cfg.Hidden}
	if cfg.jumping() {
		b.mode, nh = cfg.JK, cfg.Layers
	}
	b.xs = make([]*dense.Matrix, nh)
	if cfg.Residual {
		b.skips, b.acts, b.zs = make([]*skip, nh), make([]*dense.Matrix, nh), make([]*dense.Matrix, nh)
	}
	b.drops = append(b.drops, &Dropout{P: cfg.Dropout})
	for i := range cfg.Layers {
		s := cfg.shape(kind, i)
		c, err := buildLayer(kind, s, r)
		if err != nil {
			return err
		}
		b.convs = append(b.convs, c)
		b.params = append(b.params, c.Params()...)
		if i == nh {
			break
		}
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
		if cfg.Residual {
			sk := &skip{}
			if ps := (LayerPlan{Params: cfg.resParams(s)}).newParams(resName(i), r); len(ps) > 0 {
				sk.w = ps[0]
				b.params = append(b.params, ps...)
			}
			b.skips[i] = sk
		}
		b.drops = append(b.drops, &Dropout{P: cfg.Dropout})
	}
	if b.mode != "" {
		lin := LayerPlan{Params: []ParamSpec{
			{Suffix: ".weight", Rows: cfg.jkWidth(), Cols: cfg.Out, Bound: linearBound(cfg.jkWidth()), Weight: true},
			{Suffix: ".bias", Rows: 1, Cols: cfg.Out, Bound: linearBound(cfg.jkWidth())}}}
		ps := lin.newParams("jk.lin", r)
		b.w, b.b = ps[0], ps[1]
		b.params = append(b.params, ps...)
	}
	m.params = b.params
	m.pool = &arena{}
	m.pool.work.Precision, _ = dense.ParsePrecision(cfg.Precision) // validated
	m.body = b
	b.setPool(m.pool)
	m.SetDecayAll(false)
	return nil
}

func (b *stackBody) setPool(a *arena) {
	b.pool = a
	for _, c := range b.convs {
		c.setPool(a)
	}
	for _, d := range b.drops {
		d.pool = a
	}
}

// setDecay: every parameter but the running statistics, or the first
// convolution's weight matrices and its projection (Model.SetDecayAll).
func (b *stackBody) setDecay(all bool) {
	first := map[*Param]bool{}
	for _, p := range b.convs[0].Params() {
		first[p] = p.weight
	}
	if len(b.skips) > 0 && b.skips[0].w != nil {
		first[b.skips[0].w] = true
	}
	for _, p := range b.params {
		p.Decay = !p.buffer && (all || first[p])
	}
}

// lastHidden is the output layer's input: the combination, or the last
// hidden convolution's dropped output (nil for one layer).
func (b *stackBody) lastHidden() *dense.Matrix {
	if b.mode != "" {
		return b.z
	}
	if len(b.xs) == 0 {
		return nil
	}
	return b.xs[len(b.xs)-1]
}

func (b *stackBody) release() {
	for _, c := range b.convs {
		c.releaseSaved()
		c.releaseOut()
		c.releaseGrad()
	}
	for _, d := range b.drops {
		d.release()
	}
	for _, own := range []**dense.Matrix{&b.out, &b.dz, &b.d} {
		b.pool.reclaim(own)
	}
	for i, s := range b.skips {
		b.pool.reclaim(&b.zs[i])
		b.pool.reclaim(&s.dh)
	}
	if b.mode == "cat" || b.mode == "max" {
		b.pool.reclaim(&b.z)
	}
	b.z, b.h0 = nil, nil
	clear(b.xs)
	clear(b.acts)
}

// input is hidden convolution i's input in the last Forward.
func (b *stackBody) input(i int) *dense.Matrix {
	if i == 0 {
		return b.h0
	}
	return b.xs[i-1]
}

func (b *stackBody) forward(p Pass, op Operator, x *dense.Matrix, seed func(int) uint64) (*dense.Matrix, error) {
	h := b.drops[0].Forward(x, p.Train, false, seed(0))
	b.h0 = h
	for i, c := range b.convs {
		p.Layer = i
		out, err := c.Forward(p, op, h)
		if err != nil || i == len(b.xs) { // the output convolution
			return out, err
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
		if b.skips != nil {
			b.acts[i] = out
			z := b.pool.lend(&b.zs[i], out.Rows, out.Cols)
			copy(z.Data, out.Data)
			b.skips[i].forward(b.pool, h, z)
			out = z
		}
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
func (b *stackBody) combine() {
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
func (b *stackBody) share(i int, dz, d *dense.Matrix) {
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

// backward runs the output layer's backward (the linear layer of the
// combination, or the output convolution), then each hidden convolution's
// from the gradient reaching its output: its share of the combination's
// and the input gradient of the convolution above.
func (b *stackBody) backward(p Pass, op Operator, g *dense.Matrix, wantInputGrad bool) (*dense.Matrix, error) {
	n, nh := g.Rows, len(b.xs)
	p.Consume = true
	var dz, above *dense.Matrix // the combination's gradient; the input gradient of the convolution above
	if b.mode == "" {
		p.Layer = nh
		gx, err := b.convs[nh].Backward(p, op, g, nh > 0 || wantInputGrad)
		if err != nil {
			return nil, err
		}
		above = gx
	} else {
		dense.ColSums(g, b.b.G)
		b.pool.gemm(true, false, 1, b.z, g, 0, b.w.grad())
		dz = b.pool.lend(&b.dz, n, b.z.Cols)
		b.pool.gemm(false, true, 1, g, b.w.values(), 0, dz)
	}
	for i := nh - 1; i >= 0; i-- {
		p.Layer = i
		d := b.pool.lend(&b.d, n, b.hidden)
		switch {
		case dz == nil:
			copy(d.Data, above.Data)
		case above != nil:
			b.share(i, dz, d)
			dense.Add(d, above)
		default:
			b.share(i, dz, d)
		}
		if above != nil {
			b.convs[i+1].releaseGrad()
		}
		d = b.drops[i+1].Backward(d)
		mask := b.xs[i]
		if b.skips != nil {
			b.skips[i].backward(b.pool, b.input(i), d, i > 0 || wantInputGrad)
			mask = b.acts[i]
		}
		ReLUBackward(d, mask)
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
		if b.skips != nil && gx != nil {
			b.skips[i].addInputGrad(b.pool, gx)
		}
		above = gx
	}
	if !wantInputGrad {
		return nil, nil
	}
	return b.drops[0].Backward(above), nil
}

// JKCost is the cost schedule of the jumping-knowledge output layer of c
// (empty without jumping knowledge), per row: forward the combination
// (cat: the layers' outputs copied side by side, 8 bytes a value; max:
// each value read from every layer, the maximum and its layer written,
// 4·Layers + 6 bytes; last: nothing), the linear layer (jkWidth × Out)
// and its bias; backward the bias's column sums, the weight's gradient
// and the combination's, then for each layer its share (cat: a copy,
// max: the masked write of 10 bytes a value, last: a copy for the last
// layer and a clear of 4 bytes for the others)
// and, below the top layer, the sum with the gradient from above (12
// bytes a value). The hidden stages after every convolution are the
// model's walk's.
func (c Config) JKCost() LayerCost {
	if !c.jumping() {
		return LayerCost{}
	}
	h, w, l := c.Hidden, c.jkWidth(), c.Layers
	var lc LayerCost
	switch c.JK {
	case "cat":
		lc.Forward = append(lc.Forward, elem(8, w))
	case "max":
		lc.Forward = append(lc.Forward, elem(float64(4*l+6), h))
	}
	lc.Forward = append(lc.Forward, gemm("nn", w, c.Out), elem(8, c.Out))
	lc.Backward = append(lc.Backward, colSums(c.Out), gemm("tn", w, c.Out), gemm("nt", c.Out, w))
	share := map[string]float64{"cat": 8, "max": 10, "last": 4}[c.JK]
	for i := range l {
		if c.JK == "last" && i == l-1 {
			share = 8
		}
		lc.Backward = append(lc.Backward, elem(share, h))
	}
	if l > 1 {
		lc.Backward = append(lc.Backward, elem(float64(12*(l-1)), h))
	}
	return lc
}

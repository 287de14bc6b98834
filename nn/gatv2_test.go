package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/supergcn/supergcn/dense"
)

// TestGATv2LayerGradients checks every parameter's and the input's
// gradient against finite differences: concatenated and averaged heads,
// with and without attention dropout and shared weights. The step is
// small (2e-3): every score has Heads·Width LeakyReLU kinks, which a
// larger step crosses.
func TestGATv2LayerGradients(t *testing.T) {
	for _, c := range []struct {
		heads, out     int
		concat, shared bool
		drop           float64
	}{{3, 6, true, false, 0}, {2, 4, true, true, 0.4}, {3, 2, false, false, 0}, {2, 3, false, true, 0.3}, {1, 5, false, false, 0.2}} {
		r := rand.New(rand.NewPCG(21, 22))
		prop := testAttention(t)
		l := NewGATv2Layer("conv", 4, c.out, c.heads, c.concat, c.shared, c.drop, r)
		for _, b := range []*Param{l.B, l.BS, l.BT} {
			if b != nil {
				for i := range b.W {
					b.W[i] = 0.1 * float32(i+1)
				}
			}
		}
		n := prop.Rows()
		x := randMat(r, n, 4)
		w := randF64(r, n*c.out)
		p := Pass{Train: true, Epoch: 3}
		loss := func() float64 {
			y, err := l.Forward(p, prop, x)
			if err != nil {
				t.Fatal(err)
			}
			return dot(w, y)
		}
		loss()
		gx, err := l.Backward(p, prop, f32(w, n, c.out), true)
		if err != nil {
			t.Fatal(err)
		}
		gxc := append([]float32(nil), gx.Data...)
		if got := len(l.Params()); got != map[bool]int{false: 6, true: 4}[c.shared] {
			t.Fatalf("shared %v: %d parameters", c.shared, got)
		}
		for _, prm := range l.Params() {
			checkFD(t, prm.Name, prm.W, append([]float32(nil), prm.G...), loss, 2e-3, 5e-3)
		}
		checkFD(t, "input", x.Data, gxc, loss, 2e-3, 5e-3)
	}
}

// TestGATv2ModelGradients checks a two-layer GATv2 model against finite
// differences, and its parameter count and names against the Config's.
func TestGATv2ModelGradients(t *testing.T) {
	for _, shared := range []float64{0, 1} {
		prop := testAttention(t)
		cfg := Config{Model: "gatv2", Layers: 2, In: 5, Hidden: 6, Out: 3, Heads: 3, OutHeads: 2, Seed: 4, Norm: "layer",
			Hyper: map[string]float64{"share-weights": shared}}
		m, err := NewModel(cfg, prop)
		if err != nil {
			t.Fatal(err)
		}
		if int64(m.NumParams()) != cfg.NumParams() {
			t.Fatalf("model has %d parameters, Config.NumParams %d", m.NumParams(), cfg.NumParams())
		}
		shapes, err := cfg.ParamShapes()
		if err != nil {
			t.Fatal(err)
		}
		for i, prm := range m.Params() {
			if shapes[i].Name != prm.Name {
				t.Fatalf("parameter %d: %s, ParamShapes %s", i, prm.Name, shapes[i].Name)
			}
		}
		r := rand.New(rand.NewPCG(8, 9))
		x := randMat(r, prop.Rows(), 5)
		w := randF64(r, prop.Rows()*3)
		p := Pass{Train: true}
		loss := func() float64 {
			y, err := m.Forward(p, x)
			if err != nil {
				t.Fatal(err)
			}
			return dot(w, y)
		}
		loss()
		if _, err := m.Backward(p, f32(w, prop.Rows(), 3), false); err != nil {
			t.Fatal(err)
		}
		grads := map[string][]float32{}
		for _, prm := range m.Params() {
			grads[prm.Name] = append([]float32(nil), prm.G...)
		}
		for _, prm := range m.Params() {
			checkFD(t, prm.Name, prm.W, grads[prm.Name], loss, 2e-3, 1e-2)
		}
	}
}

// TestGATv2Errors: a GAT operator without AttentionV2 is refused, and so
// are a fractional share-weights and heads that do not divide the width.
func TestGATv2Errors(t *testing.T) {
	l := NewGATv2Layer("c", 2, 2, 1, true, false, 0, rand.New(rand.NewPCG(1, 2)))
	if _, err := l.Forward(Pass{}, &denseProp{a: dense.New(3, 3)}, dense.New(3, 2)); err == nil {
		t.Fatal("GATv2 ran on an operator without attention")
	}
	base := Config{Model: "gatv2", Layers: 2, In: 5, Hidden: 8, Out: 3, Heads: 4}
	if err := base.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.Hyper = map[string]float64{"share-weights": 0.5} }, "share-weights"},
		{func(c *Config) { c.Hyper = map[string]float64{"share-weights": 2} }, "share-weights"},
		{func(c *Config) { c.Heads = 3 }, "nn.Config.Heads"},
		{func(c *Config) { c.JK = "cat" }, "nn.Config.JK"},
	} {
		cfg := base
		c.mod(&cfg)
		if err := cfg.Validate(); err == nil || !contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one naming %s", cfg, err, c.want)
		}
	}
}

// TestGATv2Reference compares a layer's output with GATv2's definition
// computed naively in float64 on testAttention's graph.
func TestGATv2Reference(t *testing.T) {
	in := [][]int32{{0, 1, 2}, {1, 0, 3, 4}, {2, 0}, {3}, {4, 1, 2, 3}, {5, 4, 0}}
	r := rand.New(rand.NewPCG(3, 4))
	prop := testAttention(t)
	const heads, width = 2, 3
	l := NewGATv2Layer("c", 4, heads*width, heads, true, false, 0, r)
	for _, b := range []*Param{l.BS, l.BT} {
		for i := range b.W {
			b.W[i] = float32(r.Float64() - 0.5)
		}
	}
	x := randMat(r, prop.Rows(), 4)
	y, err := l.Forward(Pass{}, prop, x)
	if err != nil {
		t.Fatal(err)
	}
	proj := func(w, b *Param, v, c int) float64 {
		s := float64(b.W[c])
		for i := range 4 {
			s += float64(x.Data[v*4+i]) * float64(w.W[i*w.Cols+c])
		}
		return s
	}
	for v, srcs := range in {
		for h := range heads {
			e := make([]float64, len(srcs))
			for k, u := range srcs {
				for j := range width {
					c := h*width + j
					a := proj(l.WS, l.BS, int(u), c) + proj(l.WT, l.BT, v, c)
					if a < 0 {
						a *= GATSlope
					}
					e[k] += float64(l.Att.W[c]) * a
				}
			}
			m := math.Inf(-1)
			for _, s := range e {
				m = math.Max(m, s)
			}
			var sum float64
			for k := range e {
				e[k] = math.Exp(e[k] - m)
				sum += e[k]
			}
			for j := range width {
				c := h*width + j
				want := float64(l.B.W[c])
				for k, u := range srcs {
					want += e[k] / sum * proj(l.WS, l.BS, int(u), c)
				}
				if got := float64(y.Data[v*heads*width+c]); math.Abs(got-want) > 1e-5 {
					t.Fatalf("out[%d,%d] = %g, want %g", v, c, got, want)
				}
			}
		}
	}
}

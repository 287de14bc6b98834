package nn

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/dense"
)

// TestResidualGradients: residual connections over GCN, SAGE and GIN
// layers, 1 to 3 layers, without normalisation, with layer and batch
// normalisation and with jumping knowledge, against finite differences;
// an input as wide as the hidden layers (identity skips only) and a
// narrower one (the first layer's projection). With dropout for GCN. The
// step is 1e-4: a skip adds its input to the activation, and at 1e-3 the
// differences of a few units straddle a ReLU's kink on these 7 nodes.
func TestResidualGradients(t *testing.T) {
	for _, model := range []string{"gcn", "sage", "gin"} {
		drop := 0.0
		if model == "gcn" {
			drop = 0.2
		}
		for _, c := range []struct {
			norm, jk string
			layers   int
		}{{"none", "none", 1}, {"none", "none", 2}, {"none", "none", 3}, {"layer", "none", 3}, {"batch", "none", 3},
			{"none", "cat", 2}, {"batch", "max", 3}} {
			for _, hidden := range []int{5, 6} { // 5: the input's width
				cfg := Config{Model: model, Layers: c.layers, In: 5, Hidden: hidden, Out: 3, Dropout: drop, Norm: c.norm, Seed: 3, JK: c.jk, Residual: true}
				a := skewed(gcnAdj(7, smallEdges))
				if model == "sage" {
					a = meanAdj(7, smallEdges)
				}
				t.Run(fmt.Sprintf("%s_%s_%s_%d_hidden%d", model, c.norm, c.jk, c.layers, hidden), func(t *testing.T) {
					checkConfigGradients(t, cfg, a, 1e-4, 5e-2) // the tolerance of TestJKGradients
				})
			}
		}
	}
}

// TestResidualForward: a 2-layer GCN with residual connections computes
// conv1(ReLU(conv0(x)) + x·P) where P is the projection res0.weight, and
// with the hidden width the input's, conv1(ReLU(conv0(x)) + x): the
// model's logits against the same layers of a model without the skip,
// given the hidden layer's output.
func TestResidualForward(t *testing.T) {
	for _, hidden := range []int{4, 5} { // 5: the input's width, an identity skip
		a := gcnAdj(7, smallEdges)
		x := randMat(rand.New(rand.NewPCG(5, 1)), 7, 5)
		cfg := Config{Model: "gcn", Layers: 2, In: 5, Hidden: hidden, Out: 3, Seed: 8, Residual: true}
		m, err := NewModel(cfg, &denseProp{a: a})
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Forward(Pass{}, x)
		if err != nil {
			t.Fatal(err)
		}
		ps := map[string]*Param{}
		for _, p := range m.Params() {
			ps[p.Name] = p
		}
		// GCN layer: Â·(h·W) + b, in float64.
		conv := func(h []float64, k int, w, b *Param) []float64 {
			hw := applyAdj(a, mul64(h, 7, k, w.values(), nil), w.Cols)
			for i := range hw {
				hw[i] += float64(b.W[i%w.Cols])
			}
			return hw
		}
		x64 := to64(x)
		h := conv(x64, 5, ps["conv0.lin.weight"], ps["conv0.bias"])
		skip := x64
		if p, ok := ps["res0.weight"]; ok {
			skip = mul64(x64, 7, 5, p.values(), nil)
		} else if hidden != 5 {
			t.Fatalf("hidden %d: no projection among %v", hidden, m.Params())
		}
		for i := range h {
			h[i] = max(h[i], 0) + skip[i]
		}
		want := conv(h, hidden, ps["conv1.lin.weight"], ps["conv1.bias"])
		for i, w := range want {
			if d := float64(got.Data[i]) - w; d > 1e-5 || d < -1e-5 {
				t.Fatalf("hidden %d: logit %d: %g, want %g", hidden, i, got.Data[i], w)
			}
		}
	}
}

// TestResidualConfig: shapes and counts derive from the plans (a
// projection where the widths differ, named res{i}.weight), the memory
// estimate counts the skip's buffer, and models without the pipeline are
// refused.
func TestResidualConfig(t *testing.T) {
	for _, c := range []struct {
		cfg   Config
		projs []string
	}{
		{Config{Model: "gcn", Layers: 3, In: 10, Hidden: 8, Out: 4, Norm: "batch", Residual: true}, []string{"res0.weight"}},
		{Config{Model: "sage", Layers: 3, In: 8, Hidden: 8, Out: 4, Residual: true}, nil},
		{Config{Model: "gin", Layers: 2, In: 10, Hidden: 8, Out: 4, JK: "cat", Residual: true}, []string{"res0.weight"}},
		{Config{Model: "appnp", Layers: 2, In: 10, Hidden: 8, Out: 4, Residual: true}, []string{"res0.weight"}},
	} {
		m, err := NewModel(c.cfg, &denseProp{a: dense.New(3, 3)})
		if err != nil {
			t.Fatal(err)
		}
		shapes, err := c.cfg.ParamShapes()
		if err != nil || len(shapes) != len(m.Params()) || int64(m.NumParams()) != c.cfg.NumParams() {
			t.Fatalf("%+v: %d shapes (%v), %d params; NumParams %d vs %d", c.cfg, len(shapes), err, len(m.Params()), m.NumParams(), c.cfg.NumParams())
		}
		var projs []string
		for i, p := range m.Params() {
			if s := shapes[i]; s.Name != p.Name || s.Rows != p.Rows || s.Cols != p.Cols {
				t.Fatalf("%+v: param %d: shape %+v, model %s %d×%d", c.cfg, i, s, p.Name, p.Rows, p.Cols)
			}
			if strings.HasPrefix(p.Name, "res") {
				projs = append(projs, p.Name)
				if p.Rows != c.cfg.In || p.Cols != c.cfg.Hidden {
					t.Fatalf("%s is %d×%d", p.Name, p.Rows, p.Cols)
				}
			}
		}
		if fmt.Sprint(projs) != fmt.Sprint(c.projs) {
			t.Fatalf("%+v: projections %v, want %v", c.cfg, projs, c.projs)
		}
		plain := c.cfg
		plain.Residual = false
		if d := c.cfg.Memory().Row - plain.Memory().Row; d <= 0 {
			t.Fatalf("%+v: memory per row %d with the skips, %d without", c.cfg, c.cfg.Memory().Row, plain.Memory().Row)
		}
	}
	for _, cfg := range []Config{
		{Model: "gat", Layers: 2, In: 4, Hidden: 4, Out: 2, Residual: true},
		{Model: "gcnii", Layers: 2, In: 4, Hidden: 4, Out: 2, Residual: true},
	} {
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "nn.Config.Residual") {
			t.Errorf("%+v: %v, want a refusal naming nn.Config.Residual", cfg, err)
		}
	}
}

package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/dense"
)

// TestGCNIIGradients: the whole GCNII body (input layer, 1 to 4
// convolutions, output layer; dropout on) against finite differences, for
// every parameter and the input, with its hyperparameters at their
// defaults and moved.
func TestGCNIIGradients(t *testing.T) {
	for _, h := range []map[string]float64{nil, {"theta": 1.5, "alpha": 0.3}} {
		for _, layers := range []int{1, 2, 4} {
			cfg := Config{Model: "gcnii", Layers: layers, In: 5, Hidden: 6, Out: 3, Dropout: 0.2, Seed: 3, Hyper: h}
			t.Run(fmt.Sprintf("%v_%d", h, layers), func(t *testing.T) {
				checkConfigGradients(t, cfg, skewed(gcnAdj(7, smallEdges)), 1e-3, 1e-2)
			})
		}
	}
}

// TestGCNIIForward: one process's GCNII equals the formula evaluated in
// float64 (evaluation pass: no dropout), layer by layer.
func TestGCNIIForward(t *testing.T) {
	const n, in, hid, out, layers = 7, 5, 4, 3, 3
	a := gcnAdj(n, smallEdges)
	cfg := Config{Model: "gcnii", Layers: layers, In: in, Hidden: hid, Out: out, Dropout: 0.5, Seed: 9, Hyper: map[string]float64{"theta": 0.7, "alpha": 0.2}}
	m, err := NewModel(cfg, &denseProp{a: a})
	if err != nil {
		t.Fatal(err)
	}
	x := randMat(rand.New(rand.NewPCG(1, 2)), n, in)
	got, err := m.Forward(Pass{}, x)
	if err != nil {
		t.Fatal(err)
	}
	ps := m.Params()
	relu := func(v []float64) []float64 {
		for i := range v {
			v[i] = math.Max(v[i], 0)
		}
		return v
	}
	h0 := relu(mul64(to64(x), n, in, ps[0].values(), ps[1].W))
	h := h0
	for l := range layers {
		w := ps[2+l]
		beta := math.Log(0.7/float64(l+1) + 1)
		s := applyAdj(a, h, hid)
		for i := range s {
			s[i] = 0.8*s[i] + 0.2*h0[i]
		}
		sw := mul64(s, n, hid, w.values(), nil)
		for i := range sw {
			sw[i] = (1-beta)*s[i] + beta*sw[i]
		}
		h = relu(sw)
	}
	want := mul64(h, n, hid, ps[2+layers].values(), ps[3+layers].W)
	for i, v := range want {
		if math.Abs(float64(got.Data[i])-v) > 1e-5 {
			t.Fatalf("logit %d: %g, want %g", i, got.Data[i], v)
		}
	}
}

// TestGCNIIConfig: parameters, shapes and costs derive from the plan; the
// hyperparameters are checked against their declared range and refused by
// models that do not declare them; LayerNorm is refused.
func TestGCNIIConfig(t *testing.T) {
	cfg := Config{Model: "gcnii", Layers: 64, In: 1433, Hidden: 64, Out: 7}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	m, err := NewModel(cfg, &denseProp{a: dense.New(3, 3)})
	if err != nil {
		t.Fatal(err)
	}
	want := int64(1433*64 + 64 + 64*64*64 + 64*7 + 7)
	if int64(m.NumParams()) != want || cfg.NumParams() != want {
		t.Fatalf("NumParams %d / %d, want %d", m.NumParams(), cfg.NumParams(), want)
	}
	shapes, err := cfg.ParamShapes()
	if err != nil || len(shapes) != len(m.Params()) {
		t.Fatalf("ParamShapes: %d, %v; model has %d", len(shapes), err, len(m.Params()))
	}
	for i, p := range m.Params() {
		if s := shapes[i]; s.Name != p.Name || s.Rows != p.Rows || s.Cols != p.Cols {
			t.Fatalf("param %d: shape %+v, model %s %d×%d", i, s, p.Name, p.Rows, p.Cols)
		}
	}
	if v, err := cfg.HyperValue("theta"); v != 0.5 || err != nil {
		t.Fatalf("theta default: %g, %v", v, err)
	}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Model: "gcnii", Layers: 2, In: 4, Hidden: 4, Out: 2, Hyper: map[string]float64{"theta": -1}}, "nn.Config.Hyper[theta]: -1 is not in [0, 1000]"},
		{Config{Model: "gcnii", Layers: 2, In: 4, Hidden: 4, Out: 2, Hyper: map[string]float64{"lambda": 1}}, "nn.Config.Hyper[lambda]: 1, but gcnii takes no lambda"},
		{Config{Model: "gcn", Layers: 2, In: 4, Hidden: 4, Out: 2, Hyper: map[string]float64{"theta": 1}}, "nn.Config.Hyper[theta]: 1, but gcn takes no theta (gcnii do)"},
		{Config{Model: "gcnii", Layers: 2, In: 4, Hidden: 4, Out: 2, Norm: "layer"}, "nn.Config.Norm"},
	} {
		if err := c.cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
	// Decay: every parameter, the convolutions at conv-decay.
	for _, p := range m.Params() {
		conv := strings.HasSuffix(p.Name, ".weight") && !strings.Contains(p.Name, "lin_")
		if !p.Decay || (conv != (p.DecayRate == 0.01)) {
			t.Fatalf("%s: decay %v rate %g", p.Name, p.Decay, p.DecayRate)
		}
	}
}

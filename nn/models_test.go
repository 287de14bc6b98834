package nn

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/dense"
)

// buildTestLayer builds layer index of layers of model name with widths
// in → out (inner width hidden) and the given hyperparameters, drawn from
// seed.
func buildTestLayer(t *testing.T, name string, s LayerShape, seed uint64) Conv {
	t.Helper()
	m, ok := lookupModel(name)
	if !ok {
		t.Fatalf("no model %s", name)
	}
	s.Name, s.Op = "conv0", m.op
	c, err := buildLayer(m, s, rand.New(rand.NewPCG(seed, seed)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// widthLayer is a Conv with its widths, for checkConvGradients.
type widthLayer struct {
	Conv
	in, out int
}

func (w widthLayer) width() (int, int) { return w.in, w.out }

// matPow returns a^k (float64 products, rounded to float32 once).
func matPow(a *dense.Matrix, k int) *dense.Matrix {
	n := a.Rows
	cur := make([]float64, n*n)
	for i := range n {
		cur[i*n+i] = 1
	}
	for range k {
		next := make([]float64, n*n)
		for i := range n {
			for j := range n {
				for l := range n {
					next[i*n+j] += float64(a.Data[i*n+l]) * cur[l*n+j]
				}
			}
		}
		cur = next
	}
	m := dense.New(n, n)
	for i, v := range cur {
		m.Data[i] = float32(v)
	}
	return m
}

// mul64 returns x·w (+ b per row) in float64; x is rows×k as float64.
func mul64(x []float64, rows, k int, w *dense.Matrix, b []float32) []float64 {
	out := make([]float64, rows*w.Cols)
	for i := range rows {
		for j := range w.Cols {
			s := 0.0
			if b != nil {
				s = float64(b[j])
			}
			for l := range k {
				s += x[i*k+l] * float64(w.Data[l*w.Cols+j])
			}
			out[i*w.Cols+j] = s
		}
	}
	return out
}

func to64(m *dense.Matrix) []float64 {
	out := make([]float64, len(m.Data))
	for i, v := range m.Data {
		out[i] = float64(v)
	}
	return out
}

// applyAdj returns a·x in float64 (x n×k).
func applyAdj(a *dense.Matrix, x []float64, k int) []float64 {
	n := a.Rows
	out := make([]float64, n*k)
	for i := range n {
		for l := range n {
			if v := float64(a.Data[i*n+l]); v != 0 {
				for j := range k {
					out[i*k+j] += v * x[l*k+j]
				}
			}
		}
	}
	return out
}

func TestSGCLayerGradients(t *testing.T) {
	for _, c := range []struct{ in, out, k int }{{5, 3, 2}, {3, 5, 2}, {4, 4, 3}, {5, 3, 1}} {
		t.Run(fmt.Sprintf("%dto%d_K%d", c.in, c.out, c.k), func(t *testing.T) {
			prop := &denseProp{a: skewed(gcnAdj(7, smallEdges))}
			l := buildTestLayer(t, "sgc", LayerShape{Layers: 1, In: c.in, Out: c.out, Hyper: map[string]float64{"k": float64(c.k)}}, 1).(*GCNLayer)
			checkConvGradients(t, widthLayer{l, c.in, c.out}, prop, func(x *dense.Matrix) []float64 {
				return naiveLayer(matPow(prop.a, c.k), x, l.W.values(), nil, l.B.W)
			})
			if prop.fwdN == 0 || prop.fwdN%c.k != 0 {
				t.Fatalf("%d propagator forwards, not a multiple of K = %d", prop.fwdN, c.k)
			}
		})
	}
}

func TestAPPNPLayerGradients(t *testing.T) {
	for _, c := range []struct {
		in, out, k int
		last       bool
	}{{5, 3, 3, true}, {3, 5, 2, true}, {4, 4, 1, true}, {5, 3, 10, false}} {
		t.Run(fmt.Sprintf("%dto%d_K%d_last%v", c.in, c.out, c.k, c.last), func(t *testing.T) {
			prop := &denseProp{a: skewed(gcnAdj(7, smallEdges))}
			s := LayerShape{Layers: 2, In: c.in, Out: c.out, Hyper: map[string]float64{"k": float64(c.k), "alpha": 0.15}}
			if c.last {
				s.Index = 1
			}
			l := buildTestLayer(t, "appnp", s, 2).(*APPNPLayer)
			checkConvGradients(t, widthLayer{l, c.in, c.out}, prop, func(x *dense.Matrix) []float64 {
				h := mul64(to64(x), x.Rows, c.in, l.W.values(), l.B.W)
				if !c.last {
					return h
				}
				z := h
				for range c.k {
					az := applyAdj(prop.a, z, c.out)
					for i := range az {
						az[i] = 0.85*az[i] + 0.15*h[i]
					}
					z = az
				}
				return z
			})
			if want := map[bool]int{true: 1, false: 0}[c.last] * c.k; c.last && prop.fwdN%want != 0 || !c.last && prop.fwdN != 0 {
				t.Fatalf("%d propagator forwards with K = %d, last layer %v", prop.fwdN, c.k, c.last)
			}
		})
	}
}

func TestGINLayerGradients(t *testing.T) {
	for _, c := range []struct {
		in, hidden, out int
		eps             bool
	}{{6, 4, 3, false}, {6, 4, 3, true}, {3, 5, 4, false}, {3, 5, 4, true}} {
		t.Run(fmt.Sprintf("%d_%d_%d_eps%v", c.in, c.hidden, c.out, c.eps), func(t *testing.T) {
			prop := &denseProp{a: sumAdj(7, smallEdges)}
			l := buildTestLayer(t, "gin", LayerShape{Layers: 1, In: c.in, Hidden: c.hidden, Out: c.out, Hyper: map[string]float64{"train-eps": map[bool]float64{true: 1}[c.eps]}}, 3).(*GINLayer)
			if (l.Eps != nil) != c.eps {
				t.Fatalf("ε parameter %v, train-eps %v", l.Eps != nil, c.eps)
			}
			// Biases so that every hidden unit is active on some rows and
			// inactive on others, away from the ReLU's kink.
			checkConvGradients(t, widthLayer{l, c.in, c.out}, prop, func(x *dense.Matrix) []float64 {
				self := 1.0
				if l.Eps != nil {
					self += float64(l.Eps.W[0])
				}
				xs := to64(x)
				u := applyAdj(prop.a, xs, c.in)
				for i := range u {
					u[i] += self * xs[i]
				}
				z := mul64(u, x.Rows, c.in, l.W1.values(), l.B1.W)
				for i := range z {
					z[i] = max(z[i], 0)
				}
				return mul64(z, x.Rows, c.hidden, l.W2.values(), l.B2.W)
			})
		})
	}
}

// sumAdj returns the plain adjacency A (no self-loops) of the undirected
// edge list on n nodes.
func sumAdj(n int, edges [][2]int) *dense.Matrix {
	a := dense.New(n, n)
	for _, e := range edges {
		a.Data[e[0]*n+e[1]] = 1
		a.Data[e[1]*n+e[0]] = 1
	}
	return a
}

// TestNewModelsGradients: whole models of every new kind against finite
// differences, with and without LayerNorm, 1 to 3 layers (the propagation
// steps shrink the input gradients to where float32 noise needs a larger
// step and tolerance than GCN's; the layer tests check each layer tightly).
func TestNewModelsGradients(t *testing.T) {
	for _, c := range []struct {
		model string
		edit  func(*Config)
	}{
		{"gin", func(c *Config) {}},
		{"gin", func(c *Config) { c.Hyper = map[string]float64{"train-eps": 1} }},
		{"sgc", func(c *Config) {}},
		{"sgc", func(c *Config) { c.Hyper = map[string]float64{"k": 3} }},
		{"appnp", func(c *Config) {}},
		{"appnp", func(c *Config) { c.Hyper = map[string]float64{"k": 4, "alpha": 0.3} }},
	} {
		for _, norm := range []string{"none", "layer"} {
			for _, layers := range []int{1, 2, 3} {
				cfg := Config{Model: c.model, Layers: layers, In: 5, Hidden: 6, Out: 3, Dropout: 0.2, Norm: norm, Seed: 3}
				c.edit(&cfg)
				t.Run(fmt.Sprintf("%s_K%d_eps%v_%s_%d", c.model, cfg.Steps(), cfg.TrainEps(), norm, layers), func(t *testing.T) {
					checkConfigGradients(t, cfg, skewed(gcnAdj(7, smallEdges)), 1e-3, 5e-2)
				})
			}
		}
	}
}

// TestNewModelsEvalCache: GIN and SGC reuse the evaluation aggregate as
// GCN does, bit-identically.
func TestNewModelsEvalCache(t *testing.T) {
	for _, c := range []Config{
		{Model: "gin", Layers: 2, In: 5, Hidden: 16, Out: 3, Dropout: 0.3, Seed: 5},
		{Model: "gin", Layers: 2, In: 20, Hidden: 8, Out: 3, Dropout: 0.3, Seed: 5, Hyper: map[string]float64{"train-eps": 1}},
		{Model: "gin", Layers: 2, In: 5, Hidden: 16, Out: 3, Dropout: 0.3, Seed: 5, Hyper: map[string]float64{"train-eps": 1}},
		{Model: "sgc", Layers: 1, In: 2, Out: 3, Seed: 5, Hyper: map[string]float64{"k": 2}},
		{Model: "sgc", Layers: 1, In: 5, Out: 3, Seed: 5, Hyper: map[string]float64{"k": 3}},
		{Model: "appnp", Layers: 2, In: 5, Hidden: 4, Out: 3, Dropout: 0.3, Seed: 5, Hyper: map[string]float64{"k": 3}},
	} {
		t.Run(fmt.Sprintf("%s_%d_%d_eps%v", c.Model, c.In, c.Hidden, c.TrainEps()), func(t *testing.T) {
			if c.Model == "appnp" { // never aggregates its input: the propagation counts of checkEvalCache do not apply
				m, err := NewModel(c, &denseProp{a: gcnAdj(7, smallEdges)})
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := m.convs[0].(inputAggregator); ok {
					t.Fatal("an APPNP layer claims to aggregate its input")
				}
				return
			}
			checkEvalCache(t, c)
		})
	}
}

// TestModelHyperparameters: k, alpha and train-eps are refused, naming the
// hyperparameter, by models that do not take them, and out of range.
func TestModelHyperparameters(t *testing.T) {
	base := Config{Layers: 2, In: 4, Hidden: 8, Out: 3}
	for _, c := range []struct {
		model, field string
		edit         func(*Config)
	}{
		{"gcn", "k", func(c *Config) { c.Hyper = map[string]float64{"k": 2} }},
		{"sage", "alpha", func(c *Config) { c.Hyper = map[string]float64{"alpha": 0.1} }},
		{"sgc", "alpha", func(c *Config) { c.Hyper = map[string]float64{"alpha": 0.1} }},
		{"sgc", "train-eps", func(c *Config) { c.Hyper = map[string]float64{"train-eps": 1} }},
		{"gin", "k", func(c *Config) { c.Hyper = map[string]float64{"k": 1} }},
		{"gin", "train-eps", func(c *Config) { c.Hyper = map[string]float64{"train-eps": 0.5} }},
		{"appnp", "k", func(c *Config) { c.Hyper = map[string]float64{"k": 0} }},
		{"appnp", "k", func(c *Config) { c.Hyper = map[string]float64{"k": 2.5} }},
		{"appnp", "k", func(c *Config) { c.Hyper = map[string]float64{"k": MaxSteps + 1} }},
		{"appnp", "alpha", func(c *Config) { c.Hyper = map[string]float64{"alpha": 1.5} }},
		{"appnp", "alpha", func(c *Config) { c.Hyper = map[string]float64{"alpha": 0} }},
	} {
		cfg := base
		cfg.Model = c.model
		c.edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.HasPrefix(err.Error(), HyperField(c.field)+": ") {
			t.Errorf("%s %+v: %v, want an error naming %s", c.model, cfg, err, c.field)
		}
	}
	for _, c := range []Config{
		{Model: "appnp", Hyper: map[string]float64{"k": 1, "alpha": 1}}, {Model: "sgc", Hyper: map[string]float64{"k": 5}}, {Model: "gin", Hyper: map[string]float64{"train-eps": 1}}, {Model: "appnp"},
	} {
		c.Layers, c.In, c.Hidden, c.Out = 2, 4, 8, 3
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

// TestNewModelsDecay: the default decay rule decays the first layer's
// weight matrices only (GIN: both of its MLP's; never ε or a bias).
func TestNewModelsDecay(t *testing.T) {
	want := map[string][]string{
		"gin":   {"conv0.nn.0.weight", "conv0.nn.2.weight"},
		"sgc":   {"conv0.lin.weight"},
		"appnp": {"conv0.lin.weight"},
	}
	for model, names := range want {
		cfg := Config{Model: model, Layers: 2, In: 4, Hidden: 8, Out: 3}
		if model == "gin" {
			cfg.Hyper = map[string]float64{"train-eps": 1}
		}
		m, err := NewModel(cfg, &denseProp{a: dense.New(7, 7)})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range m.Params() {
			if p.Decay {
				got = append(got, p.Name)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(names) {
			t.Errorf("%s: decayed %v, want %v", model, got, names)
		}
		if int64(m.NumParams()) != cfg.NumParams() {
			t.Errorf("%s: %d parameters, Config.NumParams %d", model, m.NumParams(), cfg.NumParams())
		}
	}
}

// TestNewModelOperatorChecked: an operator that is not a Propagator is
// refused by NewModel with an error naming the model, not a panic.
func TestNewModelOperatorChecked(t *testing.T) {
	for _, model := range Models() {
		cfg := Config{Model: model, Layers: 1, In: 4, Out: 3}
		if _, err := NewModel(cfg, rowsOnly(7)); err == nil || !strings.Contains(err.Error(), model) {
			t.Errorf("%s: %v", model, err)
		}
	}
}

type rowsOnly int

func (r rowsOnly) Rows() int { return int(r) }

// TestLayerCosts: every layer's cost schedule has as many aggregations as
// its layer calls the propagator in a training step, in the cheaper order.
func TestLayerCosts(t *testing.T) {
	for _, cfg := range []Config{
		{Model: "gcn", Layers: 2, In: 9, Hidden: 4, Out: 3}, {Model: "sage", Layers: 2, In: 3, Hidden: 5, Out: 3},
		{Model: "gin", Layers: 2, In: 9, Hidden: 4, Out: 3}, {Model: "gin", Layers: 3, In: 3, Hidden: 5, Out: 2, Hyper: map[string]float64{"train-eps": 1}},
		{Model: "sgc", Layers: 1, In: 9, Out: 3, Hyper: map[string]float64{"k": 3}}, {Model: "sgc", Layers: 1, In: 2, Out: 3},
		{Model: "appnp", Layers: 2, In: 9, Hidden: 4, Out: 3, Hyper: map[string]float64{"k": 4}},
	} {
		prop := &denseProp{a: gcnAdj(7, smallEdges)}
		m, err := NewModel(cfg, prop)
		if err != nil {
			t.Fatal(err)
		}
		x := randMat(rand.New(rand.NewPCG(1, 2)), 7, cfg.In)
		logits, err := m.Forward(Pass{Train: true}, x)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Backward(Pass{Train: true}, logits, false); err != nil {
			t.Fatal(err)
		}
		costs, err := cfg.LayerCosts()
		if err != nil {
			t.Fatal(err)
		}
		var fwd, bwd int
		for i, c := range costs {
			for _, s := range c.Forward {
				fwd += b2i(s.Kind == StepAggregate)
			}
			for _, s := range c.Backward {
				bwd += b2i(s.Kind == StepAggregate && !(i == 0 && s.InputGrad))
			}
		}
		if fwd != prop.fwdN || bwd != prop.bwdN {
			t.Errorf("%+v: schedule has %d forward and %d backward aggregations, the model ran %d and %d",
				cfg, fwd, bwd, prop.fwdN, prop.bwdN)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

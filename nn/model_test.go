package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/dense"
)

func TestConfigValidate(t *testing.T) {
	good := Config{Model: "gcn", Layers: 2, In: 4, Hidden: 8, Out: 3, Dropout: 0.5, Norm: "none", Seed: 1}
	if err := good.Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	bad := []struct {
		field string
		edit  func(c *Config)
	}{
		{"Model", func(c *Config) { c.Model = "gin2" }},
		{"Layers", func(c *Config) { c.Layers = 0 }},
		{"In", func(c *Config) { c.In = 0 }},
		{"Hidden", func(c *Config) { c.Hidden = 0 }},
		{"Out", func(c *Config) { c.Out = -1 }},
		{"Dropout", func(c *Config) { c.Dropout = 1 }},
		{"Dropout", func(c *Config) { c.Dropout = -0.1 }},
		{"Norm", func(c *Config) { c.Norm = "group" }},
	}
	for _, b := range bad {
		c := good
		b.edit(&c)
		err := c.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), "nn.Config."+b.field+": ") {
			t.Errorf("%s: error %v does not name the field", b.field, err)
		}
		if _, err := NewModel(c, &denseProp{a: dense.New(1, 1)}); err == nil {
			t.Errorf("%s: NewModel accepted an invalid config", b.field)
		}
	}
	one := good
	one.Layers, one.Hidden = 1, 0
	if err := one.Validate(); err != nil {
		t.Fatalf("one layer without hidden width: %v", err)
	}
	if _, err := NewModel(good, nil); err == nil {
		t.Fatal("NewModel accepted a nil propagator")
	}
}

func TestModelInitDeterministic(t *testing.T) {
	prop := &denseProp{a: gcnAdj(7, smallEdges)}
	cfg := Config{Model: "sage", Layers: 3, In: 5, Hidden: 4, Out: 3, Norm: "layer", Seed: 77}
	a, _ := NewModel(cfg, prop)
	b, _ := NewModel(cfg, prop)
	cfg.Seed = 78
	c, _ := NewModel(cfg, prop)
	names := []string{}
	for i, p := range a.Params() {
		names = append(names, p.Name)
		if !slices.Equal(p.W, b.Params()[i].W) {
			t.Fatalf("%s differs between models with the same seed", p.Name)
		}
	}
	if slices.Equal(a.Params()[0].W, c.Params()[0].W) {
		t.Fatal("different seeds gave the same weights")
	}
	want := "conv0.lin_l.weight conv0.lin_l.bias conv0.lin_r.weight norm0.weight norm0.bias " +
		"conv1.lin_l.weight conv1.lin_l.bias conv1.lin_r.weight norm1.weight norm1.bias " +
		"conv2.lin_l.weight conv2.lin_l.bias conv2.lin_r.weight"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("param names:\n%s\nwant\n%s", got, want)
	}
}

func TestModelDecayFlags(t *testing.T) {
	prop := &denseProp{a: gcnAdj(7, smallEdges)}
	m, err := NewModel(Config{Model: "gcn", Layers: 2, In: 5, Hidden: 4, Out: 3, Seed: 1}, prop)
	if err != nil {
		t.Fatal(err)
	}
	decayed := func() []string {
		var s []string
		for _, p := range m.Params() {
			if p.Decay {
				s = append(s, p.Name)
			}
		}
		return s
	}
	if got := decayed(); !slices.Equal(got, []string{"conv0.lin.weight"}) {
		t.Fatalf("default decay on %v", got)
	}
	m.SetDecayAll(true)
	if got := decayed(); len(got) != len(m.Params()) {
		t.Fatalf("SetDecayAll(true): decay on %v", got)
	}
	m.SetDecayAll(false)
	if got := decayed(); len(got) != 1 {
		t.Fatalf("SetDecayAll(false): decay on %v", got)
	}
}

// TestModelGradients checks every parameter gradient and the input gradient
// of the whole model (training mode, dropout on, masks pinned by resetting
// the dropout seed before each forward) against finite differences of the
// mean cross-entropy.
func TestModelGradients(t *testing.T) {
	for _, model := range []string{"gcn", "sage"} {
		for _, norm := range []string{"none", "layer"} {
			for _, layers := range []int{2, 3} {
				name := fmt.Sprintf("%s_%s_%d", model, norm, layers)
				t.Run(name, func(t *testing.T) { checkModelGradients(t, model, norm, layers) })
			}
		}
	}
}

func checkModelGradients(t *testing.T, model, norm string, layers int) {
	a := skewed(gcnAdj(7, smallEdges))
	if model == "sage" {
		a = meanAdj(7, smallEdges)
	}
	checkConfigGradients(t, Config{Model: model, Layers: layers, In: 5, Hidden: 6, Out: 3, Dropout: 0.2, Norm: norm, Seed: 3}, a, 3e-4, 1e-2)
}

// checkConfigGradients checks the model of cfg (In 5, Out 3, 7 nodes) on
// the operator a against finite differences of step h, within tol.
func checkConfigGradients(t *testing.T, cfg Config, a *dense.Matrix, h, tol float64) {
	checkOpGradients(t, cfg, &denseProp{a: a}, h, tol)
}

// checkOpGradients is checkConfigGradients on the graph operator op (7
// rows).
func checkOpGradients(t *testing.T, cfg Config, op Operator, h, tol float64) {
	r := rand.New(rand.NewPCG(21, uint64(cfg.Layers)))
	m, err := NewModel(cfg, op)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Params() { // non-trivial biases and norm parameters
		if p.Rows == 1 {
			for i := range p.W {
				p.W[i] += 0.3 * (2*r.Float32() - 1)
			}
		}
	}
	x := randMat(r, 7, 5)
	labels := []int32{0, 1, 2, 1, -1, 0, 2}
	rows := []int32{0, 1, 2, 3, 4, 5, 6}
	pass := Pass{Train: true}
	forward := func() *dense.Matrix {
		m.SetDropoutSeed(99)
		logits, err := m.Forward(pass, x)
		if err != nil {
			t.Fatal(err)
		}
		return logits
	}
	loss := func() float64 {
		l, _ := SoftmaxCrossEntropy(forward(), labels, rows, 6)
		return l / 6
	}
	_, g := SoftmaxCrossEntropy(forward(), labels, rows, 6)
	gx, err := m.Backward(pass, g, true)
	if err != nil {
		t.Fatal(err)
	}
	gx = &dense.Matrix{Rows: gx.Rows, Cols: gx.Cols, Data: slices.Clone(gx.Data)}
	grads := map[string][]float32{}
	for _, p := range m.Params() {
		grads[p.Name] = slices.Clone(p.G)
	}
	// A small step keeps ReLU pre-activations from crossing zero (at 3e-3 one
	// does in gcn_layer_3); float32 rounding noise stays well below tol.
	for _, p := range m.Params() {
		if p.buffer || biasBeforeBatchNorm(cfg, p.Name) { // no gradient: checked to be zero
			for _, g := range grads[p.Name] {
				if math.Abs(float64(g)) > 1e-6 {
					t.Fatalf("%s: gradient %g, want 0", p.Name, g)
				}
			}
			continue
		}
		checkFD(t, p.Name, p.W, grads[p.Name], loss, h, tol)
	}
	checkFD(t, "input", x.Data, gx.Data, loss, h, tol)

	// wantInputGrad=false: nil, same parameter gradients.
	_, g = SoftmaxCrossEntropy(forward(), labels, rows, 6)
	if gx, err := m.Backward(pass, g, false); gx != nil || err != nil {
		t.Fatalf("Backward(false) = %v, %v", gx, err)
	}
	for _, p := range m.Params() {
		if !slices.Equal(p.G, grads[p.Name]) {
			t.Fatalf("%s: gradient changed without the input gradient", p.Name)
		}
	}
}

// biasBeforeBatchNorm reports whether parameter name is the output bias of
// a layer that batch normalisation follows, which the normalisation
// cancels.
func biasBeforeBatchNorm(cfg Config, name string) bool {
	var i int
	_, err := fmt.Sscanf(name, "conv%d.", &i)
	out := strings.HasSuffix(name, fmt.Sprintf("conv%d.bias", i)) || strings.HasSuffix(name, ".lin_l.bias") || strings.HasSuffix(name, ".nn.2.bias")
	return cfg.Norm == "batch" && err == nil && (i < cfg.Layers-1 || cfg.jumping()) && out
}

func TestModelDropoutModes(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 30))
	prop := &denseProp{a: gcnAdj(7, smallEdges)}
	m, err := NewModel(Config{Model: "gcn", Layers: 2, In: 5, Hidden: 16, Out: 3, Dropout: 0.5, Seed: 1}, prop)
	if err != nil {
		t.Fatal(err)
	}
	x := randMat(r, 7, 5)
	run := func(train bool) []float32 {
		out, err := m.Forward(Pass{Train: train}, x)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Clone(out.Data)
	}
	e1, e2 := run(false), run(false)
	if !slices.Equal(e1, e2) {
		t.Fatal("evaluation forward is not deterministic")
	}
	t1, t2 := run(true), run(true)
	if slices.Equal(t1, t2) || slices.Equal(t1, e1) {
		t.Fatal("training forwards did not draw fresh dropout masks")
	}
	m.SetDropoutSeed(1)
	s1 := run(true)
	m.SetDropoutSeed(1)
	if s2 := run(true); !slices.Equal(s1, s2) {
		t.Fatal("same dropout seed gave different training outputs")
	}
	m.SetDropoutSeed(2)
	if s3 := run(true); slices.Equal(s1, s3) {
		t.Fatal("different dropout seeds gave the same training output")
	}
	if !slices.Equal(run(false), e1) {
		t.Fatal("evaluation output changed after training forwards")
	}
}

func TestModelErrors(t *testing.T) {
	prop := &denseProp{a: gcnAdj(7, smallEdges)}
	m, err := NewModel(Config{Model: "gcn", Layers: 2, In: 5, Hidden: 4, Out: 3}, prop)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Backward(Pass{}, dense.New(7, 3), false); err == nil {
		t.Fatal("Backward before Forward: no error")
	}
	if _, err := m.Forward(Pass{}, dense.New(7, 4)); err == nil {
		t.Fatal("Forward with the wrong width: no error")
	}
	if _, err := m.Forward(Pass{}, dense.New(7, 5)); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Backward(Pass{}, dense.New(7, 2), false); err == nil {
		t.Fatal("Backward with the wrong gradient shape: no error")
	}
}

func TestAdamStep(t *testing.T) {
	newP := func(decay bool) *Param {
		return &Param{Name: "w", W: []float32{1}, G: []float32{0.5}, Decay: decay, Rows: 1, Cols: 1}
	}
	cfg := AdamConfig{LR: 0.1, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.1}
	l2, plain := newP(true), newP(false)
	opt, err := NewAdam([]*Param{l2, plain}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	opt.Step()
	// Step 1, L2: g = 0.5 + 0.1·1 = 0.6, m̂ = 0.6, v̂ = 0.36 → w = 1 - 0.1·0.6/(0.6+1e-8).
	// No decay: w = 1 - 0.1·0.5/(0.5+1e-8).
	if l2.W[0] != 0.9 || plain.W[0] != 0.9 {
		t.Fatalf("step 1: %g, %g; want 0.9, 0.9", l2.W[0], plain.W[0])
	}
	opt.Step()
	// Step 2, L2: g = 0.59, m = 0.113, v = 0.00070774, m̂ = 0.113/0.19,
	// v̂ = 0.00070774/0.001999 → w = 0.9 - 0.1·0.99952663 = 0.80004734.
	if d := float64(l2.W[0]) - 0.80004734; d > 1e-6 || d < -1e-6 {
		t.Fatalf("step 2 (L2): %.8f, want 0.80004734", l2.W[0])
	}
	if d := float64(plain.W[0]) - 0.8; d > 1e-7 || d < -1e-7 {
		t.Fatalf("step 2 (no decay): %.8f, want 0.8", plain.W[0])
	}

	cfg.Decoupled = true
	aw := newP(true)
	opt, _ = NewAdam([]*Param{aw}, cfg)
	opt.Step()
	// AdamW: w = 1·(1 - 0.1·0.1) - 0.1·0.5/0.5 = 0.89.
	if d := float64(aw.W[0]) - 0.89; d > 1e-7 || d < -1e-7 {
		t.Fatalf("AdamW step: %.8f, want 0.89", aw.W[0])
	}
	if opt.Steps() != 1 {
		t.Fatalf("Steps() = %d", opt.Steps())
	}
	if _, err := NewAdam(nil, AdamConfig{LR: 0.1, Beta1: 1, Beta2: 0.9, Eps: 1e-8}); err == nil || !strings.Contains(err.Error(), "Beta1") {
		t.Fatalf("Beta1=1 accepted (err %v)", err)
	}
}

// Widths that would overflow a parameter's size (a forged checkpoint's
// Hidden = 2^40) are errors naming the field, never a makeslice panic.
func TestConfigBoundsHugeWidths(t *testing.T) {
	prop := &denseProp{a: dense.New(1, 1)}
	for _, c := range []Config{
		{Model: "gcn", Layers: 2, In: 4, Hidden: 1 << 40, Out: 3},
		{Model: "sage", Layers: 2, In: 1 << 40, Hidden: 4, Out: 3},
		{Model: "gcn", Layers: 3, In: 1 << 20, Hidden: 1 << 20, Out: 3},
		{Model: "gcn", Layers: 1 << 20, In: 4, Hidden: 4, Out: 3},
	} {
		if _, err := NewModel(c, prop); err == nil || !strings.Contains(err.Error(), "nn.Config.") {
			t.Errorf("%+v: err = %v", c, err)
		}
	}
}

func TestConfigNumParamsMatchesModel(t *testing.T) {
	prop := &denseProp{a: dense.New(1, 1)}
	for _, model := range []string{"gcn", "sage"} {
		for _, norm := range []string{"none", "layer"} {
			for layers := 1; layers <= 3; layers++ {
				c := Config{Model: model, Layers: layers, In: 5, Hidden: 7, Out: 3, Norm: norm}
				m, err := NewModel(c, prop)
				if err != nil {
					t.Fatal(err)
				}
				if int64(m.NumParams()) != c.NumParams() {
					t.Errorf("%+v: model has %d parameters, Config.NumParams %d", c, m.NumParams(), c.NumParams())
				}
			}
		}
	}
}

// TestModelTable: every model name has its operator kind and layer, and an
// unknown name is refused by ModelOp and Validate alike.
func TestModelTable(t *testing.T) {
	want := map[string]OpKind{"gcn": OpGCN, "sage": OpMean, "gin": OpSum, "sgc": OpGCN, "appnp": OpGCN, "gat": OpAttention, "gatv2": OpAttentionV2, "gcnii": OpGCN, "sage-max": OpMax, "sage-pool": OpMax}
	if got := Models(); len(got) != len(want) {
		t.Fatalf("Models() = %v", got)
	}
	for _, name := range Models() {
		op, err := ModelOp(name)
		if err != nil || op != want[name] {
			t.Fatalf("ModelOp(%q) = %v, %v", name, op, err)
		}
	}
	if _, err := ModelOp("gin2"); err == nil || !strings.Contains(err.Error(), "Config.Model") {
		t.Fatalf("ModelOp(gin2): %v", err)
	}
	if err := (Config{Model: "gin2", Layers: 1, In: 1, Out: 1}).Validate(); err == nil {
		t.Fatal("Validate accepted model gin2")
	}
}

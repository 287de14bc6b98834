package nn

import (
	"math/rand/v2"
	"testing"

	"github.com/supergcn/supergcn/attn"
	"github.com/supergcn/supergcn/dense"
)

// testAttention is the LocalAttention of a small directed graph with one
// self-loop per node and a node whose only in-edge is its self-loop.
func testAttention(t *testing.T) *LocalAttention {
	t.Helper()
	in := [][]int32{{0, 1, 2}, {1, 0, 3, 4}, {2, 0}, {3}, {4, 1, 2, 3}, {5, 4, 0}}
	ptr := []int64{0}
	var idx []int32
	for _, row := range in {
		idx = append(idx, row...)
		ptr = append(ptr, int64(len(idx)))
	}
	a, err := NewLocalAttention(len(in), ptr, idx, attn.GenericRowsW)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestGATLayerGradients checks every parameter's and the input's gradient
// against finite differences, concatenated and averaged heads, with and
// without attention dropout.
func TestGATLayerGradients(t *testing.T) {
	for _, c := range []struct {
		heads, out int
		concat     bool
		drop       float64
	}{{3, 6, true, 0}, {2, 4, true, 0.4}, {3, 2, false, 0}, {2, 3, false, 0.3}, {1, 5, false, 0}} {
		r := rand.New(rand.NewPCG(21, 22))
		prop := testAttention(t)
		l := NewGATLayer("conv", 4, c.out, c.heads, c.concat, c.drop, r)
		for i := range l.B.W {
			l.B.W[i] = 0.1 * float32(i+1)
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
		for _, prm := range l.Params() {
			checkFD(t, prm.Name, prm.W, prm.G, loss, 1e-2, 1e-3)
		}
		checkFD(t, "input", x.Data, gxc, loss, 1e-2, 1e-3)
	}
}

// TestGATLayerEvaluationIgnoresDropout: an evaluation pass draws no masks,
// so it equals a training pass of a layer without attention dropout.
func TestGATLayerEvaluationIgnoresDropout(t *testing.T) {
	prop := testAttention(t)
	x := randMat(rand.New(rand.NewPCG(1, 1)), prop.Rows(), 4)
	a := NewGATLayer("a", 4, 6, 2, true, 0.5, rand.New(rand.NewPCG(5, 5)))
	b := NewGATLayer("b", 4, 6, 2, true, 0, rand.New(rand.NewPCG(5, 5)))
	ya, err := a.Forward(Pass{}, prop, x)
	if err != nil {
		t.Fatal(err)
	}
	ya = &dense.Matrix{Rows: ya.Rows, Cols: ya.Cols, Data: append([]float32(nil), ya.Data...)}
	yb, err := b.Forward(Pass{Train: true}, prop, x)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ya.Data {
		if ya.Data[i] != yb.Data[i] {
			t.Fatalf("out[%d]: evaluation %g, no dropout %g", i, ya.Data[i], yb.Data[i])
		}
	}
	yt, err := a.Forward(Pass{Train: true}, prop, x)
	if err != nil {
		t.Fatal(err)
	}
	same := true
	for i := range yt.Data {
		same = same && yt.Data[i] == yb.Data[i]
	}
	if same {
		t.Fatal("a training pass with attention dropout 0.5 changed nothing")
	}
}

// TestGATNeedsAttention: a plain Propagator is refused with an error.
func TestGATNeedsAttention(t *testing.T) {
	l := NewGATLayer("c", 2, 2, 1, true, 0, rand.New(rand.NewPCG(1, 2)))
	prop := &denseProp{a: dense.New(3, 3)}
	if _, err := l.Forward(Pass{}, prop, dense.New(3, 2)); err == nil {
		t.Fatal("GAT ran on an operator without attention")
	}
}

// TestGATModelGradients checks a two-layer GAT model (fused hidden stage,
// buffer pool, concatenated then averaged heads) against finite
// differences, and that its parameter count matches Config.NumParams.
func TestGATModelGradients(t *testing.T) {
	prop := testAttention(t)
	cfg := Config{Model: "gat", Layers: 2, In: 5, Hidden: 6, Out: 3, Heads: 3, OutHeads: 2, Seed: 4, Norm: "layer"}
	m, err := NewModel(cfg, prop)
	if err != nil {
		t.Fatal(err)
	}
	if int64(m.NumParams()) != cfg.NumParams() {
		t.Fatalf("model has %d parameters, Config.NumParams %d", m.NumParams(), cfg.NumParams())
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
		checkFD(t, prm.Name, prm.W, grads[prm.Name], loss, 5e-3, 1e-2)
	}
}

func TestGATConfigErrors(t *testing.T) {
	base := Config{Model: "gat", Layers: 2, In: 5, Hidden: 8, Out: 3, Heads: 4}
	for _, c := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.Heads = 3 }, "nn.Config.Heads"},
		{func(c *Config) { c.Heads = -1 }, "nn.Config.Heads"},
		{func(c *Config) { c.OutHeads = -2 }, "nn.Config.OutHeads"},
		{func(c *Config) { c.AttnDropout = 1 }, "nn.Config.AttnDropout"},
	} {
		cfg := base
		c.mod(&cfg)
		err := cfg.Validate()
		if err == nil || !contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one naming %s", cfg, err, c.want)
		}
	}
	if err := base.Validate(); err != nil {
		t.Fatal(err)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

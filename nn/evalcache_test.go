package nn

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/supergcn/supergcn/dense"
)

// TestEvalInputCache: with SetEvalInput, evaluation Forwards reuse the
// first layer's aggregate of the input and give bit-identical logits,
// hidden activations and gradients to a model without it, across
// "epochs" of training Forwards, Backwards and weight updates; the
// aggregate is computed once, with Pass.Exact, only for propagate-first
// first layers, and a new input matrix is computed afresh.
func TestEvalInputCache(t *testing.T) {
	for _, model := range []string{"gcn", "sage"} {
		for _, norm := range []string{"none", "layer"} {
			for _, c := range []struct{ layers, in, hidden int }{{2, 5, 16}, {3, 5, 16}, {1, 5, 0}, {2, 20, 8}} {
				name := fmt.Sprintf("%s/%s/%d×%d→%d", model, norm, c.layers, c.in, c.hidden)
				t.Run(name, func(t *testing.T) {
					cfg := Config{Model: model, Layers: c.layers, In: c.in, Hidden: c.hidden, Out: 3, Dropout: 0.3, Norm: norm, Seed: 5}
					checkEvalCache(t, cfg)
				})
			}
		}
	}
}

func checkEvalCache(t *testing.T, cfg Config) {
	adj := gcnAdj(7, smallEdges)
	if cfg.Model == "sage" {
		adj = meanAdj(7, smallEdges)
	}
	refProp, gotProp := &denseProp{a: adj}, &denseProp{a: adj}
	ref, err := NewModel(cfg, refProp)
	if err != nil {
		t.Fatal(err)
	}
	got, err := NewModel(cfg, gotProp)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	x := randMat(r, 7, cfg.In)
	got.SetEvalInput(x)
	// The first layer aggregates its input when it widens it (Out > In).
	first := cfg.Hidden
	if cfg.Layers == 1 {
		first = cfg.Out
	}
	cached := first > cfg.In
	steps := max(cfg.Steps(), 1) // propagator forwards a layer
	eval := func(m *Model, in *dense.Matrix) ([]float32, []float32) {
		t.Helper()
		out, err := m.Forward(Pass{}, in)
		if err != nil {
			t.Fatal(err)
		}
		var h []float32
		if lh := m.LastHidden(); lh != nil {
			h = slices.Clone(lh.Data)
		}
		return slices.Clone(out.Data), h
	}
	same := func(what string, a, b []float32) {
		t.Helper()
		if !slices.Equal(a, b) {
			t.Fatalf("%s differs with the evaluation aggregate", what)
		}
	}
	for epoch := range 4 {
		// Training step on both: forward, backward, an SGD update.
		for _, m := range []*Model{ref, got} {
			logits, err := m.Forward(Pass{Train: true}, x)
			if err != nil {
				t.Fatal(err)
			}
			g := dense.New(logits.Rows, logits.Cols)
			for i := range g.Data {
				g.Data[i] = float32(i%5) - 2
			}
			if _, err := m.Backward(Pass{Train: true}, g, true); err != nil {
				t.Fatal(err)
			}
			for _, p := range m.Params() {
				for i := range p.W {
					p.W[i] -= 0.1 * p.G[i]
				}
			}
		}
		fwdBefore := gotProp.fwdN
		wantL, wantH := eval(ref, x)
		gotL, gotH := eval(got, x)
		same(fmt.Sprintf("epoch %d logits", epoch), gotL, wantL)
		same(fmt.Sprintf("epoch %d hidden", epoch), gotH, wantH)
		calls := gotProp.fwdN - fwdBefore
		wantCalls := cfg.Layers * steps
		if cached && epoch > 0 {
			wantCalls--
		}
		if calls != wantCalls {
			t.Fatalf("epoch %d: %d propagator forwards in evaluation, want %d (cached first aggregate: %v)", epoch, calls, wantCalls, cached)
		}
	}
	wantExact := 0
	if cached {
		wantExact = 1
	}
	if gotProp.exactN != wantExact || refProp.exactN != 0 {
		t.Fatalf("%d exact forwards with the aggregate (want %d), %d without (want 0)", gotProp.exactN, wantExact, refProp.exactN)
	}
	// A Backward after a cached evaluation Forward gives the same gradients
	// and leaves the aggregate intact.
	g := dense.New(7, cfg.Out)
	for i := range g.Data {
		g.Data[i] = float32(i%3) - 1
	}
	var grads [2][][]float32
	var gxs [2][]float32
	for k, m := range []*Model{ref, got} {
		eval(m, x)
		gx, err := m.Backward(Pass{}, g, true)
		if err != nil {
			t.Fatal(err)
		}
		gxs[k] = slices.Clone(gx.Data)
		for _, p := range m.Params() {
			grads[k] = append(grads[k], slices.Clone(p.G))
		}
	}
	same("input gradient after an evaluation Forward", gxs[1], gxs[0])
	for i := range grads[0] {
		same("parameter gradient after an evaluation Forward", grads[1][i], grads[0][i])
	}
	wantL, _ := eval(ref, x)
	gotL, _ := eval(got, x)
	same("logits after a Backward", gotL, wantL)
	// Another matrix is computed afresh, declared or not.
	x2 := randMat(r, 7, cfg.In)
	wantL, _ = eval(ref, x2)
	gotL, _ = eval(got, x2)
	same("logits of an undeclared input", gotL, wantL)
	got.SetEvalInput(x2)
	gotL, _ = eval(got, x2)
	same("logits of a newly declared input", gotL, wantL)
	gotL, _ = eval(got, x2)
	same("logits of a newly declared input, second pass", gotL, wantL)
	// Training Forwards ignore it, even without dropout.
	before := gotProp.fwdN
	if _, err := got.Forward(Pass{Train: true}, x2); err != nil {
		t.Fatal(err)
	}
	if gotProp.fwdN-before != cfg.Layers*steps {
		t.Fatalf("training forward: %d propagator forwards, want %d", gotProp.fwdN-before, cfg.Layers*steps)
	}
}

package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/par"
	"github.com/supergcn/supergcn/internal/rowk"
)

// randomAdj is a random sparse-ish row-normalised n×n operator.
func randomAdj(r *rand.Rand, n int) *dense.Matrix {
	a := dense.New(n, n)
	for i := range n {
		deg := 1 + r.IntN(6)
		for range deg {
			a.Data[i*n+r.IntN(n)] += 1 / float32(deg)
		}
	}
	return a
}

// sameFloats compares exactly on amd64 (the fused and the separate passes
// round the same operations in the same order); elsewhere the compiler may
// fuse multiply-adds differently in the two loops, so a tiny relative
// difference is allowed.
func sameFloats(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if math.Float32bits(g) == math.Float32bits(w) {
			continue
		}
		if runtime.GOARCH != "amd64" && math.Abs(float64(g-w)) <= 1e-5*(1+math.Abs(float64(w))) {
			continue
		}
		t.Fatalf("%s[%d] (row %d of width?): fused %v, separate passes %v", what, i, i, g, w)
	}
}

// TestFusedMatchesSeparatePasses trains the same model with the fused
// hidden stages and with LayerNorm, ReLU and Dropout as separate passes,
// for a few Adam steps and an evaluation pass each, on odd widths (rows
// split between dropout blocks, widths not a multiple of 4) and several
// thread counts, and requires identical logits, gradients, hidden
// activations and losses.
func TestFusedMatchesSeparatePasses(t *testing.T) {
	defer par.SetThreads(par.Threads())
	for _, model := range []string{"gcn", "sage"} {
		for _, norm := range []string{"none", "layer"} {
			for _, drop := range []float64{0, 0.3} {
				for _, hidden := range []int{37, 64} {
					name := fmt.Sprintf("%s_%s_p%g_h%d", model, norm, drop, hidden)
					t.Run(name, func(t *testing.T) {
						par.SetThreads(1 + len(name)%3)
						compareFused(t, Config{Model: model, Layers: 3, In: 11, Hidden: hidden, Out: 5,
							Dropout: drop, Norm: norm, Seed: 4})
					})
				}
			}
		}
	}
}

func compareFused(t *testing.T, cfg Config) {
	r := rand.New(rand.NewPCG(8, 9))
	const n = 1031 // 1031·37 elements: three dropout blocks, rows straddling them
	prop := &denseProp{a: randomAdj(r, n)}
	x := randMat(r, n, cfg.In)
	labels := make([]int32, n)
	var rows []int32
	for i := range labels {
		labels[i] = int32(r.IntN(cfg.Out))
		if i%3 != 0 {
			rows = append(rows, int32(i))
		}
	}
	var models [2]*Model
	var opts [2]*Adam
	for k, fused := range []bool{true, false} {
		m, err := newModel(cfg, prop, fused)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m.Params() { // non-trivial biases and norm parameters
			if p.Rows == 1 {
				pr := rand.New(rand.NewPCG(5, uint64(len(p.Name))))
				for i := range p.W {
					p.W[i] += 0.3 * (2*pr.Float32() - 1)
				}
			}
		}
		m.SetDropoutSeed(77)
		models[k] = m
		if opts[k], err = NewAdam(m.Params(), DefaultAdam()); err != nil {
			t.Fatal(err)
		}
	}
	for step := range 3 {
		var losses [2]float64
		var logits, hidden, gx [2][]float32
		for k, m := range models {
			lg, err := m.Forward(Pass{Train: true, Epoch: step + 1}, x)
			if err != nil {
				t.Fatal(err)
			}
			logits[k] = slices.Clone(lg.Data)
			hidden[k] = slices.Clone(m.LastHidden().Data)
			l, g := SoftmaxCrossEntropy(lg, labels, rows, float64(len(rows)))
			losses[k] = l
			gxm, err := m.Backward(Pass{Train: true, Epoch: step + 1}, g, true)
			if err != nil {
				t.Fatal(err)
			}
			gx[k] = slices.Clone(gxm.Data)
		}
		sameFloats(t, fmt.Sprintf("step %d logits", step), logits[0], logits[1])
		sameFloats(t, fmt.Sprintf("step %d last hidden", step), hidden[0], hidden[1])
		sameFloats(t, fmt.Sprintf("step %d input gradient", step), gx[0], gx[1])
		if losses[0] != losses[1] && runtime.GOARCH == "amd64" {
			t.Fatalf("step %d: loss %v fused, %v separate", step, losses[0], losses[1])
		}
		for i, p := range models[0].Params() {
			sameFloats(t, fmt.Sprintf("step %d %s gradient", step, p.Name), p.G, models[1].Params()[i].G)
		}
		opts[0].Step()
		opts[1].Step()
		var eval [2][]float32
		for k, m := range models {
			lg, err := m.Forward(Pass{Train: false}, x)
			if err != nil {
				t.Fatal(err)
			}
			eval[k] = slices.Clone(lg.Data)
		}
		sameFloats(t, fmt.Sprintf("step %d evaluation logits", step), eval[0], eval[1])
	}
}

// TestFusedKeepsNoMask checks the memory the fused stages save: no dropout
// mask and no LayerNorm copies are allocated for hidden layers.
func TestFusedKeepsNoMask(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	prop := &denseProp{a: randomAdj(r, 50)}
	m, err := NewModel(Config{Model: "sage", Layers: 3, In: 7, Hidden: 9, Out: 3, Dropout: 0.5, Norm: "layer", Seed: 1}, prop)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Forward(Pass{Train: true}, randMat(r, 50, 7)); err != nil {
		t.Fatal(err)
	}
	for i, d := range m.drops[1:] {
		if d.mask != nil || m.norms[i].xhat != nil || m.norms[i].out != nil {
			t.Fatalf("hidden layer %d: separate-pass buffers allocated in the fused model", i)
		}
	}
}

// BenchmarkHiddenStage times one hidden stage (bias + LayerNorm + ReLU +
// dropout, forward and backward) on 100 k × 256, fused and as the separate
// passes, and the fused stage's training forward, evaluation forward and
// backward alone (go test -bench HiddenStage ./nn/; -cpu 1 for one thread).
func BenchmarkHiddenStage(b *testing.B) { benchHiddenStage(b, 100_000) }

// BenchmarkHiddenStageInCache is BenchmarkHiddenStage on 2048 × 256 (2 MiB
// per matrix): the stage's arithmetic with little memory traffic, steadier
// than the large case on a shared machine.
func BenchmarkHiddenStageInCache(b *testing.B) { benchHiddenStage(b, 2048) }

func benchHiddenStage(b *testing.B, rows int) {
	const dim = 256
	r := rand.New(rand.NewPCG(1, 2))
	o := randMat(r, rows, dim)
	g := randMat(r, rows, dim)
	ln := NewLayerNorm("n", dim)
	bias := make([]float32, dim)
	bytes := int64(4 * rows * dim)
	b.Run("fused", func(b *testing.B) {
		a := &hiddenAct{norm: ln, p: 0.5, bias: bias, kern: rowk.Default()}
		gw := dense.New(rows, dim)
		b.SetBytes(bytes)
		for i := range b.N {
			a.forward(o, true, uint64(i))
			copy(gw.Data, g.Data)
			a.backward(gw)
		}
	})
	b.Run("fused_forward", func(b *testing.B) {
		a := &hiddenAct{norm: ln, p: 0.5, bias: bias, kern: rowk.Default()}
		b.SetBytes(bytes)
		for i := range b.N {
			a.forward(o, true, uint64(i))
		}
	})
	b.Run("fused_forward_eval", func(b *testing.B) {
		a := &hiddenAct{norm: ln, p: 0.5, bias: bias, kern: rowk.Default()}
		b.SetBytes(bytes)
		for b.Loop() {
			a.forward(o, false, 0)
		}
	})
	b.Run("fused_backward", func(b *testing.B) {
		a := &hiddenAct{norm: ln, p: 0.5, bias: bias, kern: rowk.Default()}
		a.forward(o, true, 1)
		gw := dense.New(rows, dim)
		b.SetBytes(bytes)
		for b.Loop() {
			copy(gw.Data, g.Data) // counted: the same copy in every variant
			a.backward(gw)
		}
	})
	b.Run("separate", func(b *testing.B) {
		d := &Dropout{P: 0.5}
		ob := dense.New(rows, dim)
		gw := dense.New(rows, dim)
		b.SetBytes(bytes)
		for i := range b.N {
			copy(ob.Data, o.Data)
			dense.AddBias(ob, bias)
			h := ln.Forward(ob)
			ReLU(h)
			h = d.Forward(h, true, true, uint64(i))
			copy(gw.Data, g.Data)
			gg := d.Backward(gw)
			ReLUBackward(gg, h)
			ln.Backward(gg)
		}
	})
}

// TestSetKernel: SetKernel reaches every stage and LayerNorm of the model,
// every set gives the generic set's results bit for bit, and a name no set
// answers is an error naming the kernel.
func TestSetKernel(t *testing.T) {
	cfg := Config{Model: "gcn", Layers: 3, In: 11, Hidden: 37, Out: 5, Dropout: 0.3, Norm: "layer", Seed: 4}
	r := rand.New(rand.NewPCG(8, 9))
	const n = 300
	prop := &denseProp{a: randomAdj(r, n)}
	x := randMat(r, n, cfg.In)
	run := func(kernel string) []float32 {
		m, err := NewModel(cfg, prop)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.SetKernel(kernel); err != nil {
			t.Fatal(err)
		}
		for i, st := range m.stages {
			if st.kern.Name() != kernel || m.norms[i].kern.Name() != kernel {
				t.Fatalf("SetKernel(%q): stage %d runs %q, its LayerNorm %q", kernel, i, st.kern.Name(), m.norms[i].kern.Name())
			}
		}
		m.SetDropoutSeed(7)
		lg, err := m.Forward(Pass{Train: true, Epoch: 1}, x)
		if err != nil {
			t.Fatal(err)
		}
		g := dense.New(lg.Rows, lg.Cols)
		for i := range g.Data {
			g.Data[i] = float32(i%7) - 3
		}
		gx, err := m.Backward(Pass{Train: true, Epoch: 1}, g, true)
		if err != nil {
			t.Fatal(err)
		}
		return append(slices.Clone(lg.Data), gx.Data...)
	}
	want := run("generic")
	for _, k := range rowk.Kernels() {
		sameFloats(t, k+" logits and input gradient", run(k), want)
	}
	m, err := NewModel(cfg, prop)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetKernel("mmx"); err == nil || !strings.Contains(err.Error(), `"mmx"`) {
		t.Errorf("SetKernel(mmx): %v", err)
	}
}

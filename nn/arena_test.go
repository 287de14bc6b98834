package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/supergcn/supergcn/dense"
)

// The pool reaches its size in the first training step and evaluation
// pass and allocates nothing after; every buffer is back in it at the
// start of each Forward.
func TestPoolStopsGrowing(t *testing.T) {
	for _, model := range []string{"gcn", "sage"} {
		for _, norm := range []string{"none", "layer"} {
			for _, c := range []struct{ layers, in, hidden int }{{2, 5, 16}, {3, 5, 16}, {3, 20, 8}, {1, 5, 0}} {
				t.Run(fmt.Sprintf("%s/%s/%d×%d", model, norm, c.layers, c.hidden), func(t *testing.T) {
					checkPoolSteady(t, Config{Model: model, Layers: c.layers, In: c.in, Hidden: c.hidden, Out: 3, Dropout: 0.3, Norm: norm, Seed: 5})
				})
			}
		}
	}
}

func checkPoolSteady(t *testing.T, cfg Config) {
	adj := gcnAdj(7, smallEdges)
	if cfg.Model == "sage" {
		adj = meanAdj(7, smallEdges)
	}
	m, err := NewModel(cfg, &denseProp{a: adj})
	if err != nil {
		t.Fatal(err)
	}
	x := randMat(rand.New(rand.NewPCG(3, 4)), 7, cfg.In)
	m.SetEvalInput(x)
	labels := []int32{0, 1, 2, 1, 0, 0, 2}
	rows := []int32{0, 1, 2, 3, 4, 5, 6}
	var after int64
	for step := range 4 {
		for _, wantGx := range []bool{false, true} {
			lg, err := m.Forward(Pass{Train: true}, x)
			if err != nil {
				t.Fatal(err)
			}
			_, g := SoftmaxCrossEntropy(lg, labels, rows, 7)
			if _, err := m.Backward(Pass{Train: true}, g, wantGx); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Forward(Pass{}, x); err != nil {
				t.Fatal(err)
			}
		}
		if step == 0 {
			after = m.PoolBytes()
		} else if m.PoolBytes() != after {
			t.Fatalf("step %d: pool grew from %d to %d bytes", step, after, m.PoolBytes())
		}
	}
	m.release()
	if m.pool.lent != 0 {
		t.Fatalf("%d buffers not given back", m.pool.lent)
	}
}

// Evaluation in the pool after training steps gives what a fresh model
// with the same parameters gives (no state of the training buffers leaks
// into it), bit for bit: logits and the last hidden layer, with and
// without the evaluation aggregate; and the training step after it is the
// fresh model's too.
func TestEvalAfterTrainingEqualsFreshModel(t *testing.T) {
	for _, model := range []string{"gcn", "sage"} {
		for _, norm := range []string{"none", "layer"} {
			for _, c := range []struct{ layers, in, hidden int }{{2, 5, 16}, {3, 5, 16}, {3, 20, 8}} {
				t.Run(fmt.Sprintf("%s/%s/%d×%d", model, norm, c.layers, c.hidden), func(t *testing.T) {
					cfg := Config{Model: model, Layers: c.layers, In: c.in, Hidden: c.hidden, Out: 3, Dropout: 0.3, Norm: norm, Seed: 9}
					checkEvalAfterTraining(t, cfg)
				})
			}
		}
	}
}

func checkEvalAfterTraining(t *testing.T, cfg Config) {
	adj := gcnAdj(7, smallEdges)
	if cfg.Model == "sage" {
		adj = meanAdj(7, smallEdges)
	}
	x := randMat(rand.New(rand.NewPCG(5, 6)), 7, cfg.In)
	labels := []int32{0, 1, 2, 1, 0, 0, 2}
	rows := []int32{0, 1, 2, 3, 4, 5, 6}
	trained, err := NewModel(cfg, &denseProp{a: adj})
	if err != nil {
		t.Fatal(err)
	}
	trained.SetEvalInput(x)
	opt, err := NewAdam(trained.Params(), DefaultAdam())
	if err != nil {
		t.Fatal(err)
	}
	step := func(m *Model) ([]float32, [][]float32) {
		lg, err := m.Forward(Pass{Train: true}, x)
		if err != nil {
			t.Fatal(err)
		}
		_, g := SoftmaxCrossEntropy(lg, labels, rows, 7)
		gx, err := m.Backward(Pass{Train: true}, g, true)
		if err != nil {
			t.Fatal(err)
		}
		var grads [][]float32
		for _, p := range m.Params() {
			grads = append(grads, slices.Clone(p.G))
		}
		return slices.Clone(gx.Data), grads
	}
	for range 3 {
		step(trained)
		opt.Step()
		if _, err := trained.Forward(Pass{}, x); err != nil {
			t.Fatal(err)
		}
	}
	fresh, err := NewModel(cfg, &denseProp{a: adj})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range fresh.Params() {
		copy(p.W, trained.Params()[i].W)
	}
	var logits, hidden [2][]float32
	for k, m := range []*Model{trained, fresh} {
		lg, err := m.Forward(Pass{}, x)
		if err != nil {
			t.Fatal(err)
		}
		logits[k], hidden[k] = slices.Clone(lg.Data), slices.Clone(m.LastHidden().Data)
	}
	sameFloats(t, "evaluation logits", logits[0], logits[1])
	sameFloats(t, "evaluation last hidden", hidden[0], hidden[1])
	trained.SetDropoutSeed(4)
	fresh.SetDropoutSeed(4)
	gx0, g0 := step(trained)
	gx1, g1 := step(fresh)
	sameFloats(t, "input gradient of the next step", gx0, gx1)
	for i := range g0 {
		sameFloats(t, trained.Params()[i].Name+" gradient of the next step", g0[i], g1[i])
	}
}

// NonFiniteLayer names the first hidden layer whose output was not finite
// in the last Forward, also after Backward has given the activations back
// to the pool (the fused stages record it as they write them).
func TestNonFiniteLayerAfterBackward(t *testing.T) {
	for _, norm := range []string{"none", "layer"} {
		for bad := 1; bad <= 2; bad++ {
			cfg := Config{Model: "sage", Layers: 3, In: 5, Hidden: 8, Out: 3, Dropout: 0.3, Norm: norm, Seed: 2}
			m, err := NewModel(cfg, &denseProp{a: meanAdj(7, smallEdges)})
			if err != nil {
				t.Fatal(err)
			}
			x := randMat(rand.New(rand.NewPCG(1, 1)), 7, 5)
			lg, err := m.Forward(Pass{Train: true}, x)
			if err != nil {
				t.Fatal(err)
			}
			if l := m.NonFiniteLayer(lg); l != 0 {
				t.Fatalf("finite model: NonFiniteLayer = %d", l)
			}
			// An infinite root weight (without LayerNorm) or LayerNorm
			// bias makes hidden layer bad's output non-finite (LayerNorm
			// turns an infinite input row into NaNs, which the ReLU may
			// zero).
			if norm == "layer" {
				m.norms[bad-1].Beta.W[0] = float32(math.Inf(1))
			} else {
				m.convs[bad-1].(*SAGELayer).WR.W[0] = float32(math.Inf(1))
			}
			lg, err = m.Forward(Pass{Train: true}, x)
			if err != nil {
				t.Fatal(err)
			}
			before := m.NonFiniteLayer(lg)
			g := dense.New(7, 3)
			if _, err := m.Backward(Pass{Train: true}, g, false); err != nil {
				t.Fatal(err)
			}
			if after := m.NonFiniteLayer(lg); before != bad || after != bad {
				t.Fatalf("norm %s, layer %d made infinite: NonFiniteLayer %d before Backward, %d after", norm, bad, before, after)
			}
		}
	}
}

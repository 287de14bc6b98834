package nn

import (
	"fmt"
	"math/rand/v2"
	"testing"
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

package nn

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestGATModelGradientsWithDropout: the whole GAT model in a training pass
// with feature and attention dropout (the masks of one step, fixed for
// every evaluation of the loss) against finite differences, without
// LayerNorm too: the hidden stage then works on the layer output in place,
// which must not be the attention output the operator's backward reads.
func TestGATModelGradientsWithDropout(t *testing.T) {
	for _, c := range []struct {
		drop, attn float64
		norm       string
	}{{0.2, 0, "none"}, {0, 0.3, "none"}, {0.2, 0.3, "none"}, {0.2, 0.3, "layer"}} {
		norm := c.norm
		t.Run(fmt.Sprintf("drop%v_attn%v_%s", c.drop, c.attn, norm), func(t *testing.T) {
			prop := testAttention(t)
			cfg := Config{Model: "gat", Layers: 2, In: 5, Hidden: 6, Out: 3, Heads: 3, OutHeads: 2, Seed: 4, Norm: norm, Dropout: c.drop, AttnDropout: c.attn}
			m, err := NewModel(cfg, prop)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(8, 9))
			n := prop.Rows()
			x := randMat(r, n, 5)
			labels := make([]int32, n)
			rows := make([]int32, n)
			for i := range labels {
				labels[i], rows[i] = int32(i%3), int32(i)
			}
			pass := Pass{Train: true, Epoch: 5}
			loss := func() float64 {
				m.SetDropoutSeed(99)
				y, err := m.Forward(pass, x)
				if err != nil {
					t.Fatal(err)
				}
				l, _ := SoftmaxCrossEntropy(y, labels, rows, float64(n))
				return l / float64(n)
			}
			m.SetDropoutSeed(99)
			y, err := m.Forward(pass, x)
			if err != nil {
				t.Fatal(err)
			}
			_, g := SoftmaxCrossEntropy(y, labels, rows, float64(n))
			if _, err := m.Backward(pass, g, false); err != nil {
				t.Fatal(err)
			}
			grads := map[string][]float32{}
			for _, prm := range m.Params() {
				grads[prm.Name] = slices.Clone(prm.G)
			}
			for _, prm := range m.Params() {
				checkFD(t, prm.Name, prm.W, grads[prm.Name], loss, 1e-3, 5e-2)
			}
		})
	}
}

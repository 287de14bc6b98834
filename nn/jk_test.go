package nn

import (
	"fmt"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/dense"
)

// TestJKGradients: jumping knowledge (cat, max, last) over GCN, SAGE and
// GIN layers, without normalisation and with batch normalisation, 1 and 3
// layers, against finite differences; with dropout for GCN. Every layer
// ends in a ReLU here, the last too, so on 7 nodes some pre-activation
// lies within a step of 0 for other seeds and dropout rates: the
// differences then straddle the kink (one unit's column off, the rest
// exact to 1e-6).
func TestJKGradients(t *testing.T) {
	for _, model := range []string{"gcn", "sage", "gin"} {
		drop := 0.0
		if model == "gcn" {
			drop = 0.2
		}
		for _, jk := range []string{"cat", "max", "last"} {
			for _, norm := range []string{"none", "batch"} {
				for _, layers := range []int{1, 3} {
					cfg := Config{Model: model, Layers: layers, In: 5, Hidden: 6, Out: 3, Dropout: drop, Norm: norm, Seed: 3, JK: jk}
					a := skewed(gcnAdj(7, smallEdges))
					if model == "sage" {
						a = meanAdj(7, smallEdges)
					}
					t.Run(fmt.Sprintf("%s_%s_%s_%d_drop%g", model, jk, norm, layers, drop), func(t *testing.T) {
						// 5e-2 as in TestNewModelsGradients: gin's input gradient
						// (entries ~1e-5) is within 2.3 % under arm64's fused
						// multiply-adds; a wrong gradient is off by far more.
						checkConfigGradients(t, cfg, a, 1e-3, 5e-2)
					})
				}
			}
		}
	}
}

// TestJKConfig: parameter shapes and counts derive from the plans and the
// combination's width; attention models and unknown modes are refused.
func TestJKConfig(t *testing.T) {
	for _, jk := range []string{"cat", "max", "last"} {
		cfg := Config{Model: "gcn", Layers: 3, In: 10, Hidden: 8, Out: 4, Norm: "batch", JK: jk}
		m, err := NewModel(cfg, &denseProp{a: dense.New(3, 3)})
		if err != nil {
			t.Fatal(err)
		}
		shapes, err := cfg.ParamShapes()
		if err != nil || len(shapes) != len(m.Params()) || int64(m.NumParams()) != cfg.NumParams() {
			t.Fatalf("%s: %d shapes (%v), %d params; NumParams %d vs %d", jk, len(shapes), err, len(m.Params()), m.NumParams(), cfg.NumParams())
		}
		for i, p := range m.Params() {
			if s := shapes[i]; s.Name != p.Name || s.Rows != p.Rows || s.Cols != p.Cols {
				t.Fatalf("%s: param %d: shape %+v, model %s %d×%d", jk, i, s, p.Name, p.Rows, p.Cols)
			}
		}
		w := m.Params()[len(m.Params())-2]
		if want := map[string]int{"cat": 24, "max": 8, "last": 8}[jk]; w.Name != "jk.lin.weight" || w.Rows != want {
			t.Fatalf("%s: %s is %d×%d", jk, w.Name, w.Rows, w.Cols)
		}
	}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Model: "gat", Layers: 2, In: 4, Hidden: 4, Out: 2, JK: "cat"}, "nn.Config.JK"},
		{Config{Model: "gcnii", Layers: 2, In: 4, Hidden: 4, Out: 2, JK: "cat"}, "nn.Config.JK"},
		{Config{Model: "gcn", Layers: 2, In: 4, Hidden: 4, Out: 2, JK: "lstm"}, `"lstm" is not none, cat, max or last`},
	} {
		if err := c.cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
}

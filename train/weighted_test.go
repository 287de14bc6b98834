package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/partition"
)

// withWeights returns ds sharing everything but the graph, whose edges get
// weight 1 (ones) or a seeded weight in (0, 2].
func withWeights(ds *graph.Dataset, ones bool, seed uint64) *graph.Dataset {
	rng := rand.New(rand.NewPCG(seed, 5))
	g := *ds.Graph
	g.Val = make([]float32, len(g.Idx))
	for k := range g.Val {
		g.Val[k] = 1
		if !ones {
			g.Val[k] = 2 - 2*rng.Float32()
		}
	}
	out := *ds
	out.Graph = &g
	return &out
}

// weightedConfig is the dropout-free configuration of model as the
// equality tests train it (SGC: one layer, K = 2; APPNP: K = 10; GIN with
// a learnable ε).
func weightedConfig(model string, epochs int) Config {
	cfg := kipfConfig(model, 3, epochs, 0)
	switch model {
	case "gin":
		cfg.Model.Hyper = map[string]float64{"train-eps": 1}
	case "sgc":
		cfg.Model.Layers, cfg.Model.Hidden, cfg.Model.Hyper = 1, 0, map[string]float64{"k": 2}
	case "appnp":
		cfg.Model.Hyper = map[string]float64{"k": 10}
	}
	return cfg
}

// Weighted models: every weight 1 gives the unweighted per-epoch losses
// exactly; other weights give different losses, the same at P = 2…4 ranks
// (goroutine groups) within 1e-4 relative, every mode (GCN and SAGE; the
// other models at P = 2).
func TestWeightedTraining(t *testing.T) {
	ds := cora(t)
	epochs := 20
	if testing.Short() {
		epochs = 5
	}
	weighted := withWeights(ds, false, 9)
	for _, model := range []string{"gcn", "sage", "gin", "sgc", "appnp"} {
		cfg := weightedConfig(model, epochs)
		plain := single(t, ds, cfg)
		ones := single(t, withWeights(ds, true, 0), cfg)
		ref := single(t, weighted, cfg)
		differs := false
		for e := range plain.Epochs {
			if ones.Epochs[e].Loss != plain.Epochs[e].Loss {
				t.Fatalf("%s epoch %d: all-ones weights give loss %.8f, unweighted %.8f", model, e+1, ones.Epochs[e].Loss, plain.Epochs[e].Loss)
			}
			differs = differs || math.Abs(ref.Epochs[e].Loss-plain.Epochs[e].Loss) > 1e-4
		}
		if !differs {
			t.Fatalf("%s: weights do not change the losses", model)
		}
		ranks := []int{2, 3, 4}
		if model != "gcn" && model != "sage" {
			ranks = []int{2}
		}
		for _, p := range ranks {
			owner := partition.Random(ds.NumNodes(), p, 7)
			for _, mode := range []string{"hybrid", "pre", "post"} {
				t.Run(fmt.Sprintf("%s/P%d/%s", model, p, mode), func(t *testing.T) {
					c := cfg
					c.AggrMode = mode
					sameLossesAt(t, ref, distributed(t, weighted, owner, p, c), p)
				})
			}
		}
	}
}

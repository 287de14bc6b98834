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

// Weighted GCN and SAGE: every weight 1 gives the unweighted per-epoch
// losses exactly; other weights give different losses, the same at
// P = 1…4 ranks (goroutine groups) within 1e-4 relative, every mode.
func TestWeightedTraining(t *testing.T) {
	ds := cora(t)
	epochs := 20
	if testing.Short() {
		epochs = 5
	}
	weighted := withWeights(ds, false, 9)
	for _, model := range []string{"gcn", "sage"} {
		cfg := kipfConfig(model, 3, epochs, 0)
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
		for p := 2; p <= 4; p++ {
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

package train

import (
	"fmt"
	"testing"

	"github.com/supergcn/supergcn/graph"
)

// sparseCora is Cora (row-normalised) with its features stored sparse.
func sparseCora(t testing.TB) *graph.Dataset {
	ds := *cora(t)
	ds.XS, ds.X = graph.SparseFeaturesOf(ds.X, ds.NumNodes(), ds.FeatDim), nil
	return &ds
}

// TestSparseFeaturesEqualDense: Cora's features stored sparse train to the
// dense run's losses (relative 1e-4 every epoch), with dropout and with
// label propagation, in one process, on 2 in-process ranks (goroutines,
// METIS) and on 3 (random).
func TestSparseFeaturesEqualDense(t *testing.T) {
	ds, sp := cora(t), sparseCora(t)
	for _, c := range []struct {
		model string
		lp    float64
	}{{"gcn", 0}, {"gcn", 0.5}, {"sage", 0}, {"gat", 0}} {
		cfg := kipfConfig(c.model, 3, 15, 0.5)
		cfg.LabelProp = c.lp
		name := fmt.Sprintf("%s-lp%g", c.model, c.lp)
		t.Run(name, func(t *testing.T) {
			ref := single(t, ds, cfg)
			sameLossesAt(t, ref, single(t, sp, cfg), 1)
			for p, method := range map[int]string{2: "metis", 3: "random"} {
				owner := partitionFor(t, ds, method, p)
				sameLossesAt(t, distributed(t, ds, owner, p, cfg), distributed(t, sp, owner, p, cfg), p)
			}
		})
	}
}

package train

import (
	"fmt"
	"testing"
)

// Residual connections (GCN with batch normalisation, SAGE with layer
// normalisation and with jumping knowledge) train distributed as in one
// process: with dropout 0 the per-epoch fp32 loss at P = 2, 3, 4 ranks
// (in-process) equals P = 1 within 1e-4; and resume exactly.
func TestResidualDistributedEqualsSingle(t *testing.T) {
	ds := cora(t)
	epochs := 8
	if testing.Short() {
		epochs = 3
	}
	for _, c := range []struct{ model, jk, norm string }{
		{"gcn", "none", "batch"}, {"sage", "none", "layer"}, {"sage", "max", "none"},
	} {
		cfg := kipfConfig(c.model, 3, epochs, 0)
		cfg.Model.JK, cfg.Model.Norm, cfg.Model.Layers, cfg.Model.Residual = c.jk, c.norm, 3, true
		ref := single(t, ds, cfg)
		for _, p := range []int{2, 3, 4} {
			method := methodFor(p)
			owner := partitionFor(t, ds, method, p)
			t.Run(fmt.Sprintf("%s/%s/%s/P%d/%s", c.model, c.jk, c.norm, p, method), func(t *testing.T) {
				sameLossesAt(t, ref, distributed(t, ds, owner, p, cfg), p)
			})
		}
	}
	t.Run("resume", func(t *testing.T) {
		cfg := kipfConfig("gcn", 5, 0, 0.5)
		cfg.Model.Norm, cfg.Model.Layers, cfg.Model.Residual = "batch", 3, true
		ref, got, refCk, gotCk := trainTwice(t, ds, 2, cfg)
		checkResumed(t, ref, got, refCk, gotCk)
	})
}

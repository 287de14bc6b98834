package train

import (
	"fmt"
	"testing"
)

// Jumping knowledge (cat, max, last; GCN and SAGE, with batch
// normalisation in cat) trains distributed as in one process: with dropout
// 0 the per-epoch fp32 loss at P = 2, 3, 4 ranks (in-process) equals P = 1
// within 1e-4; and resumes exactly.
func TestJKDistributedEqualsSingle(t *testing.T) {
	ds := cora(t)
	epochs := 8
	if testing.Short() {
		epochs = 3
	}
	for _, c := range []struct{ model, jk, norm string }{
		{"gcn", "cat", "batch"}, {"gcn", "max", "none"}, {"sage", "last", "none"}, {"sage", "cat", "layer"},
	} {
		cfg := kipfConfig(c.model, 3, epochs, 0)
		cfg.Model.JK, cfg.Model.Norm, cfg.Model.Layers = c.jk, c.norm, 3
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
		cfg.Model.JK, cfg.Model.Norm = "cat", "batch"
		ref, got, refCk, gotCk := trainTwice(t, ds, 2, cfg)
		checkResumed(t, ref, got, refCk, gotCk)
	})
}

package train

import (
	"fmt"
	"testing"
)

// gatv2Config is a 2-layer GATv2 on Cora, 4 heads × 4, attention dropout
// 0.3, share-weights as given.
func gatv2Config(epochs int, shared float64) Config {
	cfg := kipfConfig("gatv2", 5, epochs, 0)
	cfg.Model.Hidden, cfg.Model.Heads, cfg.Model.AttnDropout = 16, 4, 0.3
	cfg.Model.Hyper = map[string]float64{"share-weights": shared}
	cfg.LR = 0.005
	return cfg
}

// GATv2 trains to the same losses at P = 2, 3, 4 ranks (in-process) as in
// one process (relative 1e-4), every aggregation mode (hybrid with GATv2's
// own plan), with attention dropout on.
func TestGATv2DistributedEqualsSingle(t *testing.T) {
	epochs := 8
	if testing.Short() {
		epochs = 3
	}
	equalsSingle(t, cora(t), gatv2Config(epochs, 0), "gatv2", []int{2, 3, 4})
	ds := cora(t)
	cfg := gatv2Config(epochs, 1)
	ref := single(t, ds, cfg)
	t.Run("shared/P3/hybrid", func(t *testing.T) {
		sameLossesAt(t, ref, distributed(t, ds, partitionFor(t, ds, "metis", 3), 3, cfg), 3)
	})
	if first, last := ref.Epochs[0].Loss, ref.Epochs[len(ref.Epochs)-1].Loss; !(last < first) {
		t.Errorf("shared weights: loss went from %.4f to %.4f", first, last)
	}
}

// Resuming GATv2 (input and attention dropout on) continues exactly, in
// one process and at P = 2.
func TestGATv2ResumeEqualsUninterrupted(t *testing.T) {
	ds := cora(t)
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprintf("P%d", p), func(t *testing.T) {
			cfg := gatv2Config(0, 0)
			cfg.Model.Dropout = 0.5
			ref, got, refCk, gotCk := trainTwice(t, ds, p, cfg)
			checkResumed(t, ref, got, refCk, gotCk)
		})
	}
}

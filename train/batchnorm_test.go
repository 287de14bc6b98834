package train

import (
	"fmt"
	"math"
	"testing"

	"github.com/supergcn/supergcn/quant"
)

// GCN and SAGE with batch normalisation train distributed as in one
// process: with dropout 0 the per-epoch fp32 loss (batch statistics) at
// P = 2, 3, 4 ranks (in-process) equals P = 1 within 1e-4, every
// aggregation mode; and so do the evaluation losses (running statistics)
// at a learning rate of 1e-5 (within 1e-5). At ordinary rates the evaluation drifts
// apart by ~1e-3: the bias of a layer that batch normalisation follows has
// a gradient of exactly 0 in exact arithmetic, rounding noise in float32
// (different at every rank count, as in torch), which Adam normalises into
// steps of the full learning rate; the training pass cancels the bias, the
// running statistics do not quite.
func TestBatchNormDistributedEqualsSingle(t *testing.T) {
	ds := cora(t)
	epochs := 10
	if testing.Short() {
		epochs = 3
	}
	for _, model := range []string{"gcn", "sage"} {
		for _, lr := range []float64{0.01, 1e-5} {
			cfg := kipfConfig(model, 3, epochs, 0)
			cfg.Model.Norm, cfg.Model.Layers, cfg.LR = "batch", 3, lr
			cfg.Wire[quant.Eval], cfg.Wire[quant.Backward] = quant.Wire{Bits: 32}, quant.Wire{Bits: 32} // fp32 rows in every pass
			ref := single(t, ds, cfg)
			for _, p := range []int{2, 3, 4} {
				method := methodFor(p)
				owner := partitionFor(t, ds, method, p)
				for _, mode := range []string{"hybrid", "pre", "post"} {
					if lr != 0.01 && mode != "hybrid" {
						continue
					}
					t.Run(fmt.Sprintf("%s/lr%g/P%d/%s/%s", model, lr, p, method, mode), func(t *testing.T) {
						c := cfg
						c.AggrMode = mode
						got := distributed(t, ds, owner, p, c)
						sameLossesAt(t, ref, got, p)
						for e := range ref.Epochs {
							a, b := ref.Epochs[e], got.Epochs[e]
							if lr != 0.01 && (math.Abs(a.ValLoss-b.ValLoss) > 1e-5*a.ValLoss || math.Abs(a.TestLoss-b.TestLoss) > 1e-5*a.TestLoss) {
								t.Fatalf("epoch %d: evaluation losses %.8f/%.8f at P=%d, %.8f/%.8f in one process", e+1, b.ValLoss, b.TestLoss, p, a.ValLoss, a.TestLoss)
							}
						}
					})
				}
			}
		}
	}
}

// Resuming a model with batch normalisation (its running statistics in
// the checkpoint) continues exactly, in one process and at P = 2.
func TestBatchNormResumeEqualsUninterrupted(t *testing.T) {
	ds := cora(t)
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprintf("P%d", p), func(t *testing.T) {
			cfg := kipfConfig("gcn", 5, 0, 0.5)
			cfg.Model.Norm = "batch"
			ref, got, refCk, gotCk := trainTwice(t, ds, p, cfg)
			checkResumed(t, ref, got, refCk, gotCk)
		})
	}
}

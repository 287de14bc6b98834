package train

import (
	"fmt"
	"testing"

	"github.com/supergcn/supergcn/quant"
)

// SAGE with max and pool aggregation trains distributed as in one process:
// with dropout 0 the per-epoch fp32 loss at P = 2, 3, 4 ranks (in-process)
// equals P = 1 within 1e-4, every aggregation mode (hybrid ships partial
// maxima), batch normalisation included; and it resumes exactly.
func TestSAGEMaxDistributedEqualsSingle(t *testing.T) {
	ds := cora(t)
	epochs := 8
	if testing.Short() {
		epochs = 3
	}
	for _, c := range []struct {
		model, norm string
		ranks       []int
		modes       []string
	}{
		{"sage-max", "none", []int{2, 3, 4}, []string{"hybrid", "pre", "post"}},
		{"sage-pool", "none", []int{2, 4}, []string{"hybrid"}},
		{"sage-max", "batch", []int{3}, []string{"hybrid"}},
	} {
		cfg := kipfConfig(c.model, 3, epochs, 0)
		cfg.Model.Norm = c.norm
		ref := single(t, ds, cfg)
		if first, last := ref.Epochs[0].Loss, ref.Epochs[len(ref.Epochs)-1].Loss; !(last < first) {
			t.Errorf("%s: loss went from %.4f to %.4f", c.model, first, last)
		}
		for _, p := range c.ranks {
			method := methodFor(p)
			owner := partitionFor(t, ds, method, p)
			for _, mode := range c.modes {
				t.Run(fmt.Sprintf("%s/%s/P%d/%s/%s", c.model, c.norm, p, method, mode), func(t *testing.T) {
					cc := cfg
					cc.AggrMode = mode
					sameLossesAt(t, ref, distributed(t, ds, owner, p, cc), p)
				})
			}
		}
	}
	for _, c := range []struct {
		model string
		p     int
	}{{"sage-max", 1}, {"sage-max", 2}} { // sage-pool's parameters are checkpointed as every layer's
		t.Run(fmt.Sprintf("resume/%s/P%d", c.model, c.p), func(t *testing.T) {
			ref, got, refCk, gotCk := trainTwice(t, ds, c.p, kipfConfig(c.model, 5, 0, 0.5))
			checkResumed(t, ref, got, refCk, gotCk)
		})
	}
}

// SAGE-max learns through an int2 exchange of its partial maxima and
// routed gradients (4 ranks, METIS): within 3 points of fp32 on Cora.
func TestSAGEMaxQuantizedLearns(t *testing.T) {
	ds := cora(t)
	owner := partitionFor(t, ds, "metis", 4)
	cfg := kipfConfig("sage-max", 1, 100, 0.5)
	fp := distributed(t, ds, owner, 4, cfg)
	cfg.Wire[quant.Forward], cfg.Wire[quant.Backward] = quant.Wire{Bits: 2}, quant.Wire{Bits: 2}
	q := distributed(t, ds, owner, 4, cfg)
	t.Logf("SAGE-max P=4 fp32 test %.4f, int2 test %.4f; bytes/epoch fp32 %d, int2 %d",
		fp.Final.TestAcc, q.Final.TestAcc, fp.Epochs[0].CommBytes, q.Epochs[0].CommBytes)
	if q.Final.TestAcc < fp.Final.TestAcc-0.03 || q.Epochs[0].CommBytes*8 > fp.Epochs[0].CommBytes {
		t.Fatalf("int2: test %.4f (fp32 %.4f), %d bytes an epoch (fp32 %d)", q.Final.TestAcc, fp.Final.TestAcc, q.Epochs[0].CommBytes, fp.Epochs[0].CommBytes)
	}
}

package train

import (
	"fmt"
	"math"
	"testing"
)

// GIN, SGC and APPNP train distributed as in one process: with dropout 0
// the per-epoch fp32 loss at P = 2, 3, 4 ranks (in-process) equals P = 1
// within 1e-4 relative, every aggregation mode.
func TestNewModelsDistributedEqualsSingle(t *testing.T) {
	ds := cora(t)
	epochs := 20
	if testing.Short() {
		epochs = 5
	}
	for _, m := range []struct {
		name string
		k    int
		eps  bool
	}{{"gin", 0, true}, {"sgc", 2, false}, {"appnp", 10, false}} {
		cfg := kipfConfig(m.name, 3, epochs, 0)
		cfg.Model.Hyper = map[string]float64{}
		if m.k > 0 {
			cfg.Model.Hyper["k"] = float64(m.k)
		}
		if m.eps {
			cfg.Model.Hyper["train-eps"] = 1
		}
		if m.name == "sgc" {
			cfg.Model.Layers, cfg.Model.Hidden = 1, 0
		}
		ref := single(t, ds, cfg)
		for _, p := range []int{2, 3, 4} {
			method := methodFor(p)
			owner := partitionFor(t, ds, method, p)
			for _, mode := range []string{"hybrid", "pre", "post"} {
				t.Run(fmt.Sprintf("%s/P%d/%s/%s", m.name, p, method, mode), func(t *testing.T) {
					c := cfg
					c.AggrMode = mode
					sameLossesAt(t, ref, distributed(t, ds, owner, p, c), p)
				})
			}
		}
		if first, last := ref.Epochs[0].Loss, ref.Epochs[len(ref.Epochs)-1].Loss; !(last < first) {
			t.Errorf("%s: loss went from %.4f to %.4f", m.name, first, last)
		}
	}
}

// sameLossesAt fails unless every epoch's loss of got (at p ranks) equals
// ref's within 1e-4 relative.
func sameLossesAt(t *testing.T, ref, got *Result, p int) {
	t.Helper()
	for e := range ref.Epochs {
		a, b := ref.Epochs[e].Loss, got.Epochs[e].Loss
		if math.Abs(a-b) > 1e-4*math.Abs(a) {
			t.Fatalf("epoch %d: loss %.8f at P=%d, %.8f in one process", e+1, b, p, a)
		}
	}
}

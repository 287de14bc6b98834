package train

import (
	"fmt"
	"math"
	"testing"
)

// GAT trains to the same losses at P = 2, 3, 4 ranks as in one process
// (relative 1e-4), every aggregation mode, with attention dropout on: its
// masks are a function of the edges' global ids, the same on every rank.
func TestGATDistributedEqualsSingle(t *testing.T) {
	ds := cora(t)
	epochs := 8
	if testing.Short() {
		epochs = 3
	}
	cfg := kipfConfig("gat", 5, epochs, 0)
	cfg.Model.Hidden, cfg.Model.Heads, cfg.Model.AttnDropout = 16, 4, 0.3
	cfg.LR = 0.005
	ref := single(t, ds, cfg)
	for _, p := range []int{2, 3, 4} {
		for _, method := range []string{"metis", "random"} {
			owner := partitionFor(t, ds, method, p)
			for _, mode := range []string{"hybrid", "pre", "post"} {
				t.Run(fmt.Sprintf("P%d/%s/%s", p, method, mode), func(t *testing.T) {
					c := cfg
					c.AggrMode = mode
					got := distributed(t, ds, owner, p, c)
					for e := range ref.Epochs {
						a, b := ref.Epochs[e].Loss, got.Epochs[e].Loss
						if math.Abs(a-b) > 1e-4*math.Abs(a) {
							t.Fatalf("epoch %d: loss %.8f at P=%d, %.8f in one process", e+1, b, p, a)
						}
					}
					if got.Epochs[0].CommBytes <= 0 {
						t.Fatalf("comm_bytes %d", got.Epochs[0].CommBytes)
					}
				})
			}
		}
	}
}

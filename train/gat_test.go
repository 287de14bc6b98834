package train

import "testing"

// GAT trains to the same losses at P = 2, 3, 4 ranks as in one process
// (relative 1e-4), every aggregation mode, with attention dropout on: its
// masks are a function of the edges' global ids, the same on every rank.
func TestGATDistributedEqualsSingle(t *testing.T) {
	epochs := 8
	if testing.Short() {
		epochs = 3
	}
	cfg := kipfConfig("gat", 5, epochs, 0)
	cfg.Model.Hidden, cfg.Model.Heads, cfg.Model.AttnDropout = 16, 4, 0.3
	cfg.LR = 0.005
	equalsSingle(t, cora(t), cfg, "gat", []int{2, 3, 4})
}

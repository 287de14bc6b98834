package train

import (
	"fmt"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/partition"
)

// gcniiConfig is a 16-layer GCNII on Cora (hidden 16) with its
// hyperparameters moved off their defaults.
func gcniiConfig(epochs int, dropout float64) Config {
	cfg := kipfConfig("gcnii", 3, epochs, dropout)
	cfg.Model.Layers = 16
	cfg.Model.Hyper = map[string]float64{"theta": 0.8, "conv-decay": 0.005, "alpha": 0.2}
	return cfg
}

// GCNII trains distributed as in one process: with dropout 0 the
// per-epoch fp32 loss at P = 2, 3, 4 ranks (in-process) equals P = 1
// within 1e-4 relative, every aggregation mode.
func TestGCNIIDistributedEqualsSingle(t *testing.T) {
	ds := cora(t)
	epochs := 10
	if testing.Short() {
		epochs = 3
	}
	cfg := gcniiConfig(epochs, 0)
	ref := single(t, ds, cfg)
	for _, p := range []int{2, 3, 4} {
		method := methodFor(p)
		owner := partitionFor(t, ds, method, p)
		for _, mode := range []string{"hybrid", "pre", "post"} {
			t.Run(fmt.Sprintf("P%d/%s/%s", p, method, mode), func(t *testing.T) {
				c := cfg
				c.AggrMode = mode
				sameLossesAt(t, ref, distributed(t, ds, owner, p, c), p)
			})
		}
	}
	if first, last := ref.Epochs[0].Loss, ref.Epochs[len(ref.Epochs)-1].Loss; !(last < first) {
		t.Errorf("loss went from %.4f to %.4f", first, last)
	}
}

// Resuming GCNII (dropout on, its hyperparameters in the checkpoint)
// continues exactly, in one process and at P = 2; a resume with other
// hyperparameters is refused, naming them.
func TestGCNIIResumeEqualsUninterrupted(t *testing.T) {
	ds := cora(t)
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprintf("P%d", p), func(t *testing.T) {
			cfg := gcniiConfig(0, 0.5)
			cfg.Model.Layers = 8
			ref, got, refCk, gotCk := trainTwice(t, ds, p, cfg)
			checkResumed(t, ref, got, refCk, gotCk)
			if v := gotCk.Model.Hyper["theta"]; v != 0.8 {
				t.Fatalf("checkpoint's theta %g", v)
			}
		})
	}
	dir := t.TempDir()
	cfg := gcniiConfig(2, 0.5)
	cfg.Model.Layers = 4
	cfg.SavePath = dir + "/a.ckpt"
	single(t, ds, cfg)
	cfg.Model.Hyper = map[string]float64{"theta": 0.9, "conv-decay": 0.005, "alpha": 0.2}
	cfg.SavePath, cfg.ResumePath, cfg.Epochs = "", dir+"/a.ckpt", 4
	_, err := Run(cfg, partition.Split(ds, make([]int32, ds.NumNodes()), 0, 1), comm.Single())
	if err == nil || !strings.Contains(err.Error(), "nn.Config.Hyper map[alpha:0.2 conv-decay:0.005 theta:0.8], this run map[alpha:0.2 conv-decay:0.005 theta:0.9]") {
		t.Fatalf("resume with another theta: %v", err)
	}
}

package train

import (
	"path/filepath"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/quant"
)

// TestConcurrentSmall trains a small generated graph on 3 in-process ranks
// with every concurrent part on at once (the aggregation thread pool,
// int2 quantisation threads, the asynchronous exchange, label propagation,
// the all-reduces), saves every epoch and resumes: small enough to run
// under the race detector in make test, and checked against a straight
// run so it cannot pass vacuously.
func TestConcurrentSmall(t *testing.T) {
	spec, err := graph.ParseGenSpec("nodes=1500,degree=8,classes=4,feat=16,seed=3")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := graph.Generate(spec)
	if err != nil {
		t.Fatal(err)
	}
	const p = 3
	owner := partition.Random(ds.NumNodes(), p, 5)
	cfg := kipfConfig("sage", 2, 6, 0.5)
	cfg.Threads, cfg.LabelProp = 3, 0.3
	cfg.Wire[quant.Forward], cfg.Wire[quant.Backward] = quant.Wire{Bits: 2}, quant.Wire{Bits: 4}
	runAll := func(c Config) *Result {
		results := make([]*Result, p)
		if err := comm.RunGroupNodes(p, 1, func(cm comm.Comm) error {
			r, err := Run(c, partition.Split(ds, owner, cm.Rank(), p), cm)
			results[cm.Rank()] = r
			return err
		}); err != nil {
			t.Fatal(err)
		}
		for r := 1; r < p; r++ {
			if results[r].Final.TestAcc != results[0].Final.TestAcc {
				t.Fatalf("rank %d ends with test accuracy %v, rank 0 %v", r, results[r].Final.TestAcc, results[0].Final.TestAcc)
			}
		}
		return results[0]
	}
	ref := runAll(cfg)
	ckpt := filepath.Join(t.TempDir(), "m.ckpt")
	c := cfg
	c.Epochs, c.SavePath, c.SaveEvery = 3, ckpt, 1
	runAll(c)
	c = cfg
	c.ResumePath = ckpt
	got := runAll(c)
	t.Logf("final test accuracy %.4f, %d resumed epochs", got.Final.TestAcc, len(got.Epochs))
	for i, m := range got.Epochs {
		if want := ref.Epochs[3+i].Loss; m.Loss != want {
			t.Fatalf("resumed epoch %d: loss %v, straight run %v", m.Epoch, m.Loss, want)
		}
	}
}

package train

import (
	"math"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/quant"
)

// TestEvalCacheOnEqualsOff: training with the evaluation aggregate kept
// (EvalCacheOn) gives every epoch's loss, accuracies and validation and
// test losses bit-identical to training without it (EvalCacheOff), for
// GCN and SAGE with LayerNorm whose first layer aggregates the features
// (8 of them, 16 wide), at one rank and at three with fp32 evaluation
// rows; with an int2 evaluation exchange at three ranks the cached
// aggregate's exchange is exact fp32, so the training losses stay
// identical and the evaluation differs from the int2 one only within the
// codec's error.
func TestEvalCacheOnEqualsOff(t *testing.T) {
	ds := narrowCora(t, 8)
	for _, model := range []string{"gcn", "sage"} {
		for _, tc := range []struct {
			name     string
			p        int
			evalBits int
		}{{"P1", 1, 0}, {"P3", 3, 0}, {"P3/eval2", 3, 2}} {
			t.Run(model+"/"+tc.name, func(t *testing.T) {
				cfg := kipfConfig(model, 3, 8, 0.5)
				if model == "sage" {
					cfg.Model.Norm = "layer"
				}
				cfg.Wire[quant.Eval] = quant.Wire{Bits: tc.evalBits}
				owner := make([]int32, ds.NumNodes())
				if tc.p > 1 {
					owner = partitionFor(t, ds, "random", tc.p)
				}
				cfg.EvalCache = EvalCacheOn
				on := distributed(t, ds, owner, tc.p, cfg)
				cfg.EvalCache = EvalCacheOff
				off := distributed(t, ds, owner, tc.p, cfg)
				for i, a := range on.Epochs {
					b := off.Epochs[i]
					if a.Loss != b.Loss {
						t.Fatalf("epoch %d: training loss %v with the evaluation aggregate, %v without", a.Epoch, a.Loss, b.Loss)
					}
					if tc.evalBits == 0 {
						if a.TrainAcc != b.TrainAcc || a.ValAcc != b.ValAcc || a.TestAcc != b.TestAcc || a.ValLoss != b.ValLoss || a.TestLoss != b.TestLoss {
							t.Fatalf("epoch %d: with the evaluation aggregate train %v val %v (loss %v) test %v (loss %v), without train %v val %v (loss %v) test %v (loss %v)",
								a.Epoch, a.TrainAcc, a.ValAcc, a.ValLoss, a.TestAcc, a.TestLoss, b.TrainAcc, b.ValAcc, b.ValLoss, b.TestAcc, b.TestLoss)
						}
						continue
					}
					if math.Abs(a.ValAcc-b.ValAcc) > 0.03 || math.Abs(a.ValLoss-b.ValLoss) > 0.05*b.ValLoss {
						t.Fatalf("epoch %d, int2 evaluation: val %v (loss %v) with the exact aggregate, %v (loss %v) without", a.Epoch, a.ValAcc, a.ValLoss, b.ValAcc, b.ValLoss)
					}
				}
				if tc.p > 1 {
					last, lastOff := on.Epochs[len(on.Epochs)-1], off.Epochs[len(off.Epochs)-1]
					t.Logf("eval bytes of an epoch: %d with the aggregate kept, %d without", last.EvalBytes, lastOff.EvalBytes)
					if !(last.EvalBytes < lastOff.EvalBytes) {
						t.Fatalf("eval bytes %d with the aggregate kept, %d without: the kept one exchanges a layer less", last.EvalBytes, lastOff.EvalBytes)
					}
				}
			})
		}
	}
}

// TestEvalCacheWhere: the trainer keeps the evaluation aggregate only for
// a first layer that aggregates the features, only without label
// propagation and only when EvalCache allows it; the memory estimate
// counts it exactly then, as rows × features floats.
func TestEvalCacheWhere(t *testing.T) {
	narrow, wide := narrowCora(t, 8), cora(t)
	cases := []struct {
		name      string
		ds        *graph.Dataset
		model     string
		cache     string
		labelProp float64
		want      bool
	}{
		{"gcn", narrow, "gcn", "", 0, true},
		{"sage", narrow, "sage", EvalCacheAuto, 0, true},
		{"gin", narrow, "gin", EvalCacheOn, 0, true},
		{"off", narrow, "gcn", EvalCacheOff, 0, false},
		{"label-prop", narrow, "gcn", EvalCacheOn, 0.5, false},
		{"transform-first", wide, "gcn", EvalCacheOn, 0, false}, // 1433 features into 16
		{"gat", narrow, "gat", EvalCacheOn, 0, false},
		{"gcnii", narrow, "gcnii", EvalCacheOn, 0, false},
		{"sage-max", narrow, "sage-max", EvalCacheOn, 0, true}, // the exact maximum of the features
		{"gatv2", narrow, "gatv2", EvalCacheOn, 0, false},
		{"appnp", narrow, "appnp", EvalCacheOn, 0, false}, // its MLP transforms first
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := kipfConfig(tc.model, 1, 1, 0.5)
			cfg.EvalCache, cfg.LabelProp = tc.cache, tc.labelProp
			if tc.model == "gcnii" {
				cfg.Model.Layers = 4
			}
			s := partition.Split(tc.ds, make([]int32, tc.ds.NumNodes()), 0, 1)
			tr, err := newTrainer(cfg, s, comm.Single())
			if err != nil {
				t.Fatal(err)
			}
			if tr.evalCache != tc.want {
				t.Fatalf("evaluation aggregate kept: %v, want %v", tr.evalCache, tc.want)
			}
			mc := tr.model.Config()
			lp := tc.labelProp > 0
			with, _ := Estimate(mc, Buffers{LabelProp: lp, EvalCache: true}, s)
			without, _ := Estimate(mc, Buffers{LabelProp: lp}, s)
			want := int64(0)
			if EvalCacheApplies(mc, lp) {
				want = 4 * int64(tc.ds.NumNodes()) * int64(tc.ds.FeatDim)
			}
			if with-without != want || EvalCacheBytes(mc, lp, s) != want {
				t.Fatalf("the estimate counts %d bytes for the evaluation aggregate (EvalCacheBytes %d), want %d", with-without, EvalCacheBytes(mc, lp, s), want)
			}
		})
	}
}

// TestEvalCacheMemoryLimit: with the memory this process may use between
// the estimates without and with the evaluation aggregate, EvalCacheAuto
// trains without it (the same results) and EvalCacheOn is refused, naming
// EvalCache and what EvalCacheOff needs.
func TestEvalCacheMemoryLimit(t *testing.T) {
	ds := narrowCora(t, 8)
	cfg := kipfConfig("gcn", 1, 3, 0.5)
	cfg.Model.Hidden = 64
	s := partition.Split(ds, make([]int32, ds.NumNodes()), 0, 1)
	mc := cfg.Model
	mc.In, mc.Out, mc.Seed = ds.FeatDim, ds.NumClasses, cfg.Seed
	with, _ := Estimate(mc, Buffers{EvalCache: true}, s)
	cache := EvalCacheBytes(mc, false, s)
	if cache == 0 {
		t.Fatal("a 64-wide first layer on 8 features keeps no evaluation aggregate")
	}
	ref := single(t, ds, cfg)
	old := debug.SetMemoryLimit(with - cache/2)
	defer debug.SetMemoryLimit(old)
	tr, err := newTrainer(cfg, partition.Split(ds, make([]int32, ds.NumNodes()), 0, 1), comm.Single())
	if err != nil {
		t.Fatal(err)
	}
	if tr.evalCache {
		t.Fatal("auto kept the evaluation aggregate beyond the memory limit")
	}
	got, err := tr.run()
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range got.Epochs {
		if b := ref.Epochs[i]; a.Loss != b.Loss || a.ValAcc != b.ValAcc || a.ValLoss != b.ValLoss || a.TestLoss != b.TestLoss {
			t.Fatalf("epoch %d without the aggregate: %+v, with it %+v", a.Epoch, a, b)
		}
	}
	cfg.EvalCache = EvalCacheOn
	_, err = Run(cfg, partition.Split(ds, make([]int32, ds.NumNodes()), 0, 1), comm.Single())
	if err == nil || !strings.HasPrefix(err.Error(), "train.Config.EvalCache: on: training needs ~") || !strings.Contains(err.Error(), "; off needs ~") {
		t.Fatalf("EvalCacheOn beyond the limit: err = %v", err)
	}
}

// TestEvalCacheAutoAgreed: at two ranks of unequal size under a memory
// limit that only the larger one's aggregate exceeds, neither rank keeps
// it (a rank that kept it would skip the evaluation exchanges the other
// makes), and the results are those of EvalCacheOff.
func TestEvalCacheAutoAgreed(t *testing.T) {
	ds := narrowCora(t, 8)
	cfg := kipfConfig("gcn", 1, 3, 0.5)
	cfg.Model.Hidden = 64
	owner := make([]int32, ds.NumNodes())
	for v := range owner {
		if v%4 == 3 {
			owner[v] = 1
		}
	}
	shards := func() []*partition.Shard {
		return []*partition.Shard{partition.Split(ds, owner, 0, 2), partition.Split(ds, owner, 1, 2)}
	}
	mc := cfg.Model
	mc.In, mc.Out, mc.Seed = ds.FeatDim, ds.NumClasses, cfg.Seed
	var with [2]int64
	s := shards()
	for r := range with {
		with[r], _ = Estimate(mc, Buffers{EvalCache: true}, s[r])
	}
	limit := with[0] - EvalCacheBytes(mc, false, s[0])/2
	if !(with[1] < limit) {
		t.Fatalf("estimates with the aggregate %d and %d: the smaller rank does not fit under %d", with[0], with[1], limit)
	}
	cfg.EvalCache = EvalCacheOff
	ref := distributed(t, ds, owner, 2, cfg)
	cfg.EvalCache = EvalCacheAuto
	old := debug.SetMemoryLimit(limit)
	defer debug.SetMemoryLimit(old)
	s = shards()
	var kept [2]bool
	results := make([]*Result, 2)
	err := comm.RunGroupNodes(2, 1, func(c comm.Comm) error {
		tr, err := newTrainer(cfg, s[c.Rank()], c)
		if err != nil {
			return err
		}
		kept[c.Rank()] = tr.evalCache
		results[c.Rank()], err = tr.run()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if kept[0] || kept[1] {
		t.Fatalf("evaluation aggregate kept on ranks 0, 1: %v", kept)
	}
	for i, a := range results[0].Epochs {
		if b := ref.Epochs[i]; a.Loss != b.Loss || a.ValAcc != b.ValAcc || a.ValLoss != b.ValLoss || a.TestLoss != b.TestLoss || a.EvalBytes != b.EvalBytes {
			t.Fatalf("epoch %d under auto: %+v, off: %+v", a.Epoch, a, b)
		}
	}
}

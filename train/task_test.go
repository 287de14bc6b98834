package train

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/quant"
	"github.com/supergcn/supergcn/task"
)

// taskData is a generated graph of 2000 nodes (8 classes, 32 features)
// with a synthetic target table of the task: 24 binary tasks with NaN
// entries (multilabel) or 3 float targets (regression).
func taskData(t testing.TB, kind string) (*graph.Dataset, *task.Table) {
	t.Helper()
	s, err := graph.ParseGenSpec("nodes=2000,degree=8,classes=8,feat=32,seed=3,train=0.5,valid=0.25,test=0.25")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := graph.Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	cols := map[string]int{"multilabel": 24, "regression": 3}[kind]
	y, err := task.Synthesize(ds, kind, cols, 5)
	if err != nil {
		t.Fatal(err)
	}
	return ds, y
}

func taskConfig(kind string, y *task.Table, epochs int, dropout float64) Config {
	cfg := kipfConfig("gcn", 3, epochs, dropout)
	cfg.Model.Hidden, cfg.WeightDecay = 32, 0
	cfg.Task, cfg.Targets = kind, y
	return cfg
}

// Multilabel and regression train distributed as in one process: with
// dropout 0, every epoch's fp32 loss at P = 2, 3, 4 in-process ranks equals
// P = 1 within 1e-4 relative, and so do the validation metrics (ROC-AUC
// gathered exactly on rank 0; RMSE, MAE, R² and micro-F1 from sums). Both
// tasks learn.
func TestTasksDistributedEqualsSingle(t *testing.T) {
	for _, kind := range []string{"multilabel", "regression"} {
		ds, y := taskData(t, kind)
		cfg := taskConfig(kind, y, 30, 0)
		ref := single(t, ds, cfg)
		first, last := ref.Epochs[0], ref.Epochs[len(ref.Epochs)-1]
		if !(last.Loss < 0.9*first.Loss) || last.Metric != map[string]string{"multilabel": "rocauc", "regression": "rmse"}[kind] {
			t.Fatalf("%s: loss %.4f → %.4f, metric %q", kind, first.Loss, last.Loss, last.Metric)
		}
		if kind == "multilabel" && !(last.ValAcc > 0.65 && last.Extra["val_f1"] > 0.2) {
			t.Fatalf("multilabel: val ROC-AUC %.4f, micro-F1 %.4f after 30 epochs", last.ValAcc, last.Extra["val_f1"])
		}
		if kind == "regression" && !(last.ValAcc < first.ValAcc && last.Extra["val_r2"] > 0.3) {
			t.Fatalf("regression: val RMSE %.4f → %.4f, R² %.4f", first.ValAcc, last.ValAcc, last.Extra["val_r2"])
		}
		for _, p := range []int{2, 3, 4} {
			t.Run(fmt.Sprintf("%s/P%d", kind, p), func(t *testing.T) {
				got := distributed(t, ds, partition.Random(ds.NumNodes(), p, 7), p, cfg)
				sameLossesAt(t, ref, got, p)
				for e, m := range got.Epochs {
					r := ref.Epochs[e]
					if math.Abs(m.ValAcc-r.ValAcc) > 1e-4 || math.Abs(m.ValLoss-r.ValLoss) > 1e-4*r.ValLoss {
						t.Fatalf("epoch %d: val %s %.6f (loss %.6f) at P=%d, %.6f (%.6f) in one process", e+1, m.Metric, m.ValAcc, m.ValLoss, p, r.ValAcc, r.ValLoss)
					}
					for k, v := range r.Extra {
						if math.Abs(m.Extra[k]-v) > 1e-4 {
							t.Fatalf("epoch %d: %s %.6f at P=%d, %.6f in one process", e+1, k, m.Extra[k], p, v)
						}
					}
				}
			})
		}
	}
}

// A multilabel or regression run resumed from its checkpoint continues
// exactly (dropout 0.5), in one process and at P = 2; the best epoch of
// regression is the lowest validation RMSE.
func TestTasksResumeEqualsUninterrupted(t *testing.T) {
	for _, kind := range []string{"multilabel", "regression"} {
		ds, y := taskData(t, kind)
		for _, p := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/P%d", kind, p), func(t *testing.T) {
				ref, got, refCk, gotCk := trainTwice(t, ds, p, taskConfig(kind, y, 0, 0.5))
				checkResumed(t, ref, got, refCk, gotCk)
				if refCk.Task != kind {
					t.Fatalf("checkpoint task %q, want %s", refCk.Task, kind)
				}
				best := ref.Epochs[0].ValAcc
				for _, m := range ref.Epochs {
					if (kind == "regression" && m.ValAcc < best) || (kind == "multilabel" && m.ValAcc > best) {
						best = m.ValAcc
					}
				}
				if ref.Final.BestValAcc != best {
					t.Fatalf("best validation %s %.6f, the epochs' best %.6f", ref.Epochs[0].Metric, ref.Final.BestValAcc, best)
				}
			})
		}
	}
}

// A checkpoint of another task is refused on resume, naming the task
// field; a target table of the wrong size and label propagation with a
// table task are refused before training.
func TestTaskRefusals(t *testing.T) {
	ds, y := taskData(t, "multilabel")
	owner := make([]int32, ds.NumNodes())
	path := filepath.Join(t.TempDir(), "node.ckpt")
	cfg := kipfConfig("gcn", 3, 2, 0)
	cfg.SavePath = path
	single(t, ds, cfg)
	for _, tc := range []struct {
		name string
		cfg  func(c *Config)
		want string
	}{
		{"resume", func(c *Config) { c.ResumePath, c.Epochs = path, 4 }, "train.Config.Task node, this run multilabel"},
		{"rows", func(c *Config) { c.Targets = &task.Table{Path: "y.npy", Rows: 7, Cols: 2, Y: make([]float32, 14)} }, "y.npy: 7 rows of targets, the graph has 2000 nodes"},
		{"labelprop", func(c *Config) { c.LabelProp = 0.5 }, "train.Config.LabelProp"},
		{"none", func(c *Config) { c.Targets = nil }, "task multilabel trains on"},
	} {
		c := taskConfig("multilabel", y, 2, 0)
		c.Model.Hidden = 16
		tc.cfg(&c)
		_, err := Run(c, partition.Split(ds, owner, 0, 1), comm.Single())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// linkCora is Cora with an 85/5/10 random edge split (the held-out edges
// removed from the graph) and the link task's configuration: GCN 2
// layers of 64, dot decoder.
func linkCora(t *testing.T, epochs int, dropout float64) (*graph.Dataset, Config) {
	t.Helper()
	ds := *cora(t)
	es, err := graph.SplitEdges(&ds, "random:0.85,0.05,0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	cfg := kipfConfig("gcn", 3, epochs, dropout)
	cfg.Model.Hidden, cfg.WeightDecay = 64, 0
	cfg.Task = "link"
	cfg.Targets = &task.Table{Path: "edge split", Rows: ds.NumNodes(), Edges: es, Seed: 3}
	return &ds, cfg
}

// Link prediction on Cora (85/5/10 edges, GCN 2 layers, dot decoder)
// reaches a test ROC-AUC of 0.90 in 100 epochs and resumes exactly; at
// P = 2, 3, 4 in-process ranks (each pair scored by the owner of its first
// endpoint, the other endpoint's row fetched from its owner) every epoch's
// loss and the validation ROC-AUC equal one process's within 1e-4.
func TestLinkCora(t *testing.T) {
	ds, cfg := linkCora(t, 100, 0)
	res := single(t, ds, cfg)
	last := res.Epochs[len(res.Epochs)-1]
	t.Logf("Cora link: test ROC-AUC %.4f, Hits@50 %.4f, best val %.4f at epoch %d", last.TestAcc, last.Extra["test_hits50"], res.Final.BestValAcc, res.Final.BestEpoch)
	if last.Metric != "rocauc" || !(last.TestAcc >= 0.90) || !(last.Extra["test_hits50"] > 0.3) {
		t.Fatalf("test ROC-AUC %.4f, Hits@50 %.4f after 100 epochs", last.TestAcc, last.Extra["test_hits50"])
	}
	ds, cfg = linkCora(t, 20, 0)
	ref := single(t, ds, cfg)
	for _, p := range []int{2, 3, 4} {
		t.Run(fmt.Sprintf("P%d", p), func(t *testing.T) {
			got := distributed(t, ds, partition.Random(ds.NumNodes(), p, 7), p, cfg)
			sameLossesAt(t, ref, got, p)
			for e, m := range got.Epochs {
				if r := ref.Epochs[e]; math.Abs(m.ValAcc-r.ValAcc) > 1e-4 || math.Abs(m.Extra["val_hits50"]-r.Extra["val_hits50"]) > 1e-2 {
					t.Fatalf("epoch %d: val ROC-AUC %.6f Hits@50 %.4f at P=%d, %.6f %.4f in one process", e+1, m.ValAcc, m.Extra["val_hits50"], p, r.ValAcc, r.Extra["val_hits50"])
				}
			}
		})
	}
	ds, cfg = linkCora(t, 0, 0.5)
	for _, p := range []int{1, 2} {
		ref, got, refCk, gotCk := trainTwice(t, ds, p, cfg)
		checkResumed(t, ref, got, refCk, gotCk)
	}
}

// The link task's pair rows go through the exchange's codecs: Cora link at
// P = 3 (one rank a node) with int8 and int2 rows (boundary and pair rows,
// training, gradients and evaluation) trains with losses close to one
// fp32 process's; the pair rows' bytes are exactly the codec's size of
// the fp32 run's rows (the same pairs move), and a second run repeats the
// first bit for bit (the rounding is keyed by the seed, the epoch and the
// ranks); at P = 2 with int2 rows a resumed run continues exactly.
func TestLinkQuantisedPairs(t *testing.T) {
	ds, cfg := linkCora(t, 20, 0)
	ref := single(t, ds, cfg)
	owner := partition.Random(ds.NumNodes(), 3, 7)
	f32 := distributed(t, ds, owner, 3, cfg)
	const w = 64
	for _, tc := range []struct {
		bits int
		tol  float64
	}{{8, 0.01}, {2, 0.05}} {
		t.Run(fmt.Sprintf("int%d", tc.bits), func(t *testing.T) {
			c := cfg
			c.Wire = quant.Wires{quant.Forward: {Bits: tc.bits}}
			got := distributed(t, ds, owner, 3, c)
			again := distributed(t, ds, owner, 3, c)
			rowBytes := int64(w*tc.bits/8 + 8) // int8/int2 values, fp32 zero point and scale
			for e, m := range got.Epochs {
				r, f := ref.Epochs[e], f32.Epochs[e]
				if math.Abs(m.Loss-r.Loss) > tc.tol*r.Loss || math.Abs(m.ValAcc-r.ValAcc) > tc.tol {
					t.Fatalf("epoch %d: loss %.5f val ROC-AUC %.4f with int%d rows, %.5f %.4f in fp32", e+1, m.Loss, m.ValAcc, tc.bits, r.Loss, r.ValAcc)
				}
				if m.Loss != again.Epochs[e].Loss || m.ValAcc != again.Epochs[e].ValAcc {
					t.Fatalf("epoch %d: loss %.8f, then %.8f in the same run", e+1, m.Loss, again.Epochs[e].Loss)
				}
				if f.PairBytes == 0 || m.PairBytes*4*w != f.PairBytes*rowBytes || m.EvalPairBytes*4*w != f.EvalPairBytes*rowBytes {
					t.Fatalf("epoch %d: pair bytes %d (eval %d) with int%d, %d (%d) in fp32", e+1, m.PairBytes, m.EvalPairBytes, tc.bits, f.PairBytes, f.EvalPairBytes)
				}
			}
			if !(got.Epochs[19].Loss < 0.9*got.Epochs[0].Loss) {
				t.Fatalf("int%d: loss %.5f → %.5f in 20 epochs", tc.bits, got.Epochs[0].Loss, got.Epochs[19].Loss)
			}
			t.Logf("int%d: last loss %.5f (fp32 %.5f), val ROC-AUC %.4f (%.4f)", tc.bits, got.Epochs[19].Loss, ref.Epochs[19].Loss, got.Epochs[19].ValAcc, ref.Epochs[19].ValAcc)
		})
	}
	// Resumed with int2 rows, the run continues exactly: every block's
	// rounding is keyed by the epoch, not by what ran before.
	ds, cfg = linkCora(t, 0, 0.5)
	cfg.Wire = quant.Wires{quant.Forward: {Bits: 2}}
	ref2, got2, refCk, gotCk := trainTwice(t, ds, 2, cfg)
	checkResumed(t, ref2, got2, refCk, gotCk)
}

// task.PairVolumes counts what the link task moves: at P = 3 the first
// epoch's pair bytes are its training list's rows forward and their
// gradients back, the evaluation's its lists' rows times their fetches
// (fp32, 4 bytes a value of the 64-wide embedding).
func TestPairVolumesMatchRun(t *testing.T) {
	ds, cfg := linkCora(t, 1, 0)
	owner := partition.Random(ds.NumNodes(), 3, 7)
	got := distributed(t, ds, owner, 3, cfg)
	v, err := task.PairVolumes(owner, 3, cfg.Targets.Edges, cfg.Targets.NegRatio, cfg.Targets.Seed)
	if err != nil {
		t.Fatal(err)
	}
	sum := func(l task.PairList) (s int64) {
		for _, m := range l.Msgs {
			s += m.Rows
		}
		return s
	}
	train, eval := 2*sum(v.Train), int64(0)
	for _, l := range v.Eval {
		eval += int64(l.Fetches) * sum(l)
	}
	if m := got.Epochs[0]; m.PairBytes != 4*64*train || m.EvalPairBytes != 4*64*eval {
		t.Fatalf("pair bytes %d, evaluation %d; the volume counts %d and %d rows", m.PairBytes, m.EvalPairBytes, train, eval)
	}
}

// Config.Outputs of a multilabel or regression run evaluate the best
// validation model with the task's metric (the run's best validation
// value) and predictions of the task's kind: N × T probabilities, or
// values; link refuses per-node predictions.
func TestTaskOutputs(t *testing.T) {
	for _, kind := range []string{"multilabel", "regression"} {
		ds, y := taskData(t, kind)
		cfg := taskConfig(kind, y, 8, 0)
		cfg.Outputs = EvalOutputs{Predictions: true}
		res := single(t, ds, cfg)
		o := res.Outputs
		if o == nil || o.Metric != res.Epochs[0].Metric || math.Abs(o.ValAcc-res.Final.BestValAcc) > 1e-9 {
			t.Fatalf("%s: outputs %+v, best validation %.6f", kind, o, res.Final.BestValAcc)
		}
		if p := o.Predictions; p.Rows != ds.NumNodes() || p.Cols != y.Cols {
			t.Fatalf("%s: predictions %d × %d, want %d × %d", kind, p.Rows, p.Cols, ds.NumNodes(), y.Cols)
		}
		inUnit := !slices.ContainsFunc(o.Predictions.Data, func(x float32) bool { return !(x >= 0 && x <= 1) })
		if inUnit != (kind == "multilabel") {
			t.Fatalf("%s: predictions all in [0, 1]: %v", kind, inUnit)
		}
	}
	ds, cfg := linkCora(t, 1, 0)
	cfg.Outputs = EvalOutputs{Predictions: true}
	owner := make([]int32, ds.NumNodes())
	if _, err := Run(cfg, partition.Split(ds, owner, 0, 1), comm.Single()); err == nil || !strings.Contains(err.Error(), "no per-node predictions") {
		t.Fatalf("link predictions: %v", err)
	}
}

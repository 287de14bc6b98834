package train

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/testdataset"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/partition/metis"
	"github.com/supergcn/supergcn/quant"
)

var (
	coraOnce sync.Once
	coraDS   *graph.Dataset
	coraErr  error
)

// cora loads the shared Cora dataset once, row-normalised as Kipf & Welling.
func cora(t testing.TB) *graph.Dataset {
	t.Helper()
	dir := testdataset.Dataset(t, "cora")
	coraOnce.Do(func() {
		coraDS, coraErr = graph.Load(dir, graph.LoadOptions{})
		if coraErr == nil {
			coraDS.Graph = graph.Symmetrize(graph.Dedup(graph.RemoveSelfLoops(coraDS.Graph)))
			graph.RowNormalize(graph.DenseData(coraDS.Features), coraDS.FeatDim)
		}
	})
	if coraErr != nil {
		t.Fatal(coraErr)
	}
	return coraDS
}

func kipfConfig(model string, seed uint64, epochs int, dropout float64) Config {
	return Config{
		Model:       nn.Config{Model: model, Layers: 2, Hidden: 16, Dropout: dropout, Norm: "none", Seed: seed},
		LR:          0.01,
		WeightDecay: 5e-4,
		Epochs:      epochs,
		Seed:        seed,
		Threads:     2,
		AggrMode:    "hybrid",
		Wire:        quant.Wires{quant.Forward: {Bits: 32}},
	}
}

func single(t testing.TB, ds *graph.Dataset, cfg Config) *Result {
	t.Helper()
	owner := make([]int32, ds.NumNodes())
	res, err := Run(cfg, partition.Split(ds, owner, 0, 1), comm.Single())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// distributed trains on p in-process ranks (goroutines, one an emulated
// node, so the codecs of --bits apply between them)
// and returns rank 0's result.
func distributed(t testing.TB, ds *graph.Dataset, owner []int32, p int, cfg Config) *Result {
	t.Helper()
	results := make([]*Result, p)
	err := comm.RunGroupNodes(p, 1, func(c comm.Comm) error {
		r, err := Run(cfg, partition.Split(ds, owner, c.Rank(), p), c)
		results[c.Rank()] = r
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return results[0]
}

func TestCoraGCNLearns(t *testing.T) {
	ds := cora(t)
	res := single(t, ds, kipfConfig("gcn", 1, 200, 0.5))
	t.Logf("Cora GCN seed 1: best val %.4f, test at best val %.4f, last test %.4f",
		res.Final.BestValAcc, res.Final.TestAcc, res.Final.LastTest)
	if res.Final.LastTest < 0.78 {
		t.Fatalf("Cora GCN test accuracy %.4f < 0.78 (Kipf & Welling: 0.815)", res.Final.LastTest)
	}
	first, last := res.Epochs[0].Loss, res.Epochs[len(res.Epochs)-1].Loss
	if !(last < first/2) {
		t.Fatalf("loss went from %.4f to %.4f", first, last)
	}
}

// Distributed training is the same computation: with dropout 0 the
// per-epoch loss at P ranks equals the single-process loss (relative 1e-4),
// for GCN and SAGE, METIS and random partitions, every aggregation mode.
func TestDistributedEqualsSingle(t *testing.T) {
	ds := cora(t)
	epochs := 50
	if testing.Short() {
		epochs = 10
	}
	for _, model := range []string{"gcn", "sage"} {
		equalsSingle(t, ds, kipfConfig(model, 3, epochs, 0), model, []int{2, 4, 8})
	}
}

// equalsSingle trains cfg at every P of ps, METIS and random partitions,
// every aggregation mode, and checks every epoch's loss against one
// process (relative 1e-4).
func equalsSingle(t *testing.T, ds *graph.Dataset, cfg Config, name string, ps []int) {
	t.Helper()
	ref := single(t, ds, cfg)
	for _, p := range ps {
		for _, method := range []string{"metis", "random"} {
			owner := partitionFor(t, ds, method, p)
			for _, mode := range []string{"hybrid", "pre", "post"} {
				t.Run(fmt.Sprintf("%s/P%d/%s/%s", name, p, method, mode), func(t *testing.T) {
					c := cfg
					c.AggrMode = mode
					got := distributed(t, ds, owner, p, c)
					sameLossesAt(t, ref, got, p)
					if got.Epochs[0].Ranks != p || got.Epochs[0].CommBytes <= 0 {
						t.Fatalf("metrics: ranks %d, comm_bytes %d", got.Epochs[0].Ranks, got.Epochs[0].CommBytes)
					}
				})
			}
		}
	}
}

// methodFor is the partition the distributed-equals-single tests use at p
// ranks: METIS parts, random ones at 3 (a partition with no locality).
func methodFor(p int) string {
	if p == 3 {
		return "random"
	}
	return "metis"
}

func partitionFor(t testing.TB, ds *graph.Dataset, method string, p int) []int32 {
	t.Helper()
	if method == "random" {
		return partition.Random(ds.NumNodes(), p, 7)
	}
	owner, err := metis.Metis(ds.Graph, p, metis.Options{Weights: "degree+train", TrainMask: ds.SplitMask(), Seed: 1})
	if err != nil && !cgoEnabled {
		t.Skipf("METIS needs cgo: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return owner
}

// int2 exchange still learns, and sends ≥ 12× fewer bytes than fp32.
func TestQuantizedExchangeLearns(t *testing.T) {
	ds := cora(t)
	owner := partitionFor(t, ds, "metis", 4)
	cfg := kipfConfig("gcn", 1, 100, 0.5)
	fp := distributed(t, ds, owner, 4, cfg)
	cfg.Wire[quant.Forward], cfg.Wire[quant.Backward] = quant.Wire{Bits: 2}, quant.Wire{Bits: 2}
	q := distributed(t, ds, owner, 4, cfg)
	t.Logf("P=4 fp32 test %.4f, int2 test %.4f; bytes/epoch fp32 %d, int2 %d (data %d + params %d)",
		fp.Final.TestAcc, q.Final.TestAcc, fp.Epochs[0].CommBytes, q.Epochs[0].CommBytes, q.Epochs[0].CommDataBytes, q.Epochs[0].CommParamBytes)
	if q.Final.TestAcc < 0.70 {
		t.Fatalf("int2 training reached only %.4f test accuracy", q.Final.TestAcc)
	}
	if q.Epochs[0].CommDataBytes+q.Epochs[0].CommParamBytes != q.Epochs[0].CommBytes || q.Epochs[0].CommParamBytes == 0 {
		t.Fatalf("bytes do not add up: %+v", q.Epochs[0])
	}
}

func TestLabelPropTrains(t *testing.T) {
	ds := cora(t)
	cfg := kipfConfig("gcn", 2, 100, 0.5)
	cfg.LabelProp = 0.5
	res := single(t, ds, cfg)
	t.Logf("Cora GCN + label propagation 0.5: test %.4f", res.Final.TestAcc)
	if res.Final.TestAcc < 0.70 {
		t.Fatalf("with label propagation test accuracy %.4f", res.Final.TestAcc)
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	ds := cora(t)
	dir := t.TempDir()
	cfg := kipfConfig("sage", 4, 30, 0.5)
	cfg.SavePath = filepath.Join(dir, "m.ckpt")
	cfg.MetricsPath = filepath.Join(dir, "m.jsonl")
	res := single(t, ds, cfg)
	ck, err := LoadCheckpoint(cfg.SavePath)
	if err != nil {
		t.Fatal(err)
	}
	owner := make([]int32, ds.NumNodes())
	sc, err := Evaluate(ck, partition.Split(ds, owner, 0, 1), comm.Single(), 2, "")
	if err != nil {
		t.Fatal(err)
	}
	last := res.Epochs[len(res.Epochs)-1]
	if sc.TestAcc != last.TestAcc || sc.ValAcc != last.ValAcc {
		t.Fatalf("eval of the saved model: val %.4f test %.4f; training's last epoch: val %.4f test %.4f", sc.ValAcc, sc.TestAcc, last.ValAcc, last.TestAcc)
	}
	// A damaged checkpoint is refused, naming the file.
	b, _ := os.ReadFile(cfg.SavePath)
	b[len(b)/2] ^= 0xFF
	bad := filepath.Join(dir, "bad.ckpt")
	os.WriteFile(bad, b, 0o644)
	if _, err := LoadCheckpoint(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("damaged checkpoint: err = %v", err)
	}
	if _, err := os.Stat(cfg.MetricsPath); err != nil {
		t.Fatalf("metrics file: %v", err)
	}
}

// narrowCora is Cora with its features projected to dim columns (a fixed
// random ±1 projection), so that a 16-wide first layer aggregates its
// input first and the evaluation passes reuse that aggregate.
func narrowCora(t testing.TB, dim int) *graph.Dataset {
	ds := *cora(t)
	n, f := ds.NumNodes(), ds.FeatDim
	r := rand.New(rand.NewPCG(3, 4))
	proj := make([]float32, f*dim)
	for i := range proj {
		proj[i] = float32(2*r.IntN(2) - 1)
	}
	x := make([]float32, n*dim)
	for v := range n {
		for k, a := range graph.DenseData(ds.Features)[v*f : (v+1)*f] {
			if a != 0 {
				for j := range dim {
					x[v*dim+j] += a * proj[k*dim+j]
				}
			}
		}
	}
	ds.Features, ds.FeatDim = graph.DenseX(x, n, dim), dim
	return &ds
}

// TestEvalAggregateReused: a first layer wider than the features makes the
// evaluation passes reuse the features' aggregate; the last epoch's
// accuracies still equal those of Evaluate on the saved model, which
// computes the aggregate afresh, at one and at three ranks, GCN and SAGE,
// with and without LayerNorm.
func TestEvalAggregateReused(t *testing.T) {
	ds := narrowCora(t, 8)
	for _, model := range []string{"gcn", "sage"} {
		for _, norm := range []string{"none", "layer"} {
			for _, p := range []int{1, 3} {
				cfg := kipfConfig(model, 2, 20, 0.5)
				cfg.Model.Norm = norm
				cfg.SavePath = filepath.Join(t.TempDir(), "m.ckpt")
				owner := make([]int32, ds.NumNodes())
				if p > 1 {
					owner = partitionFor(t, ds, "random", p)
				}
				res := distributed(t, ds, owner, p, cfg)
				ck, err := LoadCheckpoint(cfg.SavePath)
				if err != nil {
					t.Fatal(err)
				}
				scores := make([]*Scores, p)
				err = comm.RunGroup(p, func(c comm.Comm) error {
					sc, err := Evaluate(ck, partition.Split(ds, owner, c.Rank(), p), c, 2, "")
					scores[c.Rank()] = sc
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				last, sc := res.Epochs[len(res.Epochs)-1], scores[0]
				if sc.TrainAcc != last.TrainAcc || sc.ValAcc != last.ValAcc || sc.TestAcc != last.TestAcc {
					t.Fatalf("%s %s at %d ranks: Evaluate gives train %.4f val %.4f test %.4f, training's last epoch train %.4f val %.4f test %.4f",
						model, norm, p, sc.TrainAcc, sc.ValAcc, sc.TestAcc, last.TrainAcc, last.ValAcc, last.TestAcc)
				}
				t.Logf("%s %s at %d ranks: last epoch val %.4f test %.4f", model, norm, p, last.ValAcc, last.TestAcc)
			}
		}
	}
}

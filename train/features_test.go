package train

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/partition"
)

// sparseCora is Cora (row-normalised) with its features stored sparse.
func sparseCora(t testing.TB) *graph.Dataset {
	ds := *cora(t)
	ds.Features = graph.SparseX(graph.SparseFeaturesOf(graph.DenseData(ds.Features), ds.NumNodes(), ds.FeatDim))
	return &ds
}

// TestSparseFeaturesEqualDense: Cora's features stored sparse train to the
// dense run's losses (relative 1e-4 every epoch), with dropout and with
// label propagation, in one process, on 2 in-process ranks (goroutines,
// METIS) and on 3 (random).
func TestSparseFeaturesEqualDense(t *testing.T) {
	ds, sp := cora(t), sparseCora(t)
	for _, c := range []struct {
		model string
		lp    float64
	}{{"gcn", 0}, {"gcn", 0.5}, {"sage", 0}, {"gat", 0}} {
		cfg := kipfConfig(c.model, 3, 15, 0.5)
		cfg.LabelProp = c.lp
		name := fmt.Sprintf("%s-lp%g", c.model, c.lp)
		t.Run(name, func(t *testing.T) {
			ref := single(t, ds, cfg)
			sameLossesAt(t, ref, single(t, sp, cfg), 1)
			for p, method := range map[int]string{2: "metis", 3: "random"} {
				owner := partitionFor(t, ds, method, p)
				sameLossesAt(t, distributed(t, ds, owner, p, cfg), distributed(t, sp, owner, p, cfg), p)
			}
		})
	}
}

// TestSparseEvalEqualsDense: a saved model evaluated on Cora's features
// stored sparse (the model's sparse input: no dense copy) scores as on the
// dense features, with the same predictions and embeddings (within 1e-4),
// with and without label propagation, in one process and on 2 ranks.
func TestSparseEvalEqualsDense(t *testing.T) {
	ds, sp := cora(t), sparseCora(t)
	for _, c := range []struct {
		model string
		lp    float64
	}{{"gcn", 0.5}, {"sage", 0}} {
		cfg := kipfConfig(c.model, 3, 10, 0.5)
		cfg.LabelProp = c.lp
		cfg.SavePath = filepath.Join(t.TempDir(), "m.ckpt")
		single(t, ds, cfg)
		ck, err := LoadCheckpoint(cfg.SavePath)
		if err != nil {
			t.Fatal(err)
		}
		want := EvalOutputs{Predictions: true, Embeddings: true}
		for _, p := range []int{1, 2} {
			owner := partition.Random(ds.NumNodes(), p, 5)
			var got [2]*Scores
			for k, d := range []*graph.Dataset{ds, sp} {
				err := comm.RunGroup(p, func(c comm.Comm) error {
					s := partition.Split(d, owner, c.Rank(), p)
					sc, err := EvaluateWith(ck, s, c, 1, "", want)
					if err == nil && d == sp && (graph.SparseMatrix(s.Features) == nil || graph.DenseData(s.Features) != nil) {
						err = fmt.Errorf("rank %d: the shard's features were densified", c.Rank())
					}
					if c.Rank() == 0 {
						got[k] = sc
					}
					return err
				})
				if err != nil {
					t.Fatalf("%s lp %g, %d ranks: %v", c.model, c.lp, p, err)
				}
			}
			d, s := got[0], got[1]
			if d.TrainAcc != s.TrainAcc || d.ValAcc != s.ValAcc || d.TestAcc != s.TestAcc {
				t.Fatalf("%s lp %g, %d ranks: sparse scores %+v, dense %+v", c.model, c.lp, p, *s, *d)
			}
			closeEnough(t, fmt.Sprintf("%s lp %g, %d ranks: predictions", c.model, c.lp, p), s.Predictions.Data, d.Predictions.Data)
			closeEnough(t, fmt.Sprintf("%s lp %g, %d ranks: embeddings", c.model, c.lp, p), s.Embeddings.Data, d.Embeddings.Data)
		}
	}
}

// closeEnough fails unless got and want agree within 1e-4 (relative above 1).
func closeEnough(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*math.Max(1, math.Abs(float64(want[i]))) {
			t.Fatalf("%s: value %d is %g, dense gives %g", what, i, got[i], want[i])
		}
	}
}

package train

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/partition"
)

// SaveBest holds the model of the best validation epoch; EvaluateWith
// returns its class scores and embeddings in global id order, the same on
// one rank and on three, and the scores' argmax gives the reported
// accuracy.
func TestSaveBestAndEvalOutputs(t *testing.T) {
	ds := cora(t)
	dir := t.TempDir()
	cfg := kipfConfig("gcn", 4, 15, 0.5)
	cfg.SaveBest = filepath.Join(dir, "best.ckpt")
	res := single(t, ds, cfg)
	ck, err := LoadCheckpoint(cfg.SaveBest)
	if err != nil {
		t.Fatal(err)
	}
	if ck.Train.Epoch != res.Final.BestEpoch || ck.Train.BestValAcc != res.Final.BestValAcc {
		t.Fatalf("--save-best holds epoch %d (val %.4f), best was epoch %d (val %.4f)",
			ck.Train.Epoch, ck.Train.BestValAcc, res.Final.BestEpoch, res.Final.BestValAcc)
	}

	want := EvalOutputs{Predictions: true, Embeddings: true}
	one, err := EvaluateWith(ck, partition.Split(ds, make([]int32, ds.NumNodes()), 0, 1), comm.Single(), 2, "", want)
	if err != nil {
		t.Fatal(err)
	}
	if one.ValAcc != res.Final.BestValAcc {
		t.Fatalf("best model scores val %.4f, training reported %.4f", one.ValAcc, res.Final.BestValAcc)
	}
	n := ds.NumNodes()
	if p := one.Predictions; p.Rows != n || p.Cols != ds.NumClasses {
		t.Fatalf("predictions %d×%d, want %d×%d", p.Rows, p.Cols, n, ds.NumClasses)
	}
	if e := one.Embeddings; e.Rows != n || e.Cols != 16 {
		t.Fatalf("embeddings %d×%d, want %d×16", e.Rows, e.Cols, n)
	}
	correct := 0
	for _, v := range ds.Test {
		row := one.Predictions.Data[int(v)*ds.NumClasses : (int(v)+1)*ds.NumClasses]
		best := 0
		for c := range row {
			if row[c] > row[best] {
				best = c
			}
		}
		if int32(best) == ds.Labels[v] {
			correct++
		}
	}
	if got := float64(correct) / float64(len(ds.Test)); math.Abs(got-one.TestAcc) > 1e-12 {
		t.Fatalf("argmax of the predictions gives test accuracy %.4f, Evaluate %.4f", got, one.TestAcc)
	}

	const p = 3
	owner := partition.Random(n, p, 5)
	var three *Scores
	if err := comm.RunGroup(p, func(c comm.Comm) error {
		sc, err := EvaluateWith(ck, partition.Split(ds, owner, c.Rank(), p), c, 1, "", want)
		if c.Rank() == 0 {
			three = sc
		} else if err == nil && (sc.Predictions != nil || sc.Embeddings != nil) {
			t.Errorf("rank %d got gathered outputs", c.Rank())
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for name, pair := range map[string][2][]float32{"predictions": {one.Predictions.Data, three.Predictions.Data},
		"embeddings": {one.Embeddings.Data, three.Embeddings.Data}} {
		for i := range pair[0] {
			if d := math.Abs(float64(pair[0][i] - pair[1][i])); d > 1e-4*math.Max(1, math.Abs(float64(pair[0][i]))) {
				t.Fatalf("%s[%d]: %g on 3 ranks, %g on one", name, i, pair[1][i], pair[0][i])
			}
		}
	}
}

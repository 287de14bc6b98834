package train

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/partition"
)

// Every node order trains the same model: with dropout 0 the per-epoch
// losses and accuracies equal the given order's (relative 1e-4), on one
// rank and on three, for GCN and 3-layer SAGE with LayerNorm; the saved
// models' predictions agree row by row in global id order, also when the
// evaluation runs on a reordered shard. The default ("") reorders.
func TestNodeOrderSameTraining(t *testing.T) {
	ds := cora(t)
	dir := t.TempDir()
	n := ds.NumNodes()
	owner := partition.Random(n, 3, 9)
	for _, model := range []string{"gcn", "sage"} {
		cfg := kipfConfig(model, 6, 12, 0)
		if model == "sage" {
			cfg.Model.Layers, cfg.Model.Norm = 3, "layer"
		}
		var ref *Result
		var refPred []float32
		for _, order := range append(partition.NodeOrders(), "") {
			for _, p := range []int{1, 3} {
				name := fmt.Sprintf("%s/%q/P%d", model, order, p)
				c := cfg
				c.NodeOrder = order
				c.SavePath = filepath.Join(dir, fmt.Sprintf("%s-%s-%d.ckpt", model, order, p))
				var res *Result
				if p == 1 {
					s := partition.Split(ds, make([]int32, n), 0, 1)
					r, err := Run(c, s, comm.Single())
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					res = r
					if sorted := slices.IsSorted(s.Global); sorted != (order == partition.OrderGiven) {
						t.Fatalf("%s: shard's global ids ascending after Run: %v", name, sorted)
					}
				} else {
					res = distributed(t, ds, owner, p, c)
				}
				if ref == nil {
					ref = res // given order, one rank
				}
				for e := range ref.Epochs {
					a, b := ref.Epochs[e], res.Epochs[e]
					if math.Abs(a.Loss-b.Loss) > 1e-4*math.Abs(a.Loss) || math.Abs(a.TrainAcc-b.TrainAcc) > 2.0/float64(n) {
						t.Fatalf("%s: epoch %d loss %.8f train acc %.4f, given order on one rank %.8f %.4f", name, e+1, b.Loss, b.TrainAcc, a.Loss, a.TrainAcc)
					}
				}
				ck, err := LoadCheckpoint(c.SavePath)
				if err != nil {
					t.Fatal(err)
				}
				// Evaluate on a shard in this order too: outputs by global id.
				s := partition.Split(ds, make([]int32, n), 0, 1)
				if order != partition.OrderGiven {
					o := order
					if o == "" {
						o = partition.DefaultOrder
					}
					perm, err := partition.LocalOrder(s, o)
					if err != nil {
						t.Fatal(err)
					}
					if err := s.Reorder(perm); err != nil {
						t.Fatal(err)
					}
				}
				sc, err := EvaluateWith(ck, s, comm.Single(), 2, "", EvalOutputs{Predictions: true})
				if err != nil {
					t.Fatal(err)
				}
				if refPred == nil {
					refPred = sc.Predictions.Data
				}
				for i, want := range refPred {
					if got := sc.Predictions.Data[i]; math.Abs(float64(got-want)) > 1e-3*math.Max(1, math.Abs(float64(want))) {
						t.Fatalf("%s: prediction [%d,%d] %g, given order %g", name, i/ds.NumClasses, i%ds.NumClasses, got, want)
					}
				}
			}
		}
	}
}

// An unknown order is an error naming the field, before any work.
func TestNodeOrderUnknown(t *testing.T) {
	ds := cora(t)
	cfg := kipfConfig("gcn", 1, 1, 0)
	cfg.NodeOrder = "bogus"
	_, err := Run(cfg, partition.Split(ds, make([]int32, ds.NumNodes()), 0, 1), comm.Single())
	var fe *field.Error
	if !errors.As(err, &fe) || fe.Field != "train.Config.NodeOrder" {
		t.Fatalf("unknown order: %v", err)
	}
}

// DataIdentity does not depend on the node order, so a checkpoint written
// in one order resumes in another.
func TestNodeOrderDataIdentity(t *testing.T) {
	ds := cora(t)
	s := partition.Split(ds, make([]int32, ds.NumNodes()), 0, 1)
	want, err := DataIdentity(s, comm.Single())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range partition.NodeOrders() {
		perm, err := partition.LocalOrder(s, o)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Reorder(perm); err != nil {
			t.Fatal(err)
		}
		if got, err := DataIdentity(s, comm.Single()); err != nil || got != want {
			t.Fatalf("%s order: identity %s (%v), given order %s", o, got, err, want)
		}
	}
}

package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/partition"
)

// linkFixed is linkCora with fixed negatives, as edge split files give
// them: per-source (K per validation and test positive, OGB citation2's
// layout) or shared (OGB collab's), and the metric that picks the best
// epoch.
func linkFixed(t *testing.T, epochs int, perSource bool, metric string) (*graph.Dataset, Config) {
	t.Helper()
	ds, cfg := linkCora(t, epochs, 0)
	es, n := cfg.Targets.Edges, int32(ds.NumNodes())
	rng := rand.New(rand.NewPCG(5, 6))
	for i, pos := range [][][2]int32{es.Valid, es.Test} {
		if perSource {
			es.NegK[i] = 20
			for range len(pos) * 20 {
				es.TargetNeg[i] = append(es.TargetNeg[i], rng.Int32N(n))
			}
			continue
		}
		for range 2 * len(pos) {
			es.Neg[i] = append(es.Neg[i], [2]int32{rng.Int32N(n), rng.Int32N(n)})
		}
	}
	cfg.Targets.LinkMetric = metric
	return ds, cfg
}

// With fixed negatives (per-source: MRR; shared: Hits@50 selecting) every
// epoch's loss and the selecting metric at P = 2, 3, 4 in-process ranks
// equal one process's, and a resumed run continues exactly.
func TestLinkFixedNegatives(t *testing.T) {
	for _, tc := range []struct {
		perSource bool
		metric    string
	}{{true, "auto"}, {false, "hits50"}} {
		ds, cfg := linkFixed(t, 20, tc.perSource, tc.metric)
		ref := single(t, ds, cfg)
		last := ref.Epochs[len(ref.Epochs)-1]
		want := map[bool]string{true: "mrr", false: "hits50"}[tc.perSource]
		t.Logf("%s: val %.4f test %.4f, extra %v", last.Metric, last.ValAcc, last.TestAcc, last.Extra)
		if last.Metric != want || !(last.ValAcc > 0.1) || last.Extra["val_rocauc"] < 0.7 {
			t.Fatalf("metric %q (want %q) val %.4f, ROC-AUC %.4f", last.Metric, want, last.ValAcc, last.Extra["val_rocauc"])
		}
		for _, p := range []int{2, 3, 4} {
			t.Run(fmt.Sprintf("%s/P%d", want, p), func(t *testing.T) {
				got := distributed(t, ds, partition.Random(ds.NumNodes(), p, 7), p, cfg)
				sameLossesAt(t, ref, got, p)
				for e, m := range got.Epochs {
					if r := ref.Epochs[e]; math.Abs(m.ValAcc-r.ValAcc) > 1e-2 || math.Abs(m.Extra["val_rocauc"]-r.Extra["val_rocauc"]) > 1e-4 {
						t.Fatalf("epoch %d: val %s %.6f ROC-AUC %.6f at P=%d, %.6f %.6f in one process", e+1, want, m.ValAcc, m.Extra["val_rocauc"], p, r.ValAcc, r.Extra["val_rocauc"])
					}
				}
			})
		}
		ds, cfg = linkFixed(t, 0, tc.perSource, tc.metric)
		cfg.Model.Dropout = 0.5
		for _, p := range []int{1, 2} {
			ref, got, refCk, gotCk := trainTwice(t, ds, p, cfg)
			checkResumed(t, ref, got, refCk, gotCk)
		}
	}
}

// The mlp decoder's weights train with the model's: at P = 2, 3, 4
// in-process ranks (decoder gradients summed over the ranks) every epoch's
// loss equals one process's within 1e-4, the checkpoint holds them, and a
// resumed run continues exactly.
func TestLinkMLPDecoder(t *testing.T) {
	ds, cfg := linkCora(t, 15, 0)
	cfg.Targets.Decoder = "mlp"
	ref := single(t, ds, cfg)
	last := ref.Epochs[len(ref.Epochs)-1]
	if first := ref.Epochs[0]; !(last.Loss < first.Loss-0.01) || last.Metric != "rocauc" {
		t.Fatalf("mlp decoder: loss %.4f → %.4f in 15 epochs (%s)", first.Loss, last.Loss, last.Metric)
	}
	for _, p := range []int{2, 3, 4} {
		t.Run(fmt.Sprintf("P%d", p), func(t *testing.T) {
			sameLossesAt(t, ref, distributed(t, ds, partition.Random(ds.NumNodes(), p, 7), p, cfg), p)
		})
	}
	ds, cfg = linkCora(t, 0, 0.5)
	cfg.Targets.Decoder = "mlp"
	for _, p := range []int{1, 2} {
		ref, got, refCk, gotCk := trainTwice(t, ds, p, cfg)
		checkResumed(t, ref, got, refCk, gotCk)
		if refCk.Decoder != "mlp" || refCk.Params[len(refCk.Params)-1].Name != "decoder.lin1.bias" {
			t.Fatalf("checkpoint decoder %q, last parameter %s", refCk.Decoder, refCk.Params[len(refCk.Params)-1].Name)
		}
	}
	// A checkpoint of the dot product does not resume with the mlp, nor
	// with another selecting metric.
	dir := t.TempDir()
	c, dot := cfg, *cfg.Targets
	dot.Decoder = ""
	c.Targets, c.Epochs, c.SavePath = &dot, 2, dir+"/dot.ckpt"
	single(t, ds, c)
	c = cfg
	c.Epochs, c.ResumePath = 3, dir+"/dot.ckpt"
	if _, err := Run(c, partition.Split(ds, make([]int32, ds.NumNodes()), 0, 1), comm.Single()); err == nil || !strings.Contains(err.Error(), "task.Table.Decoder dot, this run mlp") {
		t.Fatalf("resume with another decoder: %v", err)
	}
	hits := dot
	hits.LinkMetric = "hits50"
	c.Targets = &hits
	if _, err := Run(c, partition.Split(ds, make([]int32, ds.NumNodes()), 0, 1), comm.Single()); err == nil || !strings.Contains(err.Error(), "task.Table.LinkMetric rocauc, this run hits50") {
		t.Fatalf("resume with another link metric: %v", err)
	}
}

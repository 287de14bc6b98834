package train

import (
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
)

// A hidden width whose training cannot fit the memory this process may use
// is refused before anything is allocated, naming the field; the estimate
// grows with the width.
func TestMemoryCheckRefusesWideModel(t *testing.T) {
	ds := cora(t)
	old := debug.SetMemoryLimit(256 << 20)
	defer debug.SetMemoryLimit(old)
	cfg := kipfConfig("gcn", 1, 1, 0.5)
	cfg.Model.Hidden = 100000 // 1433×100000 weights with their moments: ~3 GB
	_, err := Run(cfg, partition.Split(ds, make([]int32, ds.NumNodes()), 0, 1), comm.Single())
	if err == nil || !strings.HasPrefix(err.Error(), "nn.Config.Hidden: 100000: training needs ~") {
		t.Fatalf("hidden 100000 under a 256 MiB limit: err = %v", err)
	}
	s := partition.Split(ds, make([]int32, ds.NumNodes()), 0, 1)
	mc := cfg.Model
	mc.In, mc.Out = ds.FeatDim, ds.NumClasses
	narrow, _ := Estimate(mc, Buffers{EvalCache: true}, s)
	mc.Hidden *= 2
	wide, hidden := Estimate(mc, Buffers{EvalCache: true}, s)
	if !(wide > narrow && hidden > wide/2) {
		t.Fatalf("estimates: hidden 100000 %d, 200000 %d (of which hidden %d)", narrow, wide, hidden)
	}
}

// measureTraining trains cfg for its epochs on p in-process ranks and
// returns the heap the trainers hold afterwards (the model's pool keeps its
// buffers at their peak, the operator its state) beyond the shards, and the
// sum of the ranks' Estimates.
func measureTraining(t *testing.T, cfg Config, ds *graph.Dataset, p int) (measured, estimated int64) {
	t.Helper()
	owner := make([]int32, ds.NumNodes())
	for v := range owner {
		owner[v] = int32(v % p)
	}
	shards := make([]*partition.Shard, p)
	for r := range shards {
		shards[r] = partition.Split(ds, owner, r, p)
		mc := cfg.Model
		mc.In, mc.Out = ds.FeatDim, ds.NumClasses
		e, _ := Estimate(mc, Buffers{LabelProp: cfg.LabelProp > 0, EvalCache: cfg.EvalCache != EvalCacheOff}, shards[r])
		estimated += e
	}
	trainers := make([]*trainer, p)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := comm.RunGroupNodes(p, 1, func(c comm.Comm) error {
		tr, err := newTrainer(cfg, shards[c.Rank()], c)
		if err != nil {
			return err
		}
		trainers[c.Rank()] = tr
		_, err = tr.run()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(trainers)
	runtime.KeepAlive(shards)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc), estimated
}

// Every model's memory estimate, from its layers' memory schedules, is
// within a factor 1.5 of what training holds (a wide hidden layer, so that
// activations dominate; LayerNorm, K steps, attention heads and dropout where
// the model takes them; one rank and three).
func TestEstimateMatchesTraining(t *testing.T) {
	sp := graph.DefaultSpec
	sp.Nodes, sp.Degree, sp.Feat, sp.Classes = 4000, 12, 32, 8
	ds, err := graph.Generate(sp)
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range nn.ModelInfos() {
		for _, p := range []int{1, 3} {
			cfg := kipfConfig(info.Name, 1, 2, 0.5)
			cfg.NodeOrder, cfg.Quiet = partition.OrderGiven, true
			mc := &cfg.Model
			mc.Layers, mc.Hidden = max(info.Layers, 2), 256
			if p == 1 && !info.Body {
				mc.Layers, mc.Norm = 3, "layer"
			}
			if info.Body { // gcnii: 8 of its 64 layers
				mc.Layers = 8
			}
			if slices.ContainsFunc(info.Hypers, func(h nn.Hyper) bool { return h.Name == "k" }) {
				mc.Hyper = map[string]float64{"k": 3}
			}
			if op, _ := nn.ModelOp(info.Name); op.Attends() {
				mc.Heads, mc.OutHeads, mc.AttnDropout = 8, 2, 0.3
			}
			got, est := measureTraining(t, cfg, ds, p)
			t.Logf("%s, %d layers, %d ranks: training holds %.1f MB, estimate %.1f MB", info.Name, mc.Layers, p, float64(got)/1e6, float64(est)/1e6)
			if r := float64(est) / float64(got); !(r > 1/1.5 && r < 1.5) {
				t.Errorf("%s at %d ranks: estimate %d bytes for %d measured (ratio %.2f)", info.Name, p, est, got, r)
			}
		}
	}
}

package train

import (
	"math"
	"testing"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/nn"
)

// denseRefLosses are the first five epochs' training losses on Cora (one
// thread, seed 1) of models whose dense stage (products, fused hidden
// stages, loss) has fast paths, as the reference dense code computed
// them: a faster dense stage must compute the same losses within 1e-4.
var denseRefLosses = []struct {
	name string
	cfg  nn.Config
	want [5]float64
}{
	{"gcn 2x128", nn.Config{Model: "gcn", Layers: 2, Hidden: 128, Dropout: 0.5, Norm: "none", Seed: 1},
		[5]float64{1.9465563328, 1.9309125902, 1.9140196476, 1.8869995940, 1.8642063303}},
	{"sage 3x64 layer norm", nn.Config{Model: "sage", Layers: 3, Hidden: 64, Dropout: 0.5, Norm: "layer", Seed: 1},
		[5]float64{2.0564963317, 2.0341273500, 1.8062834237, 1.6546900281, 1.4884750729}},
	{"gin 2x64", nn.Config{Model: "gin", Layers: 2, Hidden: 64, Dropout: 0.5, Norm: "none", Seed: 1},
		[5]float64{1.9633789691, 1.9203485456, 1.8668196507, 1.7650953858, 1.6437047335}},
	{"sgc", nn.Config{Model: "sgc", Layers: 1, Dropout: 0, Norm: "none", Seed: 1},
		[5]float64{1.9455692725, 1.9382261184, 1.9310227965, 1.9239432844, 1.9169715249}},
}

// gatRefLosses are the first five epochs' training losses on Cora (one
// thread, seed 1) of GAT with attention dropout, as the attention kernels
// computed them before their dropout masks and passes were fused: faster
// attention kernels must compute the same losses within 1e-4 (the same
// dropout masks, the same arithmetic up to the sums' order). 8 heads × 8
// run eight heads to a vector; 3 heads × 5 the other layouts; both end in
// the single-head output layer.
var gatRefLosses = []struct {
	name string
	cfg  nn.Config
	want [5]float64
}{
	{"gat 8x8", nn.Config{Model: "gat", Layers: 2, Hidden: 64, Heads: 8, Dropout: 0.6, AttnDropout: 0.6, Norm: "none", Seed: 1},
		[5]float64{1.9472028739, 1.9432713621, 1.9368667515, 1.9297859528, 1.9233240736}},
	{"gat 3x5", nn.Config{Model: "gat", Layers: 2, Hidden: 15, Heads: 3, Dropout: 0.6, AttnDropout: 0.3, Norm: "none", Seed: 1},
		[5]float64{1.9456161624, 1.9443578815, 1.9421860024, 1.9395411301, 1.9323584333}},
}

// TestDenseStageLossesPinned trains each model of denseRefLosses for five
// epochs on one thread and checks every loss against the reference.
func TestDenseStageLossesPinned(t *testing.T) {
	ds := cora(t)
	for _, tc := range denseRefLosses {
		t.Run(tc.name, func(t *testing.T) { lossesPinned(t, ds, tc.cfg, tc.want) })
	}
}

// TestGATLossesPinned is TestDenseStageLossesPinned for gatRefLosses.
func TestGATLossesPinned(t *testing.T) {
	ds := cora(t)
	for _, tc := range gatRefLosses {
		t.Run(tc.name, func(t *testing.T) { lossesPinned(t, ds, tc.cfg, tc.want) })
	}
}

// lossesPinned trains the model m on ds for five epochs on one thread
// and checks every training loss against want within 1e-4.
func lossesPinned(t *testing.T, ds *graph.Dataset, m nn.Config, want [5]float64) {
	cfg := kipfConfig(m.Model, 1, 5, m.Dropout)
	cfg.Model = m
	cfg.Threads = 1
	res := single(t, ds, cfg)
	got := make([]float64, len(res.Epochs))
	for i, e := range res.Epochs {
		got[i] = e.Loss
	}
	t.Logf("losses %.10f", got)
	if len(got) != len(want) {
		t.Fatalf("%d epochs, want %d", len(got), len(want))
	}
	for i, w := range want {
		if math.Abs(got[i]-w) > 1e-4 {
			t.Errorf("epoch %d: loss %.8f, reference %.8f", i+1, got[i], w)
		}
	}
}

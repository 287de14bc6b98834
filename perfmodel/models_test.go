package perfmodel

import (
	"math"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/exchange"
)

// TestModelSchedules: perfmodel walks each model's layer schedule: SGC's K
// steps are K exchanges at the narrower width, APPNP's K steps K forward
// and K backward exchanges at the classes' width, GIN's sum exchanges as
// many rows as GCN with neither GCN's self-loops nor its row scalings.
func TestModelSchedules(t *testing.T) {
	shm, _ := ParseNetwork("shm")
	predict := func(m Model) *Prediction {
		t.Helper()
		cfg := Config{Model: m, Mode: exchange.ModePost, Wire: wires(32), Threads: 1, RanksPerNode: 2, CoresPerNode: 1}
		p, err := Predict(twoRanks(), flatProfile(), shm, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// One layer 16 → 32, propagate first: one forward exchange at width
	// 16, none backward (the first layer's input gradient is not wanted).
	gcn := predict(Model{Kind: "gcn", Layers: 1, In: 16, Classes: 32})
	if gcn.TrainBytes <= 0 {
		t.Fatalf("gcn: %d bytes", gcn.TrainBytes)
	}
	if sgc := predict(Model{Kind: "sgc", Layers: 1, In: 16, Classes: 32, K: 3}); sgc.TrainBytes != 3*gcn.TrainBytes {
		t.Errorf("sgc K=3: %d bytes, want 3 × gcn's %d", sgc.TrainBytes, gcn.TrainBytes)
	}
	if appnp := predict(Model{Kind: "appnp", Layers: 1, In: 16, Classes: 32, K: 4}); appnp.TrainBytes != 2*4*2*gcn.TrainBytes {
		t.Errorf("appnp K=4: %d bytes, want 16 × gcn's %d (4 steps each way, twice the width)", appnp.TrainBytes, gcn.TrainBytes)
	}
	gin := predict(Model{Kind: "gin", Layers: 1, In: 16, Classes: 32})
	if gin.TrainBytes != gcn.TrainBytes || !(gin.AggrS < gcn.AggrS) {
		t.Errorf("gin: %d bytes and aggregation %g s; gcn: %d bytes and %g s", gin.TrainBytes, gin.AggrS, gcn.TrainBytes, gcn.AggrS)
	}
	if k10, k2 := predict(Model{Kind: "appnp", Layers: 2, Hidden: 8, In: 16, Classes: 32}), predict(Model{Kind: "appnp", Layers: 2, Hidden: 8, In: 16, Classes: 32, K: 2}); !(k10.EpochS > k2.EpochS) {
		t.Errorf("appnp: default K (10) %g s an epoch, K=2 %g s", k10.EpochS, k2.EpochS)
	}
}

// TestAttentionSchedule: an attention model needs the profile's attention
// rates (a profile without them predicts every other model and refuses
// this one); with them its exchanges carry Heads·Width values a row and
// each pass is charged at those rates: scores per edge·head, the weighted
// aggregation per edge·value, so more heads of the same width cost more.
func TestAttentionSchedule(t *testing.T) {
	shm, _ := ParseNetwork("shm")
	cfg := Config{Mode: exchange.ModePost, Wire: wires(32), Threads: 1, RanksPerNode: 2, CoresPerNode: 1}
	gat := Model{Kind: "gat", Layers: 2, Hidden: 32, In: 16, Classes: 8, Heads: 4}
	old := flatProfile()
	if _, err := Predict(twoRanks(), old, shm, Config{Model: gat, Mode: cfg.Mode, Wire: cfg.Wire, Threads: 1, RanksPerNode: 2}); err == nil || !strings.Contains(err.Error(), "no attention rates") {
		t.Fatalf("gat on a profile without attention rates: %v", err)
	}
	if err := old.CheckModel(gcn()); err != nil {
		t.Errorf("gcn: %v", err)
	}
	prof := flatProfile()
	prof.Rates[0].Attention = &AttentionRates{Score: []ScoreRate{{Heads: 1, Forward: 0.1, Backward: 0.05}},
		Aggr: []AggrRate{{Width: 8, Forward: 0.5, Transpose: 0.25}, {Width: 64, Forward: 1, Transpose: 0.5}}}
	if err := prof.Validate(); err != nil {
		t.Fatal(err)
	}
	predict := func(m Model) *Prediction {
		t.Helper()
		c := cfg
		c.Model = m
		p, err := Predict(twoRanks(), prof, shm, c)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// one layer, 8 classes, h heads averaged: one forward attention pass,
	// none backward (the first layer's input gradient is not wanted)
	one := func(h int) *Prediction {
		return predict(Model{Kind: "gat", Layers: 1, In: 16, Classes: 8, OutHeads: h})
	}
	p1, p4 := one(1), one(4)
	if p4.TrainBytes != 4*p1.TrainBytes {
		t.Errorf("4 heads move %d bytes, 1 head %d: want 4×", p4.TrainBytes, p1.TrainBytes)
	}
	// doubling the score rate takes half the scores' time off the
	// aggregation: every local edge, a self-loop a node and the cut edges,
	// each of 4 heads at 0.1 G/s
	v := twoRanks()[0]
	prof.Rates[0].Attention.Score[0].Forward *= 2
	fast := one(4)
	prof.Rates[0].Attention.Score[0].Forward /= 2
	if want := float64(v.LocalEdges+v.Nodes+v.CutEdges) * 4 / 0.1e9 / 2; math.Abs(p4.AggrS-fast.AggrS-want) > 1e-9 {
		t.Errorf("aggregation %g s, with scores twice as fast %g s: want %g s less", p4.AggrS, fast.AggrS, want)
	}
	r := &prof.Rates[0]
	if s, _ := r.AttentionSeconds(1000, 2, 16, true); math.Abs(s-(1000*2/0.05e9+1000*16/0.25e9)) > 1e-12 {
		t.Errorf("backward 1000 edges, 2 heads of 8: %g s", s)
	}
	two := &AttentionRates{Score: []ScoreRate{{Heads: 1, Forward: 0.1, Backward: 0.1}, {Heads: 8, Forward: 0.4, Backward: 0.4}}}
	if s1, s8 := two.ScoreSeconds(1000, 1, false), two.ScoreSeconds(1000, 8, false); math.Abs(s1-1e-5) > 1e-15 || math.Abs(s8-2e-5) > 1e-15 {
		t.Errorf("scores of 1000 edges: 1 head %g s, 8 heads %g s; want 1e-5 and 2e-5 (each count at its rate)", s1, s8)
	}
	if p := predict(gat); !(p.EpochS > 0) {
		t.Errorf("gat 2 layers: %+v", p)
	}
}

package perfmodel

import (
	"math"
	"testing"

	"github.com/supergcn/supergcn/exchange"
)

// TestGATv2Schedule: a GATv2 attention moves its pairs' post rows in post
// mode (as GAT), twice the pre rows in pre mode and min(post, 2 × cover)
// in hybrid, and its attention costs GAT's plus one weighted aggregation's
// worth of score work over every edge forward, two backward.
func TestGATv2Schedule(t *testing.T) {
	shm, _ := ParseNetwork("shm")
	prof := flatProfile()
	prof.Rates[0].Attention = &AttentionRates{Score: []ScoreRate{{Heads: 1, Forward: 0.1, Backward: 0.05}},
		Aggr: []AggrRate{{Width: 8, Forward: 0.5, Transpose: 0.25}, {Width: 64, Forward: 1, Transpose: 0.5}}}
	if err := prof.Validate(); err != nil {
		t.Fatal(err)
	}
	predict := func(kind string, mode exchange.Mode) *Prediction {
		t.Helper()
		// one layer, 8 classes, 4 heads averaged: one forward attention pass
		c := Config{Model: Model{Kind: kind, Layers: 1, In: 16, Classes: 8, OutHeads: 4}, Mode: mode, Wire: wires(32),
			Threads: 1, RanksPerNode: 2, CoresPerNode: 1}
		p, err := Predict(twoRanks(), prof, shm, c)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// twoRanks: every pair pre 400, post 300, hybrid 200 rows
	for _, c := range []struct {
		mode     exchange.Mode
		v2, gat1 int64
	}{{exchange.ModePost, 300, 300}, {exchange.ModePre, 800, 400}, {exchange.ModeHybrid, 300, 200}} {
		v1, v2 := predict("gat", c.mode), predict("gatv2", c.mode)
		if v2.TrainBytes*c.gat1 != v1.TrainBytes*c.v2 {
			t.Errorf("%s: gatv2 moves %d bytes, gat %d: want the ratio %d/%d", c.mode, v2.TrainBytes, v1.TrainBytes, c.v2, c.gat1)
		}
	}
	v1, v2 := predict("gat", exchange.ModePost), predict("gatv2", exchange.ModePost)
	v := twoRanks()[0]
	// 4 heads of 8: forward one more pass at 0.5 G edge·values/s, backward
	// two at the transpose's 0.25
	e := float64(v.LocalEdges + v.Nodes + v.CutEdges)
	want := e*4*8/0.5e9 + 2*e*4*8/0.25e9
	if d := v2.AggrS - v1.AggrS; math.Abs(d-want) > 1e-9 {
		t.Errorf("gatv2's attention costs %g s more than gat's, want %g", d, want)
	}
}

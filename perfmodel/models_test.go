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
	if sgc := predict(Model{Kind: "sgc", Layers: 1, In: 16, Classes: 32, Hyper: map[string]float64{"k": 3}}); sgc.TrainBytes != 3*gcn.TrainBytes {
		t.Errorf("sgc K=3: %d bytes, want 3 × gcn's %d", sgc.TrainBytes, gcn.TrainBytes)
	}
	if appnp := predict(Model{Kind: "appnp", Layers: 1, In: 16, Classes: 32, Hyper: map[string]float64{"k": 4}}); appnp.TrainBytes != 2*4*2*gcn.TrainBytes {
		t.Errorf("appnp K=4: %d bytes, want 16 × gcn's %d (4 steps each way, twice the width)", appnp.TrainBytes, gcn.TrainBytes)
	}
	gin := predict(Model{Kind: "gin", Layers: 1, In: 16, Classes: 32})
	if gin.TrainBytes != gcn.TrainBytes || !(gin.AggrS < gcn.AggrS) {
		t.Errorf("gin: %d bytes and aggregation %g s; gcn: %d bytes and %g s", gin.TrainBytes, gin.AggrS, gcn.TrainBytes, gcn.AggrS)
	}
	if k10, k2 := predict(Model{Kind: "appnp", Layers: 2, Hidden: 8, In: 16, Classes: 32}), predict(Model{Kind: "appnp", Layers: 2, Hidden: 8, In: 16, Classes: 32, Hyper: map[string]float64{"k": 2}}); !(k10.EpochS > k2.EpochS) {
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

// TestBatchNormSchedule: batch normalisation adds, per hidden stage of a
// training step, the all-reduces of its statistics (the feature sums and
// the row count, then the centred squares, forward; the gradient sums,
// backward) to LayerNorm's elementwise passes; evaluation normalises with
// the running statistics and reduces nothing. Hand-worked: 3 layers of 8
// (two hidden stages), two ranks on one node (one tree step each way,
// 2 µs and 1 GB/s), float64 statistics.
func TestBatchNormSchedule(t *testing.T) {
	shm, _ := ParseNetwork("shm")
	prof := flatProfile()
	prof.IntraNode = Link{LatencyUS: 2, GBs: 1, Efficiency: 1}
	run := func(m Model) *Prediction {
		t.Helper()
		cfg := Config{Model: m, Mode: exchange.ModePost, Wire: wires(32), Threads: 1, RanksPerNode: 2, CoresPerNode: 4, EvalEvery: 1}
		p, err := Predict(twoRanks(), prof, shm, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	layer := Model{Kind: "gcn", Layers: 3, Hidden: 8, In: 16, Classes: 4, LayerNorm: true}
	batch := layer
	batch.LayerNorm, batch.BatchNorm = false, true
	ln, bn := run(layer), run(batch)
	tree := func(bytes float64) float64 { return 2 * (2e-6 + bytes/1e9) } // reduce and broadcast, one step each
	stats := tree(8*9) + tree(8*8) + tree(8*16)                           // forward: sums and count, squares; backward: gradient sums
	want := 2*stats + tree(4*float64(batch.params()))
	if got := bn.AllreduceS; math.Abs(got-want) > 1e-15 {
		t.Errorf("batch norm: all-reduce %.9g s, want %.9g (2 stages × %.9g s of statistics + the gradients' %.9g s)", got, want, stats, tree(4*float64(batch.params())))
	}
	if got, want := ln.AllreduceS, tree(4*float64(layer.params())); math.Abs(got-want) > 1e-15 {
		t.Errorf("layer norm: all-reduce %.9g s, want the gradients' %.9g", got, want)
	}
	adam := prof.Rates[0].ElemSeconds(adamBytes * float64(batch.params()-layer.params()))
	if bn.EvalS != ln.EvalS || math.Abs(bn.DenseS-ln.DenseS-adam) > 1e-15 {
		t.Errorf("batch norm: eval %v s, dense %v s; layer norm %v, %v (the same passes, Adam over the running statistics too)", bn.EvalS, bn.DenseS, ln.EvalS, ln.DenseS)
	}
}

// TestJKSchedule: jumping knowledge's output layer, hand-worked against
// "last" (2 layers of 8, 4 classes, 1000 rows a rank): cat copies the two
// layers' outputs side by side (8 bytes × 16 a row), multiplies 16 wide
// instead of 8 (forward, and both backward products), shares the
// gradient back by copies (8 bytes × 8 a layer) where last clears one
// layer's (4 bytes) and copies the other's, and Adam updates 32 more
// weights; max reads both layers and writes the maximum and its layer
// (4·2 + 6 bytes × 8 a row), multiplies 8 wide as last does, and shares
// by masked writes (10 bytes × 8 a layer).
func TestJKSchedule(t *testing.T) {
	prof := flatProfile()
	run := func(jk string) *Prediction {
		return predictPost(t, prof, Model{Kind: "gcn", Layers: 2, Hidden: 8, In: 16, Classes: 4, JK: jk})
	}
	r := prof.RatesAt(1, 2)
	const n = 1000
	e := func(bytes, width float64) float64 { return r.ElemSeconds(bytes * n * width) }
	g := func(op string, k, c int) float64 { return r.GemmSeconds(op, n, k, c) }
	last, cat, max := run("last"), run("cat"), run("max")
	wantCat := e(8, 16) + (g("nn", 16, 4) - g("nn", 8, 4)) + (g("tn", 16, 4) - g("tn", 8, 4)) + (g("nt", 4, 16) - g("nt", 4, 8)) +
		e(8, 8) - e(4, 8) + r.ElemSeconds(adamBytes*32)
	if d := cat.DenseS - last.DenseS; math.Abs(d-wantCat) > 1e-12 {
		t.Errorf("cat: %.9g s more dense work than last, want %.9g", d, wantCat)
	}
	wantMax := e(4*2+6, 8) + 2*e(10, 8) - e(8, 8) - e(4, 8)
	if d := max.DenseS - last.DenseS; math.Abs(d-wantMax) > 1e-12 {
		t.Errorf("max: %.9g s more dense work than last, want %.9g", d, wantMax)
	}
	if cat.TrainBytes != last.TrainBytes || max.TrainBytes != last.TrainBytes {
		t.Errorf("the combination moves no rows: %d, %d, %d bytes", last.TrainBytes, cat.TrainBytes, max.TrainBytes)
	}
}

// TestResidualSchedule: residual connections, hand-worked (3 layers of 8
// over 16 features, 1000 rows a rank, training only): the first hidden
// layer copies its activation into the sum (8 bytes × 8) and multiplies
// its 16-wide input by the projection, backward the projection's weight
// gradient only (the features' gradient is not wanted); the second copies
// and adds its input (8 + 12 bytes × 8) forward, and backward copies the
// gradient and adds it to the input gradient (8 + 12 bytes × 8); Adam
// updates the projection's 128 weights.
func TestResidualSchedule(t *testing.T) {
	prof := flatProfile()
	run := func(res bool) *Prediction {
		return predictPost(t, prof, Model{Kind: "gcn", Layers: 3, Hidden: 8, In: 16, Classes: 4, Residual: res})
	}
	r := prof.RatesAt(1, 2)
	const n = 1000
	e := func(bytes, width float64) float64 { return r.ElemSeconds(bytes * n * width) }
	want := e(8, 8) + r.GemmSeconds("nn", n, 16, 8) + r.GemmSeconds("tn", n, 16, 8) +
		2*(e(8, 8)+e(12, 8)) + r.ElemSeconds(adamBytes*128)
	plain, res := run(false), run(true)
	if d := res.DenseS - plain.DenseS; math.Abs(d-want) > 1e-12 {
		t.Errorf("residual: %.9g s more dense work, want %.9g", d, want)
	}
	if res.TrainBytes != plain.TrainBytes {
		t.Errorf("the skips move no rows: %d bytes, without %d", res.TrainBytes, plain.TrainBytes)
	}
}

// predictPost predicts model m on twoRanks over shared memory: post
// exchange, fp32 rows, one thread, two ranks of a 4-core node.
func predictPost(t *testing.T, prof *Profile, m Model) *Prediction {
	t.Helper()
	shm, _ := ParseNetwork("shm")
	cfg := Config{Model: m, Mode: exchange.ModePost, Wire: wires(32), Threads: 1, RanksPerNode: 2, CoresPerNode: 4}
	p, err := Predict(twoRanks(), prof, shm, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

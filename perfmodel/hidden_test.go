package perfmodel

import (
	"math"
	"testing"

	"github.com/supergcn/supergcn/exchange"
)

// TestHiddenStage: with the fused stage measured (Rates.Hidden) the model
// charges the hidden stage at its rates, half of forward+backward a
// direction, in place of the separate bias, ReLU and dropout passes; the
// rest of the epoch is unchanged. By hand, GCN 100→128→47 with dropout,
// 1000 nodes a rank, ElemGBs 10, DropoutGVs 1: the separate passes cost
// forward bias + ReLU 16 B·128 000 / 10 GB/s + dropout ½·128 000 / 1 G,
// backward ReLU 12 B·128 000 / 10 GB/s + dropout ½·128 000 / 1 G, and the
// evaluation's forward bias + ReLU again; the fused stage ½·128 000 / 4 G
// twice in training (with dropout) and ½·128 000 / 2 G in evaluation.
func TestHiddenStage(t *testing.T) {
	net, _ := ParseNetwork("shm")
	cfg := Config{Model: gcn(), Mode: exchange.ModeHybrid, Threads: 1, RanksPerNode: 1, EvalEvery: 1}
	sep, err := Predict(twoRanks(), flatProfile(), net, cfg)
	if err != nil {
		t.Fatal(err)
	}
	prof := flatProfile()
	prof.Rates[0].Hidden = []HiddenRate{{GVs: 2}, {Dropout: true, GVs: 4}, {LayerNorm: true, GVs: 1}, {LayerNorm: true, Dropout: true, GVs: 0.5}}
	prof.Rates[0].LayerNormGVs = 0 // not needed with the fused stage
	fused, err := Predict(twoRanks(), prof, net, cfg)
	if err != nil {
		t.Fatal(err)
	}
	const v = 1000 * 128.0
	separate, evalSeparate := 16*v/10e9+0.5*v/1e9+12*v/10e9+0.5*v/1e9, 16*v/10e9
	fusedS, evalFused := 0.5*v/4e9+0.5*v/4e9, 0.5*v/2e9
	if got, want := sep.DenseS-fused.DenseS, separate-fusedS; math.Abs(got-want) > 1e-12 {
		t.Errorf("training's dense time, separate − fused = %v, want %v", got, want)
	}
	if got, want := sep.EvalS-fused.EvalS, evalSeparate-evalFused; math.Abs(got-want) > 1e-12 {
		t.Errorf("evaluation, separate − fused = %v, want %v", got, want)
	}
	if sep.AggrS != fused.AggrS || sep.CommS != fused.CommS {
		t.Errorf("aggregation %v / %v, comm %v / %v: only the dense passes may change", sep.AggrS, fused.AggrS, sep.CommS, fused.CommS)
	}
	// LayerNorm picks the LayerNorm variants (and Adam steps its two
	// parameter vectors)
	cfg.Model.LayerNorm = true
	ln, err := Predict(twoRanks(), prof, net, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ln.DenseS-fused.DenseS, (0.5*v/0.5e9+0.5*v/0.5e9)-fusedS+adamBytes*float64(2*cfg.Model.Hidden)/10e9; math.Abs(got-want) > 1e-12 {
		t.Errorf("with LayerNorm: %v more, want %v", got, want)
	}
	for name, spoil := range map[string]func(r *Rates){
		"three variants": func(r *Rates) { r.Hidden = r.Hidden[:3] },
		"one twice":      func(r *Rates) { r.Hidden[3] = r.Hidden[0] },
		"zero rate":      func(r *Rates) { r.Hidden[1].GVs = 0 },
		"neither":        func(r *Rates) { r.Hidden = nil },
	} {
		p := flatProfile()
		p.Rates[0].Hidden = append([]HiddenRate(nil), prof.Rates[0].Hidden...)
		p.Rates[0].LayerNormGVs = 0
		spoil(&p.Rates[0])
		if err := p.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

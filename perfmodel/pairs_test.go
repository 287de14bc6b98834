package perfmodel

import (
	"math"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/task"
)

// TestPredictPairs: the link task's pair exchange on two ranks, counted
// by hand. Training: rank 0 fetches 3 rows from rank 1, rank 1 fetches 2
// from rank 0, rows of the output width 47 forward and their gradients
// back; an evaluation fetches one list of 1 row twice. Over 1 Gbit/s (no
// latency) each transfer lasts its busiest node's bytes over the link's
// rate; rank 0 gathers rank 1's 10 scores (8 bytes each).
func TestPredictPairs(t *testing.T) {
	net, _ := ParseNetwork("1gbit")
	net.Inter.LatencyUS = 0
	pv := &task.PairVolume{Ranks: 2,
		Train: task.PairList{Name: "train", Fetches: 1, Pairs: []int64{40, 30}, Rows: []int64{3, 2},
			Msgs: []exchange.Message{{From: 0, To: 1, Rows: 2}, {From: 1, To: 0, Rows: 3}}},
		Eval: []task.PairList{{Name: "valid", Fetches: 2, Pairs: []int64{6, 10}, Rows: []int64{0, 1},
			Msgs: []exchange.Message{{From: 0, To: 1, Rows: 1}}}}}
	cfg := Config{Model: gcn(), Mode: exchange.ModeHybrid, Wire: wires(32), Threads: 1, RanksPerNode: 1, CoresPerNode: 1, EvalEvery: 1}
	base, err := Predict(twoRanks(), flatProfile(), net, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Pairs = pv
	got, err := Predict(twoRanks(), flatProfile(), net, cfg)
	if err != nil {
		t.Fatal(err)
	}
	const row = 4 * 47
	if got.PairBytes != 2*5*row || got.EvalPairBytes != 2*row || got.TrainBytes != base.TrainBytes+2*5*row || got.EvalBytes != base.EvalBytes+2*row {
		t.Fatalf("pair bytes %d, eval %d (train %d, eval %d; without pairs %d, %d)", got.PairBytes, got.EvalPairBytes, got.TrainBytes, got.EvalBytes, base.TrainBytes, base.EvalBytes)
	}
	bw := net.Inter.GBs * 1e9 * net.Inter.Efficiency
	// Rank 0's comm: forward max(2, 3) rows' node bytes, backward the
	// same, the evaluation's row twice, and the scores.
	comm := (3*row + 3*row) / bw
	if d := got.CommS - base.CommS; math.Abs(d-comm) > 1e-9 {
		t.Errorf("training comm grows by %g s, want %g", d, comm)
	}
	evalComm := (2*row + 8*10) / bw
	if d := got.EvalS - base.EvalS; !(d > evalComm) {
		t.Errorf("evaluation grows by %g s, want more than its transfers' %g", d, evalComm)
	}
	cfg.Wire = wires(2)
	q, err := Predict(twoRanks(), flatProfile(), net, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * (wires(2)[0].Bytes(2, 47) + wires(2)[0].Bytes(3, 47)); q.PairBytes != want || !(q.QuantS > 0) {
		t.Errorf("int2: pair bytes %d, want %d; quant %g s", q.PairBytes, want, q.QuantS)
	}
	cfg.Pairs = &task.PairVolume{Ranks: 3}
	if _, err := Predict(twoRanks(), flatProfile(), net, cfg); err == nil || !strings.Contains(err.Error(), "perfmodel.Config.Pairs") {
		t.Errorf("pairs of 3 ranks on 2: %v", err)
	}
}

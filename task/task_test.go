package task

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/quant"
)

// auc equals the Mann–Whitney statistic with ties counting one half
// (scikit-learn's roc_auc_score on the same input).
func TestAUC(t *testing.T) {
	for _, tc := range []struct {
		s    []scoredLabel
		want float64
	}{
		{[]scoredLabel{{0.1, false}, {0.4, false}, {0.35, true}, {0.8, true}}, 0.75},
		{[]scoredLabel{{1, false}, {2, true}}, 1},
		{[]scoredLabel{{2, false}, {1, true}}, 0},
		{[]scoredLabel{{0.5, false}, {0.5, true}, {0.5, true}, {0.7, true}}, (0.5 + 0.5 + 1) / 3},
	} {
		if got, ok := auc(tc.s); !ok || math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("auc = %v (%v), want %v", got, ok, tc.want)
		}
	}
	if _, ok := auc([]scoredLabel{{1, true}, {2, true}}); ok {
		t.Error("one class: want no AUC")
	}
}

// The multilabel loss is BCE with logits over the labelled entries only,
// its gradient (σ(x) - y)/denom there; tasks with one class in a split
// are left out of the mean ROC-AUC.
func TestMultilabelLossAndMetrics(t *testing.T) {
	nan := float32(math.NaN())
	y := &dense.Matrix{Rows: 3, Cols: 2, Data: []float32{1, nan, 0, 1, 1, 1}}
	ml := &multilabel{y: y, labelled: []bool{true, true, true}}
	x := &dense.Matrix{Rows: 3, Cols: 2, Data: []float32{2, 7, -1, 0.5, 0.25, -3}}
	rows := []int32{0, 1, 2}
	loss, g, err := ml.Loss(nil, x, rows, 5, 1)
	if err != nil {
		t.Fatal(err)
	}
	var want float64
	for i, yv := range y.Data {
		if yv != yv {
			if g.Data[i] != 0 {
				t.Errorf("gradient of unlabelled entry %d: %v", i, g.Data[i])
			}
			continue
		}
		xv := float64(x.Data[i])
		want += -float64(yv)*math.Log(1/(1+math.Exp(-xv))) - (1-float64(yv))*math.Log(1-1/(1+math.Exp(-xv)))
		if d := float64(g.Data[i]) - (1/(1+math.Exp(-xv))-float64(yv))/5; math.Abs(d) > 1e-7 {
			t.Errorf("gradient of entry %d off by %g", i, d)
		}
	}
	if math.Abs(loss-want) > 1e-12 || ml.Terms(0, rows) != 5 {
		t.Fatalf("loss %v, want %v; terms %d, want 5", loss, want, ml.Terms(0, rows))
	}
	sc, err := ml.Evaluate(comm.Single(), x, [3][]int32{rows, nil, nil})
	if err != nil {
		t.Fatal(err)
	}
	// Task 0: scores 2 (1), -1 (0), 0.25 (1): AUC 1. Task 1 has one class.
	// Predictions > 0: 2→1 TP, -1→0 TN, 0.25→1 TP; 0.5→1 TP, -3→0 FN.
	if sc.Main[0] != 1 || math.Abs(sc.Extra["train_f1"]-6.0/7) > 1e-12 {
		t.Fatalf("train ROC-AUC %v (want 1), micro-F1 %v (want 6/7)", sc.Main[0], sc.Extra["train_f1"])
	}
}

// Regression: squared error, RMSE, MAE and R² per target.
func TestRegressionMetrics(t *testing.T) {
	y := &dense.Matrix{Rows: 4, Cols: 1, Data: []float32{1, 2, 3, 4}}
	x := &dense.Matrix{Rows: 4, Cols: 1, Data: []float32{1, 2, 3, 6}}
	r := &regression{y: y}
	rows := []int32{0, 1, 2, 3}
	loss, g, err := r.Loss(nil, x, rows, 4, 1)
	if err != nil || loss != 4 || g.Data[3] != 1 {
		t.Fatalf("loss %v, gradient %v, error %v", loss, g.Data, err)
	}
	sc, err := r.Evaluate(comm.Single(), x, [3][]int32{nil, rows, nil})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Main[1] != 1 || sc.Extra["val_mae"] != 0.5 || sc.Extra["val_mse"] != 1 || math.Abs(sc.Extra["val_r2"]-(1-4/5.0)) > 1e-12 {
		t.Fatalf("RMSE %v MAE %v MSE %v R² %v", sc.Main[1], sc.Extra["val_mae"], sc.Extra["val_mse"], sc.Extra["val_r2"])
	}
}

// Bad target tables are one-line errors naming the file and the entry.
func TestReadTargetsErrors(t *testing.T) {
	dir := t.TempDir()
	npy := func(name string, rows, cols int, v []float32) string {
		p := filepath.Join(dir, name)
		if err := graph.WriteNpyF32(p, rows, cols, v); err != nil {
			t.Fatal(err)
		}
		return p
	}
	csv := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ml, _ := Lookup("multilabel")
	rg, _ := Lookup("regression")
	nan := float32(math.NaN())
	for _, tc := range []struct {
		path string
		kind Kind
		want string
	}{
		{npy("half.npy", 2, 2, []float32{0, 1, 0.5, 1}), ml, "half.npy: node 1, target 0 is 0.5: want 0, 1 or NaN"},
		{npy("nan.npy", 3, 1, []float32{1, nan, 2}), rg, "nan.npy: node 1, target 0 is NaN: want a finite value"},
		{csv("ragged.csv", "0,1,1\n1,0\n"), ml, "ragged.csv:2: 2 columns, the first line has 3"},
		{csv("word.csv", "0,1\n1,yes\n"), ml, `word.csv:2: column 2: "yes" is not a number`},
		{csv("two.csv", "0,1\n1,2\n"), ml, "two.csv: node 1, target 1 is 2"},
		{csv("y.txt", "1\n"), ml, "y.txt: targets must be"},
	} {
		_, err := ReadTargets(tc.path, tc.kind)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", filepath.Base(tc.path), err, tc.want)
		}
	}
	y, err := ReadTargets(csv("ok.csv", "0,1\n,nan\n"), ml)
	if err != nil || y.Rows != 2 || y.Cols != 2 || y.Y[2] == y.Y[2] || y.Y[3] == y.Y[3] {
		t.Fatalf("ok.csv: %+v, %v", y, err)
	}
}

// countPairs by hand: nodes 0–5 owned two a rank by ranks 0, 1, 2. Rank 0
// scores (0,2), (0,3), (1,2), (1,0): rows 2 and 3 from rank 1 (2 once);
// rank 1 scores (2,4): row 4 from rank 2; rank 2 scores (4,5), local, and
// (5,0): row 0 from rank 0.
func TestCountPairs(t *testing.T) {
	owner := []int32{0, 0, 1, 1, 2, 2}
	pairs := [][2]int32{{0, 2}, {0, 3}, {1, 2}, {2, 4}, {4, 5}, {5, 0}, {1, 0}}
	l := countPairs("x", 1, pairs, owner, 3)
	want := []exchange.Message{{From: 0, To: 2, Rows: 1}, {From: 1, To: 0, Rows: 2}, {From: 2, To: 1, Rows: 1}}
	if !slices.Equal(l.Pairs, []int64{4, 1, 2}) || !slices.Equal(l.Rows, []int64{2, 1, 1}) || !slices.Equal(l.Msgs, want) {
		t.Fatalf("pairs %v rows %v messages %v, want [4 1 2] [2 1 1] %v", l.Pairs, l.Rows, l.Msgs, want)
	}
	// Rows of 4 values: 16 bytes in fp32; int2 with fp32 parameters 1 + 8.
	e := l
	e.Fetches = 2
	for _, tc := range []struct {
		wire                  quant.Wire
		train, eval, evalRows []int64
	}{
		{quant.Wire{Bits: 32}, []int64{48, 48, 32}, []int64{32, 64, 32}, []int64{4, 2, 2}},
		{quant.Wire{Bits: 2}, []int64{27, 27, 18}, []int64{18, 36, 18}, []int64{4, 2, 2}},
	} {
		r := (&PairVolume{Ranks: 3, Train: l, Eval: []PairList{e}}).Report(4, tc.wire)
		if !slices.Equal(r.TrainBytes, tc.train) || !slices.Equal(r.EvalBytes, tc.eval) || !slices.Equal(r.EvalRows, tc.evalRows) ||
			!slices.Equal(r.ScoreBytes, []int64{0, 8, 16}) || r.TrainBytesTotal != tc.train[0]+tc.train[1]+tc.train[2] {
			t.Fatalf("%s: report %+v, want train bytes %v, eval %v, rows %v, scores [0 8 16]", tc.wire, r, tc.train, tc.eval, tc.evalRows)
		}
	}
	es := &graph.EdgeSplit{Train: pairs[:4], Valid: pairs[4:6], Test: pairs[6:]}
	v, err := PairVolumes(owner, 3, es, 2, 9)
	if err != nil {
		t.Fatal(err)
	}
	sum := func(a []int64) (s int64) {
		for _, x := range a {
			s += x
		}
		return s
	}
	if sum(v.Train.Pairs) != 12 || len(v.Eval) != 3 || sum(v.Eval[0].Pairs) != 8 || sum(v.Eval[1].Pairs) != 4 || sum(v.Eval[2].Pairs) != 2 ||
		v.Eval[0].Fetches != 1 || v.Eval[1].Fetches != 2 || v.Eval[2].Fetches != 2 {
		t.Fatalf("volume %+v: want 4 training edges × 3 pairs, 2 pairs an evaluation edge, fetches 1, 2, 2", v)
	}
	if _, err := PairVolumes(owner, 3, &graph.EdgeSplit{Train: [][2]int32{{0, 6}}}, 1, 1); err == nil || !strings.Contains(err.Error(), "train pair 0 (0, 6)") {
		t.Fatalf("pair outside the graph: %v", err)
	}
}

// rankMetrics is OGB's citation2 evaluator: the rank of a positive among
// its own negatives is the mean of the optimistic and pessimistic ranks
// (ties), plus one; MRR and Hits@K average over the positives.
func TestRankMetrics(t *testing.T) {
	s := []scoredLabel{
		{0.5, true}, {0.9, false}, {0.5, false}, {0.1, false}, // above 1, at least 2: rank 2.5
		{2, true}, {1, false}, {0, false}, {-1, false}, // rank 1
	}
	out := make([]float64, 3)
	n := rankMetrics(s, 4, []int{1, 3}, out)
	if n != 2 || math.Abs(out[0]-(1/2.5+1)) > 1e-12 || out[1] != 1 || out[2] != 2 {
		t.Fatalf("groups %v, sums %v", n, out)
	}
	for _, tc := range []struct {
		m         string
		perSource bool
		want      string
	}{{"auto", true, "mrr"}, {"", false, "rocauc"}, {"hits50", false, "hits50"}, {"mrr", true, "mrr"}} {
		if got, err := linkMetric(tc.m, tc.perSource); err != nil || got != tc.want {
			t.Errorf("linkMetric(%q, %v) = %q, %v; want %q", tc.m, tc.perSource, got, err, tc.want)
		}
	}
	for _, m := range []string{"hits0", "hits", "auc", "hitsx"} {
		if CheckLinkMetric(m) == nil {
			t.Errorf("%q accepted", m)
		}
	}
	if _, err := linkMetric("mrr", false); err == nil || !strings.Contains(err.Error(), "target_node_neg") {
		t.Errorf("mrr without per-source negatives: %v", err)
	}
}

// .npz target tables: the array y (or node_label, or the only array),
// shape kept; several other arrays are an error naming the file.
func TestReadTargetsNpz(t *testing.T) {
	dir := t.TempDir()
	npz := func(name string, arrays ...graph.NpyData) string {
		p := filepath.Join(dir, name)
		if err := graph.WriteNpz(p, arrays, true); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ml, _ := Lookup("multilabel")
	nan := float32(math.NaN())
	y := graph.NpyData{Name: "y", Shape: []int{2, 3}, Data: []float32{0, 1, nan, 1, 1, 0}}
	for _, p := range []string{
		npz("y.npz", y, graph.NpyData{Name: "extra", Shape: []int{1}, Data: []int64{7}}),
		npz("only.npz", graph.NpyData{Name: "arr_0", Shape: []int{2, 3}, Data: []float64{0, 1, math.NaN(), 1, 1, 0}}),
	} {
		got, err := ReadTargets(p, ml)
		if err != nil || got.Rows != 2 || got.Cols != 3 || got.Y[1] != 1 || got.Y[2] == got.Y[2] {
			t.Fatalf("%s: %+v, %v", p, got, err)
		}
	}
	bad := npz("bad.npz", graph.NpyData{Name: "y", Shape: []int{2}, Data: []float32{0, 2}})
	two := npz("two.npz", graph.NpyData{Name: "a", Shape: []int{1}, Data: []float32{0}}, graph.NpyData{Name: "b", Shape: []int{1}, Data: []float32{0}})
	for p, want := range map[string]string{bad: "bad.npz: node 1, target 0 is 2", two: "two.npz: no array named y or node_label, and 2 arrays (a, b)"} {
		if _, err := ReadTargets(p, ml); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line containing %q", p, err, want)
		}
	}
}

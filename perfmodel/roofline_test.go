package perfmodel

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMachineBound(t *testing.T) {
	m := Machine{GemmGFLOPS: 100, StreamGBs: 10}
	if s, b := m.Bound(Work{Flops: 2e9, Bytes: 1e9}); s != 0.1 || b != "bytes" {
		t.Fatalf("memory-bound work: %g s, %s; want 0.1 s, bytes", s, b)
	}
	if s, b := m.Bound(Work{Flops: 5e10, Bytes: 1e8}); s != 0.5 || b != "flops" {
		t.Fatalf("compute-bound work: %g s, %s; want 0.5 s, flops", s, b)
	}
	if (Machine{GemmGFLOPS: 1}).Validate() == nil || (Machine{GemmGFLOPS: math.NaN(), StreamGBs: 1}).Validate() == nil {
		t.Fatal("a machine without both rates positive validated")
	}
}

// GCN 4 → 8 → 3 on 10 nodes, 30 edges: layer 0 propagates first (4 < 8),
// layer 1 transforms first (3 ≤ 8). Training aggregates widths 4 and 3
// forward, 3 backward (layer 0's input gradient is not wanted); the
// evaluation pass only layer 1's (layer 0's aggregate is cached).
func TestRooflineGCNSchedule(t *testing.T) {
	m := Model{Kind: "gcn", Layers: 2, In: 4, Hidden: 8, Classes: 3}
	work, err := Roofline(m, Graph{Nodes: 10, Edges: 30, TrainNodes: 4}, true)
	if err != nil {
		t.Fatal(err)
	}
	// An aggregation of width w: 40 entries (30 edges, 10 self-loops),
	// 2·40·w flops; bytes 8·10·w (rows in and out) + 4·40 (indices) +
	// 8·11 (row pointers) + 4·10 (degrees).
	agg := func(w float64) Work { return Work{80 * w, 80*w + 288} }
	want := Work{}
	for _, w := range []float64{4, 3, 3} {
		want.add(agg(w))
	}
	if work[StageAggr] != want {
		t.Fatalf("aggregation %+v, want %+v", work[StageAggr], want)
	}
	// Evaluation: X·W0 (2·10·4·8), the hidden stage (2 flops a value),
	// X·W1 (2·10·8·3), the aggregation of width 3, the bias and the arg
	// max (a flop a value each).
	if f := work[StageEval].Flops; f != 640+160+480+240+30+30 {
		t.Fatalf("evaluation %g flops, want 1580", f)
	}
	// Adam: 12 flops and 28 bytes a parameter (4·8+8 + 8·3+3 = 67).
	if o := work[StageOpt]; o != (Work{12 * 67, 28 * 67}) {
		t.Fatalf("optimiser %+v, want 67 parameters' Adam", o)
	}
	// Without the cache (label propagation) the evaluation aggregates
	// layer 0's input of width 4 too.
	nc, err := Roofline(m, Graph{Nodes: 10, Edges: 30, TrainNodes: 4}, false)
	if err != nil || nc[StageEval].Flops != work[StageEval].Flops+agg(4).Flops {
		t.Fatalf("evaluation without the cache: %+v, %v", nc[StageEval], err)
	}
	if _, err := Roofline(m, Graph{Nodes: 10, Edges: 30, TrainNodes: 11}, true); err == nil {
		t.Fatal("more training nodes than nodes: no error")
	}
}

// GAT's attention work counts no per-edge-per-head bytes: the
// coefficients are recomputable.
func TestRooflineAttentionBytes(t *testing.T) {
	g := Graph{Nodes: 100, Edges: 900, TrainNodes: 10}
	f := attentionWork(g, 2, 16, false)
	rows := 100.0 * 16
	if want := 8*rows + 2*4*100*2 + 4*1000 + 8*101; f.Bytes != want {
		t.Fatalf("forward bytes %g, want %g", f.Bytes, want)
	}
	if b := attentionWork(g, 2, 16, true); !(b.Flops > f.Flops && b.Bytes > f.Bytes) {
		t.Fatalf("backward %+v not above forward %+v", b, f)
	}
}

func TestRoofReport(t *testing.T) {
	m := Machine{GemmGFLOPS: 1, StreamGBs: 1}
	work := map[string]Work{StageAggr: {Flops: 1e9, Bytes: 3e9}, StageDense: {Flops: 4e9, Bytes: 1e9}}
	rows := RoofReport(work, m, map[string]float64{StageAggr: 6, StageDense: 4, StageEpoch: 14})
	if len(rows) != len(RoofStages)+1 {
		t.Fatalf("%d rows", len(rows))
	}
	a, d, e := rows[0], rows[1], rows[len(rows)-1]
	if a.BoundS != 3 || a.Binds != "bytes" || a.Fraction != 0.5 || d.BoundS != 4 || d.Binds != "flops" || d.Fraction != 1 {
		t.Fatalf("stage rows %+v %+v", a, d)
	}
	if e.Stage != StageEpoch || e.BoundS != 7 || e.Fraction != 0.5 || e.Flops != 5e9 {
		t.Fatalf("epoch row %+v, want the stages' bounds summed (7 s) over 14 s", e)
	}
	if rows[2].Fraction != 0 {
		t.Fatalf("a stage without a measured time has fraction %g", rows[2].Fraction)
	}
}

func TestReadRunTimes(t *testing.T) {
	dir := t.TempDir()
	ep := func(n int, s float64, evaluated bool) string {
		return fmt.Sprintf(`{"epoch":%d,"epoch_s":%g,"aggr_s":%g,"dense_s":0.5,"other_s":0.1,"eval_s":0.2,"evaluated":%t}`, n, s, s, evaluated)
	}
	lines := []string{`{"header":true,"command":["supergcn","train","--model","gcn"],"ranks":1,"threads":2}`,
		ep(1, 9, true), ep(2, 1, true), ep(3, 5, false), ep(4, 3, true), ep(5, 2, true), `{"final":true}`}
	p := filepath.Join(dir, "m.jsonl")
	os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	rt, err := ReadRunTimes(p)
	if err != nil {
		t.Fatal(err)
	}
	// Evaluated epochs 2, 4, 5 (epoch 1 left out): aggr 1, 3, 2.
	if rt.Epochs != 3 || rt.Measured[StageAggr] != 2 || rt.Measured[StageEpoch] != 2 || rt.Measured[StageDense] != 0.5 ||
		rt.Threads != 2 || rt.Ranks != 1 || rt.Command[1] != "train" {
		t.Fatalf("%+v", rt)
	}
	if rt.EvalCache != nil {
		t.Fatalf("a header without eval_cache: EvalCache %v, want nil", *rt.EvalCache)
	}
	os.WriteFile(p, []byte(strings.Replace(lines[0], `"ranks"`, `"eval_cache":false,"ranks"`, 1)+"\n"+ep(2, 1, true)+"\n"), 0o644)
	if rt, err = ReadRunTimes(p); err != nil || rt.EvalCache == nil || *rt.EvalCache {
		t.Fatalf("a header with eval_cache false: %+v, %v", rt, err)
	}
	os.WriteFile(p, []byte(lines[0]+"\n{\"epoch\":1,\"evaluated\":true,\"aggr_s\":\"x\"}\n"), 0o644)
	if _, err := ReadRunTimes(p); err == nil || !strings.Contains(err.Error(), "m.jsonl:2") {
		t.Fatalf("bad field: %v, want an error naming m.jsonl:2", err)
	}
	os.WriteFile(p, []byte(lines[1]+"\n"), 0o644)
	if _, err := ReadRunTimes(p); err == nil || !strings.Contains(err.Error(), "no header") {
		t.Fatalf("no header: %v", err)
	}
}

package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/supergcn/supergcn/perfmodel"
)

// TestBenchRooflineE2E trains GCN and GAT briefly on a generated graph and
// reports their rooflines from the metrics files, with given rates and
// with a profile's.
func TestBenchRooflineE2E(t *testing.T) {
	dir := t.TempDir()
	for _, model := range []string{"gcn", "gat"} {
		metrics := filepath.Join(dir, model+".jsonl")
		r := run(t, 3*time.Minute, nil, "train", "--synthetic", "products,nodes=3000", "--model", model, "--hidden", "16",
			"--epochs", "3", "--threads", "1", "--quiet", "--metrics", metrics)
		if r.code != 0 {
			t.Fatalf("train %s: exit %d\n%s", model, r.code, r.stderr)
		}
		r = run(t, 3*time.Minute, nil, "bench", "roofline", "--metrics", metrics, "--gemm-gflops", "50", "--stream-gbs", "10", "--json")
		if r.code != 0 {
			t.Fatalf("bench roofline %s: exit %d\n%s", model, r.code, r.stderr)
		}
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if len(lines) != len(perfmodel.RoofStages)+1 {
			t.Fatalf("%s: %d lines, want a stage a line and the epoch:\n%s", model, len(lines), r.stdout)
		}
		for i, l := range lines {
			var row perfmodel.RoofRow
			if err := json.Unmarshal([]byte(l), &row); err != nil {
				t.Fatalf("%s: line %q: %v", model, l, err)
			}
			want := perfmodel.StageEpoch
			if i < len(perfmodel.RoofStages) {
				want = perfmodel.RoofStages[i]
			}
			if row.Stage != want || !(row.Flops > 0) || !(row.Bytes > 0) || !(row.BoundS > 0) || !(row.MeasuredS > 0) ||
				row.Fraction != row.BoundS/row.MeasuredS {
				t.Fatalf("%s: row %d %+v", model, i, row)
			}
		}
		r = run(t, time.Minute, nil, "bench", "roofline", "--metrics", metrics, "--profile", "../../perfmodel/profiles/xeon-gold-6148.json")
		if r.code != 0 || !strings.Contains(r.stdout, "profile ") || !strings.Contains(r.stdout, "aggregation") {
			t.Fatalf("bench roofline --profile %s: exit %d\n%s%s", model, r.code, r.stdout, r.stderr)
		}
	}
	for _, args := range [][]string{{}, {"--metrics", filepath.Join(dir, "gcn.jsonl"), "--gemm-gflops", "5"},
		{"--metrics", filepath.Join(dir, "none.jsonl")}} {
		r := run(t, time.Minute, nil, append([]string{"bench", "roofline"}, args...)...)
		if r.code == 0 || strings.Contains(r.stderr, "goroutine") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 2 {
			t.Fatalf("bench roofline %v: exit %d, stderr %q: want a short error", args, r.code, r.stderr)
		}
	}
}

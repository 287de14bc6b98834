package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCLIEvalCache: train --eval-cache on (given as true, predict's
// spelling) and off print the same losses and accuracies every epoch, the
// metrics header says which ran, the memory line names the aggregate only
// when it is kept, and a value that is none of auto|on|off is refused.
func TestCLIEvalCache(t *testing.T) {
	dir := t.TempDir()
	args := []string{"train", "--synthetic", "nodes=3000,degree=8,feat=16,classes=5", "--hidden", "32", "--epochs", "4",
		"--threads", "1", "--mpi", "off"}
	type record struct {
		Header    bool     `json:"header"`
		EvalCache *bool    `json:"eval_cache"`
		Loss      float64  `json:"loss"`
		TrainAcc  float64  `json:"train_acc"`
		ValAcc    float64  `json:"val_acc"`
		TestAcc   float64  `json:"test_acc"`
		ValLoss   *float64 `json:"val_loss"`
		TestLoss  *float64 `json:"test_loss"`
	}
	runs := map[string][]record{}
	for _, c := range []string{"true", "off"} {
		m := filepath.Join(dir, c+".jsonl")
		r := run(t, 2*time.Minute, nil, slices.Concat(args, []string{"--eval-cache", c, "--metrics", m})...)
		if r.code != 0 {
			t.Fatalf("--eval-cache %s: exit %d\n%s", c, r.code, r.stderr)
		}
		kept := strings.Contains(firstLine(r.stdout, "memory:"), "the evaluation passes' aggregate of the features")
		if kept != (c == "true") {
			t.Errorf("--eval-cache %s: memory line %q", c, firstLine(r.stdout, "memory:"))
		}
		f, err := os.Open(m)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var rec record
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatal(err)
			}
			runs[c] = append(runs[c], rec)
		}
		f.Close()
		if h := runs[c][0]; !h.Header || h.EvalCache == nil || *h.EvalCache != (c == "true") {
			t.Fatalf("--eval-cache %s: header eval_cache %v", c, h.EvalCache)
		}
	}
	on, off := runs["true"][1:], runs["off"][1:] // epochs and the final record
	if len(on) != len(off) || len(on) < 5 {
		t.Fatalf("%d records with the aggregate, %d without", len(on), len(off))
	}
	for i := range on {
		if !reflect.DeepEqual(on[i], off[i]) {
			t.Fatalf("record %d with the aggregate %+v, without %+v", i+2, on[i], off[i])
		}
	}
	expectQuickFailure(t, badCase{name: "eval-cache sometimes", args: slices.Concat(args, []string{"--eval-cache", "sometimes"}),
		want: `--eval-cache: "sometimes" is not auto, on, off`})
}

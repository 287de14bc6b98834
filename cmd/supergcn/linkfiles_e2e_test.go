package main

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/testdataset"
)

// writeEdgeSplitCSV writes a fixed edge split of cora as csv split files:
// every 20th undirected edge (u < v) to validation, the next to test, each
// held-out edge with a shared negative (u, u+7 mod N), the rest to train.
func writeEdgeSplitCSV(t *testing.T, dir, cora string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(readGz(t, filepath.Join(cora, "raw", "edge.csv.gz"))), "\n")
	seen := map[[2]int]bool{}
	var parts [3]strings.Builder
	var negs [2]strings.Builder
	k := 0
	for _, l := range lines {
		var u, v int
		if _, err := fmt.Sscanf(l, "%d,%d", &u, &v); err != nil {
			t.Fatal(err)
		}
		p := [2]int{min(u, v), max(u, v)}
		if u == v || seen[p] {
			continue
		}
		seen[p] = true
		i := 0
		switch k % 20 {
		case 0:
			i = 1
		case 1:
			i = 2
		}
		k++
		fmt.Fprintf(&parts[i], "%d,%d\n", p[0], p[1])
		if i > 0 {
			fmt.Fprintf(&negs[i-1], "%d,%d\n", p[0], (p[0]+7)%2708)
		}
	}
	for i, name := range []string{"train", "valid", "test"} {
		if err := os.WriteFile(filepath.Join(dir, name+".csv"), []byte(parts[i].String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			if err := os.WriteFile(filepath.Join(dir, name+"_neg.csv"), []byte(negs[i-1].String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// --edge-split-files: a fixed split (csv pairs, shared negatives) trains
// cora to a test ROC-AUC ≥ 0.85, Hits@50 selecting; mpirun -np 2 gives
// one process's losses; bad files and flags are one-line errors naming
// the file and the entry (or the flag).
func TestCLILinkSplitFiles(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	split := filepath.Join(dir, "split")
	os.Mkdir(split, 0o755)
	writeEdgeSplitCSV(t, split, cora)
	args := []string{"--data", cora, "--task", "link", "--edge-split-files", split, "--link-metric", "hits50", "--feat-norm", "row",
		"--hidden", "64", "--dropout", "0", "--weight-decay", "0", "--threads", "1"}
	r := run(t, 5*time.Minute, nil, append([]string{"train", "--epochs", "60", "--eval-every", "20"}, args...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "edge split files "+split+": ") || !strings.Contains(r.stdout, "shared negatives") ||
		!strings.Contains(r.stdout, "final: best val hits50") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	exact := append([]string{"--epochs", "8", "--bits", "32", "--quiet"}, args...)
	ref := trainLosses(t, dir, nil, "files-ref", exact...)
	sameLosses(t, "files-np2", ref, trainLosses(t, dir, mpirun(t, 2), "files-np2", append(exact, "--partition-method", "random")...))

	// eval --pairs: the test positives' and negatives' scores give the
	// test ROC-AUC training reported for the saved epoch, at 1 and 2 ranks.
	ck, metrics := filepath.Join(dir, "link.ckpt"), filepath.Join(dir, "m.jsonl")
	if r := run(t, 5*time.Minute, nil, append([]string{"train", "--epochs", "6", "--decoder", "mlp", "--save", ck, "--metrics", metrics, "--quiet"}, args...)...); r.code != 0 {
		t.Fatalf("train: exit %d\n%s", r.code, r.stderr)
	}
	var final struct {
		Test   float64 `json:"last_test_acc"`
		Metric string  `json:"metric"`
	}
	lines := strings.Split(strings.TrimSpace(readFile(t, metrics)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &final); err != nil {
		t.Fatal(err)
	}
	score := func(launch []string, name string) []float32 {
		out := filepath.Join(dir, name+".npy")
		r := run(t, 2*time.Minute, launch, "eval", "--model", ck, "--data", cora, "--edge-split-files", split, "--pairs", filepath.Join(split, name+".csv"),
			"--scores", out, "--threads", "1")
		if r.code != 0 || !strings.Contains(r.stdout, "(mlp decoder) -> "+out) {
			t.Fatalf("eval --pairs %s: exit %d\n%s\n%s", name, r.code, r.stdout, r.stderr)
		}
		a, err := graph.ReadNpy(out)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := a.Float32()
		return v
	}
	pos, neg := score(nil, "test"), score(mpirun(t, 2), "test_neg")
	var u float64
	for _, p := range pos {
		for _, n := range neg {
			switch {
			case p > n:
				u++
			case p == n:
				u += 0.5
			}
		}
	}
	// hits50 selects; ROC-AUC is in extra: compare with the AUC of the epoch.
	var last struct {
		Extra map[string]float64 `json:"extra"`
	}
	json.Unmarshal([]byte(lines[len(lines)-2]), &last)
	if auc := u / float64(len(pos)*len(neg)); math.Abs(auc-last.Extra["test_rocauc"]) > 1e-6 {
		t.Fatalf("ROC-AUC of the eval --pairs scores %.6f, training's %.6f", auc, last.Extra["test_rocauc"])
	}
	if ref := score(nil, "test_neg"); !slices.EqualFunc(ref, neg, func(a, b float32) bool { return math.Abs(float64(a-b)) < 1e-5 }) {
		t.Fatalf("mpirun -np 2 scores differ from one process's")
	}

	bad := filepath.Join(dir, "bad")
	os.Mkdir(bad, 0o755)
	for _, f := range []string{"train.csv", "valid.csv", "test.csv"} {
		os.WriteFile(filepath.Join(bad, f), []byte("0,1\n1,2\n"), 0o644)
	}
	os.WriteFile(filepath.Join(bad, "test_neg.csv"), []byte("0,1\n5,2708\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--task", "link", "--edge-split-files", bad}, "test_neg.csv:2: node id 2708 outside [0,2708)"},
		{[]string{"--task", "link", "--edge-split-files", split, "--edge-split", "random:0.8,0.1"}, "--edge-split-files: " + split + ": give the edge split either as files or as --edge-split"},
		{[]string{"--task", "link", "--edge-split-files", filepath.Join(dir, "none")}, "--edge-split-files: " + filepath.Join(dir, "none") + " is not a directory"},
		{[]string{"--edge-split-files", split}, "--edge-split-files: for --task link"},
		{[]string{"--task", "link", "--edge-split-files", split, "--link-metric", "mrr"}, "--link-metric: mrr ranks each positive among its own negatives"},
		{[]string{"--task", "link", "--edge-split-files", split, "--link-metric", "hits0"}, "--link-metric: \"hits0\""},
		{[]string{"--task", "link", "--edge-split-files", split, "--decoder", "bilinear"}, "--decoder: \"bilinear\""},
	} {
		r := run(t, time.Minute, nil, append([]string{"train", "--data", cora, "--epochs", "1", "--quiet"}, c.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("train %v: exit %d, stderr %q, want one line with %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

func readGz(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// eval --pairs refusals: one line naming the flag, or the file and entry.
func TestCLIEvalPairsErrors(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	ck := filepath.Join(dir, "l.ckpt")
	if r := run(t, 2*time.Minute, nil, "train", "--data", cora, "--task", "link", "--edge-split", "random:0.85,0.05,0.1:1", "--hidden", "8",
		"--epochs", "1", "--threads", "1", "--save", ck, "--quiet"); r.code != 0 {
		t.Fatalf("train: exit %d\n%s", r.code, r.stderr)
	}
	pairs := filepath.Join(dir, "p.csv")
	os.WriteFile(pairs, []byte("0,1\n2,3\n4,99999\n"), 0o644)
	out := filepath.Join(dir, "s.npy")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--pairs", pairs}, "--pairs: give --scores FILE.npy"},
		{[]string{"--scores", out}, "--scores goes with --pairs"},
		{[]string{"--pairs", pairs, "--scores", out, "--edge-split", "random:0.85,0.05,0.1:1"}, "p.csv:3: node id 99999 outside [0,2708)"},
		{[]string{"--pairs", pairs, "--scores", out, "--predictions", filepath.Join(dir, "x.npy")}, "--pairs: scores pairs only"},
	} {
		r := run(t, time.Minute, nil, append([]string{"eval", "--model", ck, "--data", cora, "--threads", "1"}, c.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("eval %v: exit %d, stderr %q, want one line with %q", c.args, r.code, r.stderr, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("eval %v wrote %s", c.args, out)
		}
	}
}

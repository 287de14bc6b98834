package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/testdataset"
)

// Edge weights in an edge list train weighted; --ignore-weights trains on
// the unweighted graph and says so.
func TestEdgeWeightsTrainedOrIgnored(t *testing.T) {
	dir := t.TempDir()
	el := filepath.Join(dir, "w.txt")
	var b strings.Builder
	for i := 0; i < 200; i++ {
		b.WriteString(strconv.Itoa(i) + " " + strconv.Itoa((i*7+1)%200) + " 0.5" + "\n")
	}
	os.WriteFile(el, []byte(b.String()), 0o644)
	args := []string{"train", "--data", el, "--synthetic-features", "8", "--classes", "2", "--epochs", "2"}
	r := run(t, time.Minute, nil, args...)
	if r.code != 0 || strings.Contains(r.stdout, "edge weights ignored") || !strings.Contains(r.stdout, "weighted") {
		t.Fatalf("weighted edge list: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	r = run(t, time.Minute, nil, append(args, "--ignore-weights")...)
	if r.code != 0 || !strings.Contains(r.stdout, "edge weights ignored") {
		t.Fatalf("--ignore-weights: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}

// train --save-best and --quiet, then eval --predictions and --embeddings:
// .npy files of N × classes and N × hidden; supergcn help train is the
// train usage.
func TestSaveBestQuietAndEvalOutputs(t *testing.T) {
	coraDir := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	best := filepath.Join(dir, "best.ckpt")
	r := run(t, 2*time.Minute, nil, "train", "--data", coraDir, "--feat-norm", "row", "--epochs", "20", "--save-best", best, "--quiet")
	if r.code != 0 {
		t.Fatalf("train: exit %d\n%s", r.code, r.stderr)
	}
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "final:") || r.stderr != "" {
		t.Fatalf("--quiet printed more than the summary:\nstdout %q\nstderr %q", r.stdout, r.stderr)
	}
	pred, emb := filepath.Join(dir, "pred.npy"), filepath.Join(dir, "emb.npy")
	r = run(t, 2*time.Minute, nil, "eval", "--model", best, "--data", coraDir, "--predictions", pred, "--embeddings", emb)
	if r.code != 0 {
		t.Fatalf("eval: exit %d\n%s", r.code, r.stderr)
	}
	for path, cols := range map[string]int{pred: 7, emb: 16} {
		a, err := graph.ReadNpy(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Shape) != 2 || a.Shape[0] != 2708 || a.Shape[1] != cols {
			t.Fatalf("%s: shape %v, want [2708 %d]", path, a.Shape, cols)
		}
	}
	r = run(t, time.Minute, nil, "help", "train")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "usage: supergcn train") || !strings.Contains(r.stdout, "-save-best") || !strings.Contains(r.stdout, "-stop-after") {
		t.Fatalf("help train: exit %d\n%s", r.code, r.stdout)
	}
}

// train --predictions and --embeddings write what eval writes of the
// --save-best model, byte for byte; they are refused, exit 2 before any
// data is read, when unwritable, naming another file, or (embeddings)
// with no hidden layer.
func TestTrainOutputsAreEvalOfBest(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	r := run(t, 2*time.Minute, nil, "train", "--data", cora, "--epochs", "30", "--mpi", "off", "--quiet",
		"--save-best", p("best.ckpt"), "--predictions", p("P.npy"), "--embeddings", p("E.npy"))
	if r.code != 0 || strings.Contains(r.stdout, "wrote") {
		t.Fatalf("train: exit %d (--quiet: no 'wrote' lines)\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, 2*time.Minute, nil, "eval", "--model", p("best.ckpt"), "--data", cora, "--mpi", "off",
		"--predictions", p("Q.npy"), "--embeddings", p("F.npy"))
	if r.code != 0 {
		t.Fatalf("eval: exit %d\n%s", r.code, r.stderr)
	}
	for _, pair := range [][2]string{{"P.npy", "Q.npy"}, {"E.npy", "F.npy"}} {
		a, errA := os.ReadFile(p(pair[0]))
		b, errB := os.ReadFile(p(pair[1]))
		if errA != nil || errB != nil || len(a) == 0 || string(a) != string(b) {
			t.Errorf("train's %s and eval's %s differ (%v, %v)", pair[0], pair[1], errA, errB)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--predictions", p("no/such/dir/P.npy")}, "--predictions:"},
		{[]string{"--save", p("S.ckpt"), "--predictions", p("S.ckpt")}, "--predictions"},
		{[]string{"--metrics", p("M.npy"), "--embeddings", p("M.npy")}, "--embeddings"},
		{[]string{"--predictions", p("X.npy"), "--embeddings", p("X.npy")}, "--embeddings"},
		{[]string{"--model", "sgc", "--embeddings", p("X.npy")}, "--embeddings: the model has 1 layer"},
	} {
		r := run(t, time.Minute, nil, append([]string{"train", "--data", p("missing"), "--mpi", "off"}, c.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("train %v: exit %d, stderr %q, want exit 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// A resumed train --predictions whose best validation epoch predates the
// resume takes that model from the --save-best file; without one it is
// refused before training (the checkpoint untouched), never after.
func TestTrainOutputsResumedBest(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	base := []string{"train", "--data", cora, "--mpi", "off", "--quiet", "--save", p("a.ckpt")}
	r := run(t, 2*time.Minute, nil, append(base, "--epochs", "40", "--save-best", p("best.ckpt"), "--metrics", p("m.jsonl"))...)
	if r.code != 0 {
		t.Fatalf("train: exit %d\n%s", r.code, r.stderr)
	}
	if _, final := testdataset.MetricsRecords(t, p("m.jsonl")); final["best_epoch"].(float64) >= 40 {
		t.Fatalf("the best epoch %v is the last: the test needs an earlier one", final["best_epoch"])
	}
	saved, _ := os.ReadFile(p("a.ckpt"))
	r = run(t, 2*time.Minute, nil, append(base, "--epochs", "41", "--resume", p("a.ckpt"), "--predictions", p("P.npy"))...)
	if after, _ := os.ReadFile(p("a.ckpt")); r.code == 0 || !strings.Contains(r.stderr, "--predictions/--embeddings: the best validation epoch") ||
		strings.Contains(r.stdout, "final:") || string(after) != string(saved) {
		t.Fatalf("resumed without --save-best: exit %d, want a refusal before training\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, 2*time.Minute, nil, append(base, "--epochs", "41", "--resume", p("a.ckpt"), "--save-best", p("best.ckpt"),
		"--predictions", p("P.npy"))...)
	if r.code != 0 {
		t.Fatalf("resumed with --save-best: exit %d\n%s", r.code, r.stderr)
	}
	r = run(t, 2*time.Minute, nil, "eval", "--model", p("best.ckpt"), "--data", cora, "--mpi", "off", "--predictions", p("Q.npy"))
	a, _ := os.ReadFile(p("P.npy"))
	b, _ := os.ReadFile(p("Q.npy"))
	if r.code != 0 || len(a) == 0 || string(a) != string(b) {
		t.Fatalf("resumed train's predictions differ from eval of the --save-best file (eval exit %d)\n%s", r.code, r.stderr)
	}
}

// Under MPI, train --predictions (gathered on rank 0) is what eval of the
// --save-best file writes on as many ranks, byte for byte.
func TestMPITrainOutputsAreEvalOfBest(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	mpi := mpirun(t, 2)
	r := run(t, 2*time.Minute, mpi, "train", "--data", cora, "--epochs", "20", "--threads", "1", "--quiet",
		"--save-best", p("best.ckpt"), "--predictions", p("P.npy"))
	if r.code != 0 {
		t.Fatalf("train: exit %d\n%s", r.code, r.stderr)
	}
	if r = run(t, 2*time.Minute, mpi, "eval", "--model", p("best.ckpt"), "--data", cora, "--threads", "1", "--predictions", p("Q.npy")); r.code != 0 {
		t.Fatalf("eval: exit %d\n%s", r.code, r.stderr)
	}
	a, errA := os.ReadFile(p("P.npy"))
	b, errB := os.ReadFile(p("Q.npy"))
	if errA != nil || errB != nil || len(a) == 0 || string(a) != string(b) {
		t.Errorf("train's and eval's predictions on 2 ranks differ (%v, %v)", errA, errB)
	}
}

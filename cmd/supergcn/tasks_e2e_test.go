package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/supergcn/supergcn/internal/testdataset"
)

// genTaskData writes a generated 3000-node graph and a target table of
// the task (gen --targets) into dir.
func genTaskData(t *testing.T, dir, kind string) (data, targets string) {
	t.Helper()
	data, targets = filepath.Join(dir, kind+".sgb"), filepath.Join(dir, kind+".npy")
	r := run(t, 2*time.Minute, nil, "gen", "--spec", "nodes=3000,degree=10,classes=8,feat=32,seed=1,train=0.5,valid=0.25,test=0.25",
		"--out", data, "--targets", targets, "--target-task", kind, "--target-tasks", "24")
	if r.code != 0 {
		t.Fatalf("gen: exit %d\n%s", r.code, r.stderr)
	}
	return data, targets
}

// mpirun -np P supergcn train --task multilabel|regression equals the
// single-process run (every epoch's loss within 1e-4), P = 2, 3, 4.
func TestMPITasksEqualSingle(t *testing.T) {
	dir := t.TempDir()
	for _, kind := range []string{"multilabel", "regression"} {
		data, targets := genTaskData(t, dir, kind)
		args := []string{"--data", data, "--task", kind, "--targets", targets, "--dropout", "0", "--epochs", "20", "--bits", "32",
			"--threads", "1", "--quiet", "--eval-every", "5"}
		ref := trainLosses(t, dir, nil, kind+"-ref", args...)
		for _, np := range []int{2, 3, 4} {
			name := fmt.Sprintf("%s-np%d", kind, np)
			sameLosses(t, name, ref, trainLosses(t, dir, mpirun(t, np), name, append(args, "--partition-method", "random")...))
		}
	}
}

// Bad targets and task flags: one line on stderr naming the file and the
// entry, or the flag; non-zero exit, nothing trained.
func TestCLITaskErrors(t *testing.T) {
	dir := t.TempDir()
	data, targets := genTaskData(t, dir, "multilabel")
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("0,1\n1,0.5\n"), 0o644)
	ckpt := filepath.Join(dir, "ml.ckpt")
	if r := run(t, 2*time.Minute, nil, "train", "--data", data, "--task", "multilabel", "--targets", targets, "--epochs", "1", "--save", ckpt, "--quiet"); r.code != 0 {
		t.Fatalf("multilabel --save: exit %d\n%s", r.code, r.stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--task", "multilabel"}, "--task multilabel: give --targets FILE"},
		{[]string{"--task", "ranking"}, `--task: "ranking" is not one of node, multilabel, regression`},
		{[]string{"--targets", targets}, "--targets: task node trains on the dataset's labels"},
		{[]string{"--task", "multilabel", "--targets", bad}, bad + ": node 1, target 1 is 0.5: want 0, 1 or NaN"},
		{[]string{"--task", "multilabel", "--targets", filepath.Join(dir, "missing.npy")}, "--targets: "},
		{[]string{"--task", "multilabel", "--targets", targets, "--label-prop", "0.5"}, "--label-prop"},
		{[]string{"--resume", ckpt}, "--task: checkpoint " + ckpt + " was trained for task multilabel, this run is node"},
	} {
		r := run(t, 2*time.Minute, nil, append([]string{"train", "--data", data, "--epochs", "2", "--quiet"}, c.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("train %v: exit %d, stderr %q, want one line with %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// writeProteinsLike writes an OGB directory shaped as ogbn-proteins: no
// node features, 4 edge features, a 20-column 0/1 node-label.csv (some
// entries empty: unlabelled) that depends on the edge features at each
// node, and a split.
func writeProteinsLike(t *testing.T, dir string) string {
	t.Helper()
	const n, m, f, tasks = 400, 2400, 4, 20
	rng := rand.New(rand.NewPCG(3, 4))
	var edges, feat strings.Builder
	sum := make([]float64, n*f)
	for range m {
		u, v := rng.IntN(n), rng.IntN(n)
		fmt.Fprintf(&edges, "%d,%d\n", u, v)
		for j := range f {
			x := rng.Float64()
			if j == 0 {
				x += float64(u%3) / 2
			}
			sum[u*f+j] += x
			sum[v*f+j] += x
			if j > 0 {
				feat.WriteByte(',')
			}
			fmt.Fprintf(&feat, "%.4f", x)
		}
		feat.WriteByte('\n')
	}
	var labels, train, valid, test strings.Builder
	for v := range n {
		for k := range tasks {
			if k > 0 {
				labels.WriteByte(',')
			}
			if rng.IntN(20) == 0 {
				continue // unlabelled entry
			}
			y := 0
			if sum[v*f+k%f]+rng.NormFloat64() > sum[v*f+(k+1)%f] {
				y = 1
			}
			fmt.Fprint(&labels, y)
		}
		labels.WriteByte('\n')
		fmt.Fprintln([]*strings.Builder{&train, &train, &valid, &test}[v%4], v)
	}
	files := map[string]string{"raw/edge.csv": edges.String(), "raw/edge-feat.csv": feat.String(), "raw/node-label.csv": labels.String(),
		"raw/num-node-list.csv": fmt.Sprintln(n), "split/species/train.csv": train.String(), "split/species/valid.csv": valid.String(),
		"split/species/test.csv": test.String()}
	for name, body := range files {
		p := filepath.Join(dir, "proteins", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "proteins")
}

// An ogbn-proteins-shaped directory trains as multilabel on its
// 20-column node-label.csv with edge features folded into node features,
// in one process and under mpirun -np 2 with the same losses.
func TestMPIProteinsLikeMultilabel(t *testing.T) {
	dir := t.TempDir()
	data := writeProteinsLike(t, dir)
	args := []string{"--data", data, "--task", "multilabel", "--targets", filepath.Join(data, "raw", "node-label.csv"),
		"--node-feat-from-edges", "mean", "--dropout", "0", "--epochs", "20", "--bits", "32", "--threads", "1", "--quiet"}
	ref := trainLosses(t, dir, nil, "proteins-ref", args...)
	sameLosses(t, "proteins-like, 2 ranks", ref, trainLosses(t, dir, mpirun(t, 2), "proteins-np2", args...))
	r := run(t, time.Minute, nil, "train", "--data", data, "--task", "multilabel", "--targets", filepath.Join(data, "raw", "node-label.csv"),
		"--node-feat-from-edges", "median", "--epochs", "1")
	if r.code == 0 || !strings.Contains(r.stderr, `--node-feat-from-edges: "median" is not mean, sum, max`) {
		t.Fatalf("--node-feat-from-edges median: exit %d, %q", r.code, r.stderr)
	}
}

// supergcn train --task link on Cora with an 85/5/10 edge split learns
// (test ROC-AUC ≥ 0.85 in 60 epochs), and mpirun -np 2 and 3 give one
// process's losses; the flags that go with it are checked before any data
// is read.
func TestCLILinkCora(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	out := filepath.Join(dir, "link.jsonl")
	r := run(t, 5*time.Minute, nil, "train", "--data", cora, "--task", "link", "--edge-split", "random:0.85,0.05,0.1:1", "--feat-norm", "row",
		"--hidden", "64", "--dropout", "0", "--weight-decay", "0", "--epochs", "60", "--eval-every", "20", "--threads", "1", "--metrics", out)
	if r.code != 0 || !strings.Contains(r.stdout, "edge split random:0.85,0.05,0.1:1: 4486/263/529 edges") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var final struct {
		Metric string  `json:"metric"`
		Test   float64 `json:"last_test_acc"`
	}
	lines := strings.Split(strings.TrimSpace(readFile(t, out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &final); err != nil || final.Metric != "rocauc" || !(final.Test >= 0.85) {
		t.Fatalf("final record %s (%v)", lines[len(lines)-1], err)
	}
	exact := []string{"--data", cora, "--task", "link", "--edge-split", "random:0.85,0.05,0.1:1", "--feat-norm", "row", "--hidden", "32",
		"--dropout", "0", "--epochs", "10", "--bits", "32", "--threads", "1", "--quiet"}
	ref := trainLosses(t, dir, nil, "link-ref", exact...)
	for _, np := range []int{2, 3} {
		name := fmt.Sprintf("link-np%d", np)
		sameLosses(t, name, ref, trainLosses(t, dir, mpirun(t, np), name, append(exact, "--partition-method", "random")...))
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--task", "link"}, "--task link: give --edge-split"},
		{[]string{"--edge-split", "random:0.8,0.1"}, "--edge-split: for --task link"},
		{[]string{"--neg-ratio", "2"}, "--neg-ratio: 2, need ≥ 1, and only with --task link"},
		{[]string{"--task", "link", "--edge-split", "random:0.8,0.1", "--neg-ratio", "0"}, "--neg-ratio: 0"},
		{[]string{"--task", "link", "--edge-split", "random:0.9,0.3"}, "--edge-split: "},
	} {
		r := run(t, time.Minute, nil, append([]string{"train", "--data", cora, "--epochs", "1", "--quiet"}, c.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("train %v: exit %d, stderr %q, want one line with %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// eval scores a saved multilabel, regression or link model with the task's
// metrics, equal to the training run's last evaluation (at 4 decimals, as
// both print them), also under mpirun -np 2; --predictions writes the
// task's per-node predictions (probabilities in [0, 1] for multilabel);
// a missing target flag and --predictions for link are one line each.
func TestCLIEvalTasks(t *testing.T) {
	dir := t.TempDir()
	cora := testdataset.Dataset(t, "cora")
	data, targets := genTaskData(t, dir, "multilabel")
	link := []string{"--data", cora, "--edge-split", "random:0.85,0.05,0.1:1", "--seed", "2"}
	for _, c := range []struct {
		kind, want string
		data       []string
	}{
		{"multilabel", "val_f1", []string{"--data", data, "--targets", targets}},
		{"link", "val_hits50", link},
	} {
		ckpt := filepath.Join(dir, c.kind+".ckpt")
		r := run(t, 3*time.Minute, nil, append([]string{"train", "--task", c.kind, "--epochs", "5", "--hidden", "16", "--threads", "1", "--bits", "32", "--save", ckpt}, c.data...)...)
		if r.code != 0 {
			t.Fatalf("train %s: exit %d\n%s", c.kind, r.code, r.stderr)
		}
		last := r.stdout[strings.LastIndex(r.stdout, "epoch    5"):]
		val := strings.Fields(last[strings.Index(last, " val ")+5:])[0]
		for _, np := range []int{1, 2} {
			args := append([]string{"eval", "--model", ckpt, "--threads", "1"}, c.data...)
			var mr []string
			if np > 1 {
				mr = mpirun(t, np)
				args = append(args, "--partition-method", "random")
			}
			e := run(t, 3*time.Minute, mr, args...)
			if e.code != 0 || !strings.Contains(e.stdout, "task "+c.kind+"): rocauc") || !strings.Contains(e.stdout, "val "+val+" (") || !strings.Contains(e.stdout, c.want) {
				t.Fatalf("eval %s np %d: exit %d, want val %s\n%s\n%s", c.kind, np, e.code, val, e.stdout, e.stderr)
			}
		}
	}
	pred := filepath.Join(dir, "p.npy")
	ml := filepath.Join(dir, "multilabel.ckpt")
	if e := run(t, time.Minute, nil, "eval", "--model", ml, "--data", data, "--targets", targets, "--predictions", pred, "--threads", "1"); e.code != 0 {
		t.Fatalf("eval --predictions: exit %d\n%s", e.code, e.stderr)
	}
	shape, p := readNpy(t, pred)
	if !slices.Equal(shape, []int{3000, 24}) || slices.ContainsFunc(p, func(x float32) bool { return !(x >= 0 && x <= 1) }) {
		t.Fatalf("predictions of shape %v, want 3000 × 24 probabilities", shape)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "--model", ml, "--data", data}, "--task multilabel: give --targets"},
		{append([]string{"eval", "--model", filepath.Join(dir, "link.ckpt"), "--predictions", pred}, link...), "--predictions: "},
		{append([]string{"train", "--task", "link", "--predictions", pred}, link...), "--predictions: task link scores pairs"},
	} {
		r := run(t, time.Minute, nil, c.args...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q, want one line with %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

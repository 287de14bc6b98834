package main

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/testdataset"
	"github.com/supergcn/supergcn/interop"
	"github.com/supergcn/supergcn/train"
)

// mpirun -np 3 supergcn train --model gat equals the single-process run,
// post, pre and hybrid, with attention dropout on (its masks do not depend
// on the ranks).
func TestMPIGATEqualsSingle(t *testing.T) {
	coraDir := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	common := []string{"--data", coraDir, "--feat-norm", "row", "--model", "gat", "--hidden", "4", "--heads", "4",
		"--dropout", "0", "--attn-dropout", "0.3", "--lr", "0.005", "--epochs", "15", "--seed", "5", "--bits", "32",
		"--threads", "1", "--quiet"}
	ref := trainLosses(t, dir, nil, "ref", common...)
	for _, mode := range []string{"post", "pre", "hybrid"} {
		name := fmt.Sprintf("gat-%s-np3", mode)
		got := trainLosses(t, dir, mpirun(t, 3), name, append([]string{"--partition-method", "random", "--aggr-mode", mode}, common...)...)
		sameLosses(t, name, ref, got)
	}
}

// GAT's flags are checked before any data is read, naming the flag.
func TestGATFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "gat", "--hidden", "4000000", "--heads", "8"}, "--hidden: 4000000 per head × 8 heads is wider than 16777216"},
		{[]string{"--model", "gat", "--attn-dropout", "1"}, "--attn-dropout: 1 is not in [0, 1)"},
		{[]string{"--model", "gcn", "--heads", "4"}, "--heads: only with --model gat"},
	} {
		r := run(t, time.Minute, nil, append([]string{"train", "--data", filepath.Join(t.TempDir(), "missing")}, c.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("train %v: exit %d, stderr %q, want %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// GAT's --hidden is the width of one head (PyG GATConv's out_channels):
// --hidden 4 --heads 4 is the model that --hidden 16 --heads 4 was before
// (the checkpoint's nn.Config.Hidden is the heads' concatenated width).
// testdata/gatwidth holds a checkpoint written by the build of the old
// meaning (gen --spec nodes=300,degree=8,classes=4,feat=8,seed=3; train
// --model gat --hidden 16 --heads 4 --out-heads 2 --epochs 5 --seed 7) and
// its eval --predictions: it evaluates as it did, resumes, and a run of
// the new meaning writes the same model.
func TestGATHiddenPerHead(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	old := filepath.Join("testdata", "gatwidth", "gat-hidden16-heads4")
	if r := run(t, time.Minute, nil, "gen", "--spec", "nodes=300,degree=8,classes=4,feat=8,seed=3", "--out", p("g.sgb")); r.code != 0 {
		t.Fatalf("gen: exit %d\n%s", r.code, r.stderr)
	}
	if r := run(t, time.Minute, nil, "eval", "--model", old+".ckpt", "--data", p("g.sgb"), "--mpi", "off", "--predictions", p("P.npy")); r.code != 0 {
		t.Fatalf("eval of the old checkpoint: exit %d\n%s", r.code, r.stderr)
	}
	got, want := npyF32(t, p("P.npy")), npyF32(t, old+".npy")
	if len(got) != len(want) || len(got) == 0 {
		t.Fatalf("predictions: %d values, the old build's %d", len(got), len(want))
	}
	for i := range got {
		if math.Abs(float64(got[i]-want[i])) > 1e-5 {
			t.Fatalf("prediction %d: %g, the old build's %g", i, got[i], want[i])
		}
	}
	args := []string{"train", "--data", p("g.sgb"), "--model", "gat", "--hidden", "4", "--heads", "4", "--out-heads", "2",
		"--epochs", "5", "--seed", "7", "--mpi", "off", "--quiet", "--save", p("new.ckpt")}
	if r := run(t, time.Minute, nil, args...); r.code != 0 {
		t.Fatalf("train: exit %d\n%s", r.code, r.stderr)
	}
	a, errA := train.LoadCheckpoint(old + ".ckpt")
	b, errB := train.LoadCheckpoint(p("new.ckpt"))
	if errA != nil || errB != nil || !a.Model.Equal(b.Model) || a.Model.Hidden != 16 || len(a.Params) != len(b.Params) {
		t.Fatalf("--hidden 4 --heads 4 wrote %+v (%v), the old --hidden 16 --heads 4 %+v (%v)", b.Model, errB, a.Model, errA)
	}
	for i := range a.Params {
		if a.Params[i].Name != b.Params[i].Name || len(a.Params[i].W) != len(b.Params[i].W) {
			t.Errorf("parameter %d: %s (%d values), the old build's %s (%d)", i, b.Params[i].Name, len(b.Params[i].W), a.Params[i].Name, len(a.Params[i].W))
		}
	}
	if r := run(t, time.Minute, nil, "export", "--model", old+".ckpt", "--out", p("old.npz")); r.code != 0 {
		t.Fatalf("export of the old checkpoint: exit %d\n%s", r.code, r.stderr)
	}
	ts, meta, err := interop.ReadFile(p("old.npz"))
	if err != nil || len(ts) == 0 || meta["hidden"] != "16" || meta["hidden_per_head"] != "4" || meta["heads"] != "4" ||
		ts[0].Name != "conv0.lin.weight" || fmt.Sprint(ts[0].Shape) != "[16 8]" {
		t.Fatalf("export of the old checkpoint: %v, metadata %v, tensors %d (want conv0.lin.weight [16 8] first)", err, meta, len(ts))
	}
	resume := []string{"train", "--data", p("g.sgb"), "--resume", p("new.ckpt"), "--epochs", "6", "--mpi", "off", "--quiet", "--save", p("new.ckpt")}
	if r := run(t, time.Minute, nil, append(resume, "--hidden", "4")...); r.code != 0 {
		t.Errorf("resume with the same --hidden: exit %d\n%s", r.code, r.stderr)
	}
	if r := run(t, time.Minute, nil, append(resume, "--hidden", "16", "--epochs", "7")...); r.code != 2 || !strings.Contains(r.stderr, "trained with --hidden 4") {
		t.Errorf("resume with the old meaning's --hidden 16: exit %d, want 2\n%s", r.code, r.stderr)
	}
}

// npyF32 reads a float32 .npy file.
func npyF32(t *testing.T, path string) []float32 {
	t.Helper()
	a, err := graph.ReadNpy(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := a.Float32()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

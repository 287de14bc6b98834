package main

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/testdataset"
)

// torchPython returns a Python interpreter that imports torch and numpy
// ($SUPERGCN_PYTHON, python3 on PATH, /usr/bin/python3), or skips the test.
func torchPython(t *testing.T) string {
	t.Helper()
	cands := []string{os.Getenv("SUPERGCN_PYTHON"), "python3", "/usr/bin/python3"}
	for _, py := range cands {
		if py == "" {
			continue
		}
		if exec.Command(py, "-c", "import torch, numpy").Run() == nil {
			return py
		}
	}
	t.Skip("no python3 that imports torch and numpy (apt-get install python3-torch python3-numpy, or set SUPERGCN_PYTHON): skipping the PyTorch round trip")
	return ""
}

var accLine = regexp.MustCompile(`train ([0-9.]+)(?: \([^)]*\))?\s+val ([0-9.]+)(?: \([^)]*\))?\s+test ([0-9.]+)`)

// accuracies parses the train, val and test accuracies of the line of out
// that contains prefix.
func accuracies(t *testing.T, out, prefix string) string {
	t.Helper()
	line := firstLine(out, prefix)
	m := accLine.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no accuracies in a line with %q:\n%s", prefix, out)
	}
	return strings.Join(m[1:], " ")
}

func readNpy(t *testing.T, path string) ([]int, []float32) {
	t.Helper()
	a, err := graph.ReadNpy(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := a.Float32()
	if err != nil {
		t.Fatal(err)
	}
	return a.Shape, v
}

// TestExportTorchCLI: for every model on Cora, a model trained 3 epochs
// and exported (safetensors and npz) gives in python/supergcn_torch.py
// (plain torch) the logits of supergcn eval within 1e-4, and train
// --init-from the export scores at epoch 0 what eval scores.
func TestExportTorchCLI(t *testing.T) {
	py := torchPython(t)
	cora := testdataset.Dataset(t, "cora")
	loader, err := filepath.Abs(filepath.Join("..", "..", "python", "supergcn_torch.py"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	const limit = 5 * time.Minute
	cases := []struct {
		name string
		args []string
	}{
		{"gcn", []string{"--model", "gcn", "--feat-norm", "row"}},
		{"gcn-ln-raw", []string{"--model", "gcn", "--norm", "layer", "--layers", "3"}},
		{"sage-ln", []string{"--model", "sage", "--norm", "layer", "--feat-norm", "row"}},
		{"gin-eps", []string{"--model", "gin", "--train-eps", "--feat-norm", "row"}},
		{"sgc", []string{"--model", "sgc", "--k", "3", "--feat-norm", "row"}},
		{"appnp", []string{"--model", "appnp", "--norm", "layer", "--feat-norm", "row"}},
		{"gat", []string{"--model", "gat", "--hidden", "4", "--heads", "4", "--out-heads", "2", "--feat-norm", "row"}},
		{"gatv2", []string{"--model", "gatv2", "--hidden", "4", "--heads", "4", "--out-heads", "2", "--feat-norm", "row"}},
		{"gatv2-shared", []string{"--model", "gatv2", "--hidden", "4", "--heads", "2", "--share-weights", "1"}},
		{"sage-max", []string{"--model", "sage-max", "--norm", "layer", "--feat-norm", "row"}},
		{"sage-pool", []string{"--model", "sage-pool", "--hidden", "8"}},
		{"gcnii", []string{"--model", "gcnii", "--layers", "4", "--alpha", "0.2", "--theta", "0.8", "--feat-norm", "row"}},
		{"gcn-bn-jk-cat", []string{"--model", "gcn", "--norm", "batch", "--jk", "cat", "--feat-norm", "row"}},
		{"sage-res-jk-max", []string{"--model", "sage", "--layers", "3", "--residual", "--jk", "max", "--feat-norm", "row"}},
		{"gcn-res-bn", []string{"--model", "gcn", "--layers", "3", "--residual", "--norm", "batch", "--feat-norm", "row"}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ck := filepath.Join(dir, c.name+".ckpt")
			trainArgs := append([]string{"train", "--data", cora, "--lr", "0.05", "--seed", "3"}, c.args...)
			if r := run(t, limit, nil, append(trainArgs, "--epochs", "3", "--save", ck)...); r.code != 0 {
				t.Fatalf("train: %s", r.stderr)
			}
			ev := filepath.Join(dir, c.name+".eval.npy")
			r := run(t, limit, nil, "eval", "--data", cora, "--model", ck, "--predictions", ev)
			if r.code != 0 {
				t.Fatalf("eval: %s", r.stderr)
			}
			evalAcc := accuracies(t, r.stdout, "layers): ")
			ext := []string{".safetensors", ".npz"}[i%2]
			exp := filepath.Join(dir, c.name+ext)
			if r := run(t, limit, nil, "export", "--model", ck, "--out", exp); r.code != 0 {
				t.Fatalf("export: %s", r.stderr)
			}
			pyOut := filepath.Join(dir, c.name+".torch.npy")
			if out, err := exec.Command(py, loader, exp, "--ogb", cora, "--out", pyOut).CombinedOutput(); err != nil {
				t.Fatalf("%s %s: %v\n%s", py, loader, err, out)
			}
			es, ev32 := readNpy(t, ev)
			ts, tv := readNpy(t, pyOut)
			if len(es) != 2 || len(ts) != 2 || es[0] != ts[0] || es[1] != ts[1] {
				t.Fatalf("eval logits %v, torch logits %v", es, ts)
			}
			worst := 0.0
			for k := range ev32 {
				worst = max(worst, math.Abs(float64(ev32[k]-tv[k])))
			}
			if worst > 1e-4 {
				t.Errorf("torch logits differ from eval's by up to %g", worst)
			}
			r = run(t, limit, nil, append(trainArgs, "--epochs", "1", "--init-from", exp)...)
			if r.code != 0 {
				t.Fatalf("train --init-from: %s", r.stderr)
			}
			if got := accuracies(t, r.stdout+r.stderr, "epoch    0"); got != evalAcc {
				t.Errorf("train --init-from at epoch 0: %s, eval: %s", got, evalAcc)
			}
		})
	}
}

// TestExportCLIErrors: a bad --out name, and an --init-from that does not
// fit the model, are one line naming the flag, the file and the tensor.
func TestExportCLIErrors(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	ck := filepath.Join(dir, "m.ckpt")
	if r := run(t, time.Minute, nil, "train", "--data", cora, "--epochs", "1", "--save", ck); r.code != 0 {
		t.Fatalf("train: %s", r.stderr)
	}
	oneLine := func(r result, want ...string) {
		t.Helper()
		msg := strings.TrimSpace(r.stderr)
		if r.code == 0 || strings.Contains(msg, "\n") {
			t.Errorf("exit %d, stderr %q: want one line", r.code, msg)
		}
		for _, w := range want {
			if !strings.Contains(msg, w) {
				t.Errorf("stderr %q lacks %q", msg, w)
			}
		}
	}
	oneLine(run(t, time.Minute, nil, "export", "--model", ck, "--out", filepath.Join(dir, "m.pt")), "--out", "m.pt")
	exp := filepath.Join(dir, "m.safetensors")
	if r := run(t, time.Minute, nil, "export", "--model", ck, "--out", exp); r.code != 0 {
		t.Fatalf("export: %s", r.stderr)
	}
	oneLine(run(t, time.Minute, nil, "train", "--data", cora, "--epochs", "1", "--hidden", "32", "--init-from", exp),
		"--init-from", exp, "conv0.lin.weight", "[16 1433]", "[32 1433]")
	oneLine(run(t, time.Minute, nil, "train", "--data", cora, "--epochs", "1", "--model", "sage", "--init-from", exp),
		"--init-from", exp, "conv0.lin.weight is not a parameter")
	oneLine(run(t, time.Minute, nil, "train", "--data", cora, "--epochs", "1", "--resume", ck, "--init-from", exp), "--init-from")
}

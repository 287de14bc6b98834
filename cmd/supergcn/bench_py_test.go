package main

import (
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/testdataset"
	"github.com/supergcn/supergcn/nn"
)

// TestBenchSgbReader checks bench/sgb.py, the Python reader the PyTorch
// trainer uses, against graph.LoadBinary on a generated file: counts,
// CSR checksums, features, labels and splits. It skips without python3 and
// numpy.
func TestBenchSgbReader(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil || exec.Command(py, "-c", "import numpy").Run() != nil {
		t.Skip("python3 with numpy not available")
	}
	path := filepath.Join(t.TempDir(), "g.sgb")
	if r := run(t, time.Minute, nil, "gen", "--spec", "nodes=700,degree=6,classes=5,feat=9,seed=3", "--out", path); r.code != 0 {
		t.Fatalf("gen: %s", r.stderr)
	}
	ds, err := graph.LoadBinary(path)
	if err != nil {
		t.Fatal(err)
	}
	var ptrSum, idxSum, labSum, splitSum int64
	for _, v := range ds.Graph.Ptr {
		ptrSum += v
	}
	for _, v := range ds.Graph.Idx {
		idxSum += int64(v)
	}
	for _, v := range ds.Labels {
		labSum += int64(v)
	}
	for _, s := range [][]int32{ds.Train, ds.Valid, ds.Test} {
		for _, v := range s {
			splitSum += int64(v)
		}
	}
	var xSum float64
	for _, v := range graph.DenseData(ds.Features) {
		xSum += float64(v)
	}
	want := fmt.Sprintf("%d %d %d %d %d %d %d %d %d %.3f", ds.Graph.NumRows, ds.Graph.NNZ(), ds.FeatDim, ds.NumClasses,
		ptrSum, idxSum, labSum, len(ds.Train)+len(ds.Valid)+len(ds.Test), splitSum, xSum)
	script := `import sys; sys.dont_write_bytecode = True; sys.path.insert(0, sys.argv[1]); import sgb
d = sgb.load(sys.argv[2])
print(d["nodes"], d["nnz"], d["featdim"], d["classes"], int(d["ptr"].sum()), int(d["idx"].astype("i8").sum()),
      int(d["labels"].astype("i8").sum()), sum(len(d[s]) for s in ("train", "valid", "test")),
      sum(int(d[s].astype("i8").sum()) for s in ("train", "valid", "test")), "%.3f" % d["x"].astype("f8").sum())`
	out, err := exec.Command(py, "-c", script, filepath.Join("..", "..", "bench"), path).CombinedOutput()
	if err != nil {
		t.Fatalf("bench/sgb.py: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != want {
		t.Fatalf("bench/sgb.py read %q, graph.LoadBinary %q", got, want)
	}
}

// TestBenchTorchTrainer runs bench/train_torch.py, the plain-PyTorch
// baseline, on a small generated graph in float32 and under bfloat16
// autocast (--precision bf16): both finish, print a JSON line naming
// their precision, and start from the same loss (the first forward differs
// only by the products' rounding). It skips without python3 and torch.
func TestBenchTorchTrainer(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil || exec.Command(py, "-c", "import torch, numpy").Run() != nil {
		t.Skip("python3 with torch and numpy not available")
	}
	path := filepath.Join(t.TempDir(), "g.sgb")
	if r := run(t, time.Minute, nil, "gen", "--spec", "nodes=2000,degree=8,classes=5,feat=16,seed=4", "--out", path); r.code != 0 {
		t.Fatalf("gen: %s", r.stderr)
	}
	first := map[string]float64{}
	for _, prec := range []string{"fp32", "bf16"} {
		cmd := exec.Command(py, filepath.Join("..", "..", "bench", "train_torch.py"), "--data", path, "--model", "sage",
			"--layers", "3", "--hidden", "32", "--norm", "layer", "--epochs", "2", "--threads", "1", "--precision", prec)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("train_torch.py --precision %s: %v\n%s", prec, err, out)
		}
		if !strings.Contains(string(out), `"precision": "`+prec+`"`) {
			t.Fatalf("train_torch.py --precision %s: no JSON line naming it:\n%s", prec, out)
		}
		var loss float64
		for _, line := range strings.Split(string(out), "\n") {
			if _, err := fmt.Sscanf(line, "epoch 1 loss %g", &loss); err == nil {
				break
			}
		}
		if loss == 0 {
			t.Fatalf("train_torch.py --precision %s: no epoch-1 loss:\n%s", prec, out)
		}
		first[prec] = loss
	}
	if d := first["bf16"] - first["fp32"]; d > 0.02*first["fp32"] || d < -0.02*first["fp32"] {
		t.Fatalf("first loss fp32 %g, bf16 %g", first["fp32"], first["bf16"])
	}
}

// TestBenchTorchModels: bench/train_torch.py offers the models of nn's
// table, by the same names, and the hyperparameters the table declares,
// with the same defaults. It skips without python3 and torch.
func TestBenchTorchModels(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil || exec.Command(py, "-c", "import numpy, torch").Run() != nil {
		t.Skip("python3 with numpy and torch not available")
	}
	out, err := exec.Command(py, filepath.Join("..", "..", "bench", "train_torch.py"), "--data", "unused", "--list-models").CombinedOutput()
	if err != nil {
		t.Fatalf("train_torch.py --list-models: %v\n%s", err, out)
	}
	if got, want := strings.Fields(string(out)), nn.Models(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("bench/train_torch.py models %v, nn.Models() %v", got, want)
	}
	// the same flags give the same parameter count (GAT: --hidden per head)
	path := filepath.Join(t.TempDir(), "g.sgb")
	if r := run(t, time.Minute, nil, "gen", "--spec", "nodes=300,degree=6,classes=5,feat=16,seed=4", "--out", path); r.code != 0 {
		t.Fatalf("gen: %s", r.stderr)
	}
	var argSets [][]string
	for _, name := range nn.Models() {
		args := []string{"--model", name, "--hidden", "8"}
		if op, _ := nn.ModelOp(name); op.Attends() {
			args = append(args, "--heads", "3", "--out-heads", "2")
		}
		argSets = append(argSets, args)
	}
	// residual connections: a projection of the 16 input features, and identities only
	argSets = append(argSets, []string{"--model", "gcn", "--hidden", "8", "--residual", "--jk", "cat"},
		[]string{"--model", "sage", "--hidden", "16", "--layers", "3", "--residual"})
	for _, args := range argSets {
		var m nn.Config
		fs := flag.NewFlagSet("train", flag.ContinueOnError)
		modelFlags(fs, &m)
		attentionFlags(fs, &m)
		if err := fs.Parse(args); err != nil || modelDefaults(fs, &m) != nil || gatFlags(fs, &m, false) != nil || headWidths(&m) != nil {
			t.Fatalf("%v: flags refused", args)
		}
		m.In, m.Out = 16, 5
		out, err := exec.Command(py, append([]string{filepath.Join("..", "..", "bench", "train_torch.py"), "--data", path,
			"--epochs", "1", "--threads", "1"}, args...)...).CombinedOutput()
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		var js struct{ Params int64 }
		if err != nil || json.Unmarshal([]byte(lines[len(lines)-1]), &js) != nil || js.Params != m.NumParams() {
			t.Errorf("%v: bench/train_torch.py has %d parameters, supergcn %d (%v)\n%s", args, js.Params, m.NumParams(), err, out)
		}
	}
	out, err = exec.Command(py, filepath.Join("..", "..", "bench", "train_torch.py"), "--data", "unused", "--list-hypers").CombinedOutput()
	if err != nil {
		t.Fatalf("train_torch.py --list-hypers: %v\n%s", err, out)
	}
	var want []string
	for _, mi := range nn.ModelInfos() {
		for _, h := range mi.Hypers {
			want = append(want, fmt.Sprintf("%s.%s=%g", mi.Name, h.Name, h.Default))
		}
	}
	if got := strings.Fields(string(out)); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("bench/train_torch.py hyperparameters %v, declared %v", got, want)
	}
}

// TestBenchTorchResume: bench/train_torch.py stopped after a checkpoint and
// resumed prints the epochs the uninterrupted run prints (one thread,
// evaluated every other epoch, the plateau schedule and early stopping
// continued), and refuses a checkpoint of another model.
// It skips without python3 and torch.
func TestBenchTorchResume(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil || exec.Command(py, "-c", "import torch, numpy").Run() != nil {
		t.Skip("python3 with torch and numpy not available")
	}
	dir := t.TempDir()
	path, ck := filepath.Join(dir, "g.sgb"), filepath.Join(dir, "ck.pt")
	if r := run(t, time.Minute, nil, "gen", "--spec", "nodes=2000,degree=8,classes=5,feat=16,seed=4", "--out", path); r.code != 0 {
		t.Fatalf("gen: %s", r.stderr)
	}
	trainer := func(args ...string) (string, error) {
		base := []string{filepath.Join("..", "..", "bench", "train_torch.py"), "--data", path, "--threads", "1", "--eval-every", "2",
			"--lr-schedule", "plateau", "--lr-plateau-patience", "0", "--lr-gamma", "0.5", "--patience", "100"}
		out, err := exec.Command(py, append(base, args...)...).CombinedOutput()
		return string(out), err
	}
	// epochs keeps the epoch lines from "epoch from" on, without their times.
	epochs := func(out string, from int) string {
		var keep []string
		for _, line := range strings.Split(out, "\n") {
			var e int
			if _, err := fmt.Sscanf(line, "epoch %d ", &e); err == nil && e >= from {
				keep = append(keep, line[:strings.Index(line, " epoch_s")])
			}
		}
		return strings.Join(keep, "\n")
	}
	whole, err := trainer("--epochs", "6")
	if err != nil {
		t.Fatalf("6 epochs: %v\n%s", err, whole)
	}
	if out, err := trainer("--epochs", "3", "--save", ck); err != nil {
		t.Fatalf("3 epochs --save: %v\n%s", err, out)
	}
	resumed, err := trainer("--epochs", "6", "--resume", ck)
	if err != nil {
		t.Fatalf("--resume: %v\n%s", err, resumed)
	}
	if a, b := epochs(whole, 4), epochs(resumed, 1); a == "" || a != b {
		t.Fatalf("epochs 4-6 uninterrupted:\n%s\nresumed:\n%s", a, b)
	}
	out, err := trainer("--epochs", "6", "--hidden", "64", "--resume", ck)
	if err == nil || !strings.Contains(out, "saved with --hidden 128, given 64") {
		t.Fatalf("--resume with another --hidden: %v\n%s", err, out)
	}
	// An unwritable --save fails in one line before any epoch.
	out, err = trainer("--epochs", "2", "--save", filepath.Join(dir, "missing", "ck.pt"))
	if err == nil || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.HasPrefix(out, "--save ") {
		t.Fatalf("--save into a missing directory: %v\n%s", err, out)
	}
}

// benchEpoch is an epoch line of bench/train_torch.py.
type benchEpoch struct {
	epoch             int
	lr, valAcc, vloss float64
	evaluated         bool
}

// benchEpochs parses the epoch lines of bench/train_torch.py's output.
func benchEpochs(t *testing.T, out string) []benchEpoch {
	t.Helper()
	var es []benchEpoch
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "epoch" {
			continue
		}
		var e benchEpoch
		fmt.Sscan(f[1], &e.epoch)
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i+1], 64)
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			switch f[i] {
			case "lr":
				e.lr = v
			case "valid":
				e.valAcc, e.evaluated = v, true
			case "val_loss":
				e.vloss = v
			}
		}
		es = append(es, e)
	}
	return es
}

// TestBenchTorchLoop: bench/train_torch.py's --lr-schedule and --patience
// mean what supergcn train's do: step and cosine give supergcn's learning
// rate at every epoch; plateau reduces it as ReduceLROnPlateau on the
// printed validation losses; --patience stops after that many
// evaluations without a better validation accuracy; bad settings are one
// line. It skips without python3 and torch.
func TestBenchTorchLoop(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil || exec.Command(py, "-c", "import torch, numpy").Run() != nil {
		t.Skip("python3 with torch and numpy not available")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "g.sgb")
	if r := run(t, time.Minute, nil, "gen", "--spec", "nodes=2000,degree=8,classes=5,feat=16,seed=4", "--out", path); r.code != 0 {
		t.Fatalf("gen: %s", r.stderr)
	}
	bench := func(args ...string) (string, error) {
		base := []string{filepath.Join("..", "..", "bench", "train_torch.py"), "--data", path, "--threads", "1"}
		out, err := exec.Command(py, append(base, args...)...).CombinedOutput()
		return string(out), err
	}
	for i, sched := range [][]string{{"--lr-schedule", "step", "--lr-step-size", "2", "--lr-gamma", "0.5"},
		{"--lr-schedule", "cosine", "--lr-min", "0.001"}} {
		args := append([]string{"--epochs", "7", "--eval-every", "2", "--hidden", "16"}, sched...)
		out, err := bench(args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", sched, err, out)
		}
		metrics := filepath.Join(dir, fmt.Sprintf("m%d.jsonl", i))
		if r := run(t, time.Minute, nil, append([]string{"train", "--data", path, "--mpi", "off", "--quiet", "--metrics", metrics}, args...)...); r.code != 0 {
			t.Fatalf("supergcn train %v: %s", sched, r.stderr)
		}
		recs, _ := testdataset.MetricsRecords(t, metrics)
		es := benchEpochs(t, out)
		if len(es) != len(recs) {
			t.Fatalf("%v: %d epochs, supergcn %d", sched, len(es), len(recs))
		}
		for j, e := range es {
			if want := recs[j]["lr"].(float64); math.Abs(e.lr-want) > 1e-12*want {
				t.Errorf("%v epoch %d: lr %v, supergcn %v", sched, e.epoch, e.lr, want)
			}
		}
	}
	// plateau: ReduceLROnPlateau (min mode, relative threshold 1e-4, no
	// cooldown) on the evaluated epochs' validation losses
	out, err := bench("--epochs", "40", "--lr", "0.05", "--lr-schedule", "plateau", "--lr-plateau-patience", "1", "--lr-gamma", "0.5", "--lr-min", "0.005")
	if err != nil {
		t.Fatalf("plateau: %v\n%s", err, out)
	}
	lr, best, bad, seen, reduced := 0.05, 0.0, 0, false, 0
	for _, e := range benchEpochs(t, out) {
		if math.Abs(e.lr-lr) > 1e-12 {
			t.Fatalf("plateau, epoch %d: lr %v, want %v\n%s", e.epoch, e.lr, lr, out)
		}
		if !seen || e.vloss < best*(1-1e-4) {
			best, seen, bad = e.vloss, true, 0
		} else {
			bad++
		}
		if bad > 1 {
			if next := math.Max(lr*0.5, 0.005); lr-next > 1e-8 {
				lr, reduced = next, reduced+1
			}
			bad = 0
		}
	}
	if reduced == 0 {
		t.Errorf("plateau: the rate was never reduced in 40 epochs at lr 0.05\n%s", out)
	}
	// --patience: the first evaluation that makes it in a row without a
	// better validation accuracy ends training
	out, err = bench("--epochs", "300", "--lr", "0.05", "--patience", "3")
	if err != nil {
		t.Fatalf("--patience: %v\n%s", err, out)
	}
	es, bestAcc, streak := benchEpochs(t, out), -1.0, 0
	stop := 0
	for _, e := range es {
		if e.valAcc > bestAcc {
			bestAcc, streak = e.valAcc, 0
		} else if streak++; streak >= 3 {
			stop = e.epoch
			break
		}
	}
	if stop == 0 || es[len(es)-1].epoch != stop || !strings.Contains(out, fmt.Sprintf("stopped early after epoch %d:", stop)) ||
		!strings.Contains(out, fmt.Sprintf(`"stopped_early": %d`, stop)) {
		t.Errorf("--patience 3: want a stop after epoch %d\n%s", stop, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--lr-schedule", "step", "--lr-gamma", "0"}, "--lr-gamma: 0 is not in (0, 1]"},
		{[]string{"--lr-schedule", "cosine", "--lr-min", "1"}, "--lr-min: 1 is above the initial learning rate --lr 0.01"},
		{[]string{"--patience", "-1"}, "--patience: -1, need ≥ 0 (0: no early stopping)"},
	} {
		out, err := bench(append([]string{"--epochs", "1"}, c.args...)...)
		if err == nil || strings.TrimSpace(out) != c.want {
			t.Errorf("%v: %v, output %q, want the one line %q", c.args, err, out, c.want)
		}
	}
}

// TestBenchReportGPURows runs bench/report.py, scripts/bench-single-node.sh's
// report, on the summaries of a GPU run that fitted (PyG, --device cuda)
// and one that did not (plain torch, out of memory): the first is a row of
// impl pyg-cuda with its median epoch and the host's peak RSS, the second a
// row of impl pytorch-cuda with no times and the note "out of memory". It
// skips without python3.
func TestBenchReportGPURows(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not available")
	}
	dir := t.TempDir()
	files := map[string]string{
		"pyg_gcn.json": `{"impl": "pyg", "device": "cuda", "model": "gcn", "epoch_s": [0.8, 0.2, 0.3, 0.1, 0.4], ` +
			`"median_epoch_s": 0.25, "peak_gpu_bytes": 1000}`,
		"time_pyg_gcn":   "\tUser time (seconds): 1.5\n\tSystem time (seconds): 0.5\n\tMaximum resident set size (kbytes): 2000000\n",
		"torch_gat.json": `{"impl": "pytorch", "model": "gat", "device": "cuda:1", "error": "out of memory"}`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command(py, filepath.Join("..", "..", "bench", "report.py"), dir).CombinedOutput(); err != nil {
		t.Fatalf("bench/report.py: %v\n%s", err, out)
	}
	f, err := os.Open(filepath.Join(dir, "epochs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]string{}
	for _, r := range recs[1:] {
		row := map[string]string{}
		for i, k := range recs[0] {
			row[k] = r[i]
		}
		got[row["impl"]+" "+row["model"]] = row
	}
	if r := got["pyg-cuda gcn"]; r == nil || r["median_epoch_s"] != "0.25" || r["peak_rss_gb"] != "2.048" ||
		r["run_cpu_s"] != "2.0" || r["note"] != "" {
		t.Errorf("pyg-cuda gcn row %v, want median 0.25, peak RSS 2.048 GB, 2.0 CPU s, no note", r)
	}
	if r := got["pytorch-cuda gat"]; r == nil || r["median_epoch_s"] != "" || r["note"] != "out of memory" {
		t.Errorf("pytorch-cuda gat row %v, want no times and the note out of memory", r)
	}
	if len(got) != 2 {
		t.Errorf("rows %v, want the two", got)
	}
}

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/testdataset"
)

// coraSparse writes Cora's features as a scipy CSR archive (what
// scipy.sparse.save_npz writes) and returns Cora's directory and the file.
func coraSparse(t *testing.T, dir string) (cora, npz string) {
	t.Helper()
	cora = testdataset.Dataset(t, "cora")
	ds, err := graph.Load(cora, graph.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	npz = filepath.Join(dir, "cora-x-csr.npz")
	if err := graph.WriteSparseNpz(npz, graph.SparseFeaturesOf(graph.DenseData(ds.Features), ds.NumNodes(), ds.FeatDim), false); err != nil {
		t.Fatal(err)
	}
	return cora, npz
}

// sparseTrainArgs: Cora, 30 epochs with input and hidden dropout (the
// sparse run draws the dense run's decisions on its non-zeros), fp32 rows.
func sparseTrainArgs(model string, extra ...string) []string {
	return append([]string{"--model", model, "--epochs", "30", "--seed", "5", "--bits", "32", "--threads", "1", "--quiet"}, extra...)
}

// TestSparseFeaturesTrainAsDense: Cora's features as scipy CSR train to the
// dense run's losses (within 1e-4 relative, every epoch), every model, with
// and without --feat-norm row and label propagation, in one process and
// under mpirun on 2, 3 and 4 ranks (METIS in memory, every rank reading the
// sparse file).
func TestSparseFeaturesTrainAsDense(t *testing.T) {
	dir := t.TempDir()
	cora, npz := coraSparse(t, dir)
	train := func(launcher []string, name string, args ...string) []float64 {
		t.Helper()
		return trainLosses(t, dir, launcher, name, args...)
	}
	type variant struct {
		name string
		args []string
	}
	variants := []variant{
		{"gcn", sparseTrainArgs("gcn")},
		{"gcn-row", sparseTrainArgs("gcn", "--feat-norm", "row")},
		{"gcn-row-lp", sparseTrainArgs("gcn", "--feat-norm", "row", "--label-prop", "0.5")},
		{"sage-row", sparseTrainArgs("sage", "--feat-norm", "row")},
		{"gin-row", sparseTrainArgs("gin", "--feat-norm", "row", "--train-eps")},
		{"sgc-row", sparseTrainArgs("sgc", "--feat-norm", "row")},
		{"appnp-row", sparseTrainArgs("appnp", "--feat-norm", "row", "--k", "5")},
		{"gat-row", sparseTrainArgs("gat", "--feat-norm", "row")},
	}
	ref := map[string][]float64{}
	for _, v := range variants {
		ref[v.name] = train(nil, "dense-"+v.name, append([]string{"--data", cora}, v.args...)...)
		got := train(nil, "sparse-"+v.name, append([]string{"--data", cora, "--features", npz}, v.args...)...)
		sameLosses(t, "sparse "+v.name+", one process", ref[v.name], got)
	}
	for _, c := range []struct {
		variant int
		np      int
	}{{1, 2}, {2, 3}, {3, 4}, {0, 4}, {4, 3}} {
		v := variants[c.variant]
		name := fmt.Sprintf("%s-np%d", v.name, c.np)
		args := append([]string{"--partition-method", "metis", "--data", cora}, v.args...)
		dense := train(mpirun(t, c.np), "dense-"+name, args...)
		got := train(mpirun(t, c.np), "sparse-"+name, append(args, "--features", npz)...)
		sameLosses(t, "sparse "+name, dense, got)
	}
}

// TestSparseFeaturesPartitions: a partition directory of Cora with sparse
// features (METIS, 4 parts) keeps them as CSR rows; training from it on 1, 2
// and 4 ranks gives the losses of the same directory written dense; stats
// reports the features' memory from their non-zeros.
func TestSparseFeaturesPartitions(t *testing.T) {
	dir := t.TempDir()
	cora, npz := coraSparse(t, dir)
	args := sparseTrainArgs("gcn", "--feat-norm", "row")
	pdir, ddir := filepath.Join(dir, "parts"), filepath.Join(dir, "dense-parts")
	for _, c := range [][]string{{"--out", pdir, "--features", npz}, {"--out", ddir}} {
		if r := run(t, 2*time.Minute, nil, append([]string{"partition", "--data", cora, "--parts", "4", "--method", "metis"}, c...)...); r.code != 0 {
			t.Fatalf("partition: exit %d\n%s", r.code, r.stderr)
		}
	}
	b, err := os.ReadFile(filepath.Join(pdir, "meta.json"))
	if err != nil || !strings.Contains(string(b), `"sparse_features": true`) || !strings.Contains(string(b), `"feat_nnz"`) {
		t.Fatalf("meta.json does not record sparse features (%v):\n%s", err, b)
	}
	for _, np := range []int{1, 2, 4} {
		name := fmt.Sprintf("parts-np%d", np)
		ref := trainLosses(t, dir, mpirun(t, np), "dense-"+name, append([]string{"--partitions", ddir}, args...)...)
		got := trainLosses(t, dir, mpirun(t, np), name, append([]string{"--partitions", pdir}, args...)...)
		sameLosses(t, "sparse partition directory, "+name, ref, got)
	}
	r := run(t, time.Minute, nil, "stats", pdir)
	if r.code != 0 || !strings.Contains(r.stdout, "features: 2708 nodes × 1433 (sparse, 49216 non-zeros)") {
		t.Fatalf("stats: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestSparseFeaturesLog: the data line reports the sparse features, bf16
// says once that the sparse products run in fp32, and a dense "sparse"
// file is stored dense with a notice.
func TestSparseFeaturesLog(t *testing.T) {
	dir := t.TempDir()
	cora, npz := coraSparse(t, dir)
	r := run(t, 2*time.Minute, nil, "train", "--data", cora, "--features", npz, "--epochs", "1")
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "1433 sparse features (") {
		t.Fatalf("exit %d, no sparse features line:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, 2*time.Minute, nil, "train", "--data", cora, "--features", npz, "--epochs", "1", "--precision", "bf16")
	if r.code != 0 || strings.Count(r.stdout+r.stderr, "(X·W, Xᵀ·G) run in fp32") != 1 {
		t.Fatalf("exit %d, not one notice that the sparse products run in fp32 under bf16:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	ds, err := graph.Load(cora, graph.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, ds.NumNodes()*4)
	for i := range x {
		x[i] = float32(i%3 + 1)
	}
	full := filepath.Join(dir, "full.npz")
	if err := graph.WriteSparseNpz(full, graph.SparseFeaturesOf(x, ds.NumNodes(), 4), true); err != nil {
		t.Fatal(err)
	}
	r = run(t, 2*time.Minute, nil, "train", "--data", cora, "--features", full, "--epochs", "1")
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "stored dense") {
		t.Fatalf("exit %d, no notice for dense sparse features:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestSparseFeaturesScipy: an archive scipy.sparse.save_npz wrote (csr,
// csc, coo) trains to the same losses (skipped without python3 and scipy).
func TestSparseFeaturesScipy(t *testing.T) {
	if exec.Command("python3", "-c", "import scipy.sparse").Run() != nil {
		t.Skip("python3 with scipy not found: skipping")
	}
	dir := t.TempDir()
	cora, npz := coraSparse(t, dir)
	args := append([]string{"--data", cora}, sparseTrainArgs("gcn", "--epochs", "10")...)
	ref := trainLosses(t, dir, nil, "csr-go", append(args, "--features", npz)...)
	for _, f := range []string{"csr", "csc", "coo"} {
		out := filepath.Join(dir, f+".npz")
		py := fmt.Sprintf("import scipy.sparse as s; m = s.load_npz(%q); s.save_npz(%q, m.asformat(%q))", npz, out, f)
		if b, err := exec.Command("python3", "-c", py).CombinedOutput(); err != nil {
			t.Fatalf("python3: %v\n%s", err, b)
		}
		got := trainLosses(t, dir, nil, "scipy-"+f, append(args, "--features", out)...)
		sameLosses(t, "scipy "+f, ref, got)
	}
	_ = os.Remove(npz)
}

// TestBenchTorchSparseFeatures: bench/train_torch.py --features takes the
// same scipy sparse archive as supergcn and, without dropout, trains to the
// losses of the same features dense. It skips without python3 and torch.
func TestBenchTorchSparseFeatures(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil || exec.Command(py, "-c", "import torch, numpy").Run() != nil {
		t.Skip("python3 with torch and numpy not available")
	}
	dir := t.TempDir()
	spec := "nodes=2000,degree=8,classes=5,feat=2000,words=0.01,seed=4"
	sgb, npz, x := filepath.Join(dir, "g.sgb"), filepath.Join(dir, "g.npz"), filepath.Join(dir, "x.npz")
	for _, out := range []string{sgb, npz} {
		if r := run(t, time.Minute, nil, "gen", "--spec", spec, "--out", out); r.code != 0 {
			t.Fatalf("gen: %s", r.stderr)
		}
	}
	ds, err := graph.Load(npz, graph.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := graph.WriteSparseNpz(x, graph.SparseMatrix(ds.Features), false); err != nil {
		t.Fatal(err)
	}
	losses := map[string][]float64{}
	for name, extra := range map[string][]string{"dense": nil, "sparse": {"--features", x}} {
		args := append([]string{filepath.Join("..", "..", "bench", "train_torch.py"), "--data", sgb, "--dropout", "0",
			"--hidden", "16", "--feat-norm", "row", "--epochs", "4", "--threads", "1"}, extra...)
		out, err := exec.Command(py, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("train_torch.py %s: %v\n%s", name, err, out)
		}
		for _, line := range strings.Split(string(out), "\n") {
			var e int
			var l float64
			if _, err := fmt.Sscanf(line, "epoch %d loss %g", &e, &l); err == nil {
				losses[name] = append(losses[name], l)
			}
		}
	}
	sameLosses(t, "train_torch.py sparse features", losses["dense"], losses["sparse"])
}

// TestSparseFeaturesDistributedReader: under mpirun the distributed reader
// (each rank reading its own rows) keeps Cora's scipy CSR features sparse:
// --partition-method multilevel on 2, 3 and 4 ranks and auto on 3 train to
// the losses of the dense features read the same way (within 1e-4, every
// epoch), with --feat-norm row and label propagation; auto says it runs
// multilevel. partition --method multilevel under mpirun writes sparse
// part files that train as the dense ones.
func TestSparseFeaturesDistributedReader(t *testing.T) {
	dir := t.TempDir()
	cora, npz := coraSparse(t, dir)
	for _, c := range []struct {
		np     int
		method string
		args   []string
	}{
		{2, "multilevel", sparseTrainArgs("gcn", "--feat-norm", "row", "--label-prop", "0.5")},
		{3, "auto", sparseTrainArgs("gcn", "--feat-norm", "row")},
		{4, "multilevel", sparseTrainArgs("sage", "--feat-norm", "row")},
	} {
		name := fmt.Sprintf("dist-%s-np%d", c.method, c.np)
		args := append([]string{"--partition-method", c.method, "--data", cora}, c.args...)
		dense := trainLosses(t, dir, mpirun(t, c.np), "dense-"+name, args...)
		out := filepath.Join(dir, name+".jsonl")
		args = append(args, "--features", npz, "--metrics", out)
		r := run(t, 5*time.Minute, mpirun(t, c.np), append([]string{"train"}, slicesWithout(args, "--quiet")...)...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", name, r.code, r.stderr)
		}
		log := r.stdout + r.stderr
		if !strings.Contains(log, fmt.Sprintf("1433 sparse features, 7 classes, split 140/500/1000, read by %d ranks", c.np)) ||
			!strings.Contains(log, "partition: multilevel into") || strings.Contains(log, "metis on rank 0") {
			t.Fatalf("%s: the log does not show the distributed reader with sparse features and multilevel:\n%s", name, log)
		}
		sameLosses(t, "sparse "+name, dense, losses(t, out))
	}
	// partition --method multilevel under mpirun writes sparse part files from every rank.
	pdir, ddir := filepath.Join(dir, "ml-parts"), filepath.Join(dir, "ml-dense-parts")
	for _, c := range [][]string{{"--out", pdir, "--features", npz}, {"--out", ddir}} {
		if r := run(t, 2*time.Minute, mpirun(t, 2), append([]string{"partition", "--data", cora, "--parts", "2", "--method", "multilevel"}, c...)...); r.code != 0 {
			t.Fatalf("partition: exit %d\n%s", r.code, r.stderr)
		}
	}
	if b, err := os.ReadFile(filepath.Join(pdir, "meta.json")); err != nil || !strings.Contains(string(b), `"sparse_features": true`) {
		t.Fatalf("meta.json of the distributed partition does not record sparse features (%v):\n%s", err, b)
	}
	args := sparseTrainArgs("gcn", "--feat-norm", "row")
	ref := trainLosses(t, dir, mpirun(t, 2), "ml-dense-parts", append([]string{"--partitions", ddir}, args...)...)
	got := trainLosses(t, dir, mpirun(t, 2), "ml-parts", append([]string{"--partitions", pdir}, args...)...)
	sameLosses(t, "sparse multilevel partition directory", ref, got)
}

// slicesWithout returns args without the flag f.
func slicesWithout(args []string, f string) []string {
	var out []string
	for _, a := range args {
		if a != f {
			out = append(out, a)
		}
	}
	return out
}

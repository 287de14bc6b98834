package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/testdataset"
)

// coraAs writes Cora in the npz layouts and as an edge list with .npy
// features and labels; it returns the loaded dataset and the paths.
func coraAs(t *testing.T, dir string) (ds *graph.Dataset, ogbNpz, pyg, edges, x, y string) {
	t.Helper()
	ds, err := graph.Load(testdataset.Dataset(t, "cora"), graph.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ogbNpz, pyg = filepath.Join(dir, "cora-npz"), filepath.Join(dir, "cora.npz")
	if err := graph.WriteNpzDataset(ogbNpz, ds, true, false); err != nil {
		t.Fatal(err)
	}
	if err := graph.WriteNpzDataset(pyg, ds, false, true); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for v := range ds.NumNodes() {
		for _, u := range ds.Graph.Idx[ds.Graph.Ptr[v]:ds.Graph.Ptr[v+1]] {
			fmt.Fprintf(&b, "%d %d\n", u, v)
		}
	}
	edges, x, y = filepath.Join(dir, "cora.txt"), filepath.Join(dir, "x.npy"), filepath.Join(dir, "y.npy")
	if err := os.WriteFile(edges, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := graph.WriteNpyF32(x, ds.NumNodes(), ds.FeatDim, graph.DenseData(ds.Features)); err != nil {
		t.Fatal(err)
	}
	labels := make([]int64, ds.NumNodes())
	for v, l := range ds.Labels {
		labels[v] = int64(l)
	}
	npyInt64(t, y, labels)
	return ds, ogbNpz, pyg, edges, x, y
}

// The OGB npz layout and a PyG-style file built from Cora train exactly as
// the CSV layout (same losses), in one process and read distributed under
// mpirun; an edge list with --features, --labels and
// a random split trains, in one process and on 3 ranks with the same
// losses; a split given as files equals the CSV layout's own.
func TestCLINpzAndSplits(t *testing.T) {
	dir := t.TempDir()
	_, ogbNpz, pyg, edges, x, y := coraAs(t, dir)
	common := []string{"--feat-norm", "row", "--dropout", "0", "--epochs", "20", "--seed", "3", "--bits", "32", "--threads", "1", "--quiet"}
	train := func(launcher []string, name string, args ...string) []float64 {
		t.Helper()
		out := filepath.Join(dir, name+".jsonl")
		r := run(t, 5*time.Minute, launcher, append(append([]string{"train", "--metrics", out}, args...), common...)...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", name, r.code, r.stderr)
		}
		return losses(t, out)
	}
	ref := train(nil, "csv", "--data", testdataset.Dataset(t, "cora"))
	sameLosses(t, "OGB npz layout", ref, train(nil, "ogb-npz", "--data", ogbNpz))
	sameLosses(t, "PyG npz", ref, train(nil, "pyg", "--data", pyg))
	conv := filepath.Join(dir, "conv.npz")
	if r := run(t, time.Minute, nil, "convert", "--data", testdataset.Dataset(t, "cora"), "--out", conv); r.code != 0 {
		t.Fatalf("convert to npz: %s", r.stderr)
	}
	sameLosses(t, "convert --out .npz", ref, train(nil, "conv", "--data", conv))
	// Read distributed: the stored OGB npz by offset, the deflated PyG file by rank 0.
	sameLosses(t, "OGB npz layout on 2 ranks", ref, train(mpirun(t, 2), "ogb-npz-np2", "--data", ogbNpz, "--partition-method", "random"))
	sameLosses(t, "PyG npz on 3 ranks", ref, train(mpirun(t, 3), "pyg-np3", "--data", pyg, "--partition-method", "ldg"))

	// The public split as files.
	sd := filepath.Join(dir, "split")
	os.MkdirAll(sd, 0o755)
	pub := filepath.Join(testdataset.Dataset(t, "cora"), "split", "public")
	for _, part := range []string{"train", "valid", "test"} {
		b, err := os.ReadFile(filepath.Join(pub, part+".csv.gz"))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(sd, part+".csv.gz"), b, 0o644)
	}
	sameLosses(t, "--split-files", ref, train(nil, "split-files", "--data", edges, "--features", x, "--labels", y, "--split-files", sd))

	rnd := []string{"--data", edges, "--features", x, "--labels", y, "--split", "random:0.6,0.2:4"}
	one := train(nil, "random", rnd...)
	sameLosses(t, "random split on 3 ranks", one, train(mpirun(t, 3), "random-np3", append(rnd, "--partition-method", "random")...))
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/supergcn/supergcn/internal/testdataset"
)

// weightedCora copies the Cora OGB directory into dir with
// raw/edge_weight.csv: one weight a line from weight(k), k the edge line.
func weightedCora(t *testing.T, dir string, weight func(k int) string) string {
	t.Helper()
	src := testdataset.Dataset(t, "cora")
	out := filepath.Join(dir, "cora-w")
	if err := os.CopyFS(out, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for k := range 10556 { // Cora's edge.csv lines
		b.WriteString(weight(k) + "\n")
	}
	if err := os.WriteFile(filepath.Join(out, "raw", "edge_weight.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// Weighted GCN and SAGE from the command line: all-ones weights give the
// unweighted losses exactly, other weights different ones, the same under
// mpirun (OGB CSV and .sgb read distributed; a partition directory);
// --ignore-weights gives the unweighted losses; a negative weight is a
// one-line error naming the file and line.
func TestWeightedTrainCLI(t *testing.T) {
	dir := t.TempDir()
	coraDir := testdataset.Dataset(t, "cora")
	ones := weightedCora(t, filepath.Join(dir, "ones"), func(int) string { return "1" })
	weighted := weightedCora(t, filepath.Join(dir, "w"), func(k int) string { return fmt.Sprint(0.25 + float64(k%7)/4) })
	common := func(model string) []string { return exactTrainArgs(model, 10) }
	train := func(launcher []string, name string, args ...string) []float64 {
		t.Helper()
		return trainLosses(t, dir, launcher, name, args...)
	}
	for _, model := range []string{"gcn", "sage"} {
		plain := train(nil, "plain-"+model, append([]string{"--data", coraDir}, common(model)...)...)
		got := train(nil, "ones-"+model, append([]string{"--data", ones}, common(model)...)...)
		for e := range plain {
			if got[e] != plain[e] {
				t.Fatalf("%s epoch %d: all-ones weights loss %.8f, unweighted %.8f", model, e+1, got[e], plain[e])
			}
		}
		ref := train(nil, "w-"+model, append([]string{"--data", weighted}, common(model)...)...)
		if ref[len(ref)-1] == plain[len(plain)-1] {
			t.Fatalf("%s: weights do not change the loss", model)
		}
		sameLosses(t, model+" --ignore-weights", plain, train(nil, "ign-"+model, append([]string{"--data", weighted, "--ignore-weights"}, common(model)...)...))
		sameLosses(t, model+" weighted, mpirun -np 3", ref, train(mpirun(t, 3), "np3-"+model, append([]string{"--data", weighted}, common(model)...)...))
	}
	sgb := filepath.Join(dir, "w.sgb")
	if r := run(t, 5*time.Minute, nil, "convert", "--data", weighted, "--out", sgb); r.code != 0 {
		t.Fatalf("convert: %s", r.stderr)
	}
	for _, method := range []string{"multilevel", "random"} {
		ref := train(nil, "w-sgb-ref", append([]string{"--data", sgb}, common("sage")...)...)
		sameLosses(t, "weighted .sgb read distributed, "+method, ref,
			train(mpirun(t, 2), "sgb-np2-"+method, append([]string{"--data", sgb, "--partition-method", method}, common("sage")...)...))
	}
	pdir := filepath.Join(dir, "parts")
	if r := run(t, 5*time.Minute, nil, "partition", "--data", weighted, "--parts", "4", "--method", "metis", "--out", pdir); r.code != 0 {
		t.Fatalf("partition: %s", r.stderr)
	}
	ref := train(nil, "w-dir-ref", append([]string{"--data", weighted}, common("gcn")...)...)
	sameLosses(t, "weighted 4-part directory on 2 ranks", ref, train(mpirun(t, 2), "dir-np2", append([]string{"--partitions", pdir}, common("gcn")...)...))

	bad := weightedCora(t, filepath.Join(dir, "bad"), func(k int) string {
		if k == 2 {
			return "-1"
		}
		return "1"
	})
	r := run(t, time.Minute, nil, "train", "--data", bad, "--epochs", "1")
	want := filepath.Join(bad, "raw", "edge_weight.csv") + `:3: edge weight "-1": weights must be non-negative`
	if r.code == 0 || !strings.Contains(r.stderr, want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("negative weight: exit %d, stderr %q, want one line with %q", r.code, r.stderr, want)
	}
}

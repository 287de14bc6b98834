package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/testdataset"
	"github.com/supergcn/supergcn/partition"
)

// train --node-order: every order gives the given order's losses (dropout
// 0, fp32 boundary rows) in one process, in memory under mpirun on 2 ranks
// and from a 6-part directory on 3 and 2 ranks (which stays byte-identical); the
// models saved with and without the reordering predict the same scores in
// global id order; a bad order is a one-line flag error.
func TestMPINodeOrder(t *testing.T) {
	coraDir := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	common := []string{"--feat-norm", "row", "--model", "sage", "--norm", "layer", "--dropout", "0", "--epochs", "15",
		"--seed", "4", "--bits", "32", "--threads", "1", "--quiet"}
	train := func(launcher []string, name string, args ...string) []float64 {
		t.Helper()
		out := filepath.Join(dir, name+".jsonl")
		r := run(t, 3*time.Minute, launcher, append(append([]string{"train", "--metrics", out}, common...), args...)...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", name, r.code, r.stderr)
		}
		return losses(t, out)
	}
	save := func(order string) string { return filepath.Join(dir, "model-"+order+".ckpt") }
	ref := train(nil, "given", "--data", coraDir, "--node-order", "given", "--save", save("given"))
	for _, o := range partition.NodeOrders()[1:] {
		sameLosses(t, "one process, --node-order "+o, ref, train(nil, o, "--data", coraDir, "--node-order", o, "--save", save(o)))
	}
	sameLosses(t, "default order, in memory on 2 ranks", ref, train(mpirun(t, 2), "mem2", "--data", coraDir, "--partition-method", "random"))
	pdir := filepath.Join(dir, "cora-6")
	if r := run(t, 2*time.Minute, nil, "partition", "--data", coraDir, "--parts", "6", "--method", "random", "--out", pdir); r.code != 0 {
		t.Fatalf("partition: %s", r.stderr)
	}
	before := dirBytes(t, pdir)
	sameLosses(t, "cluster order, 6-part directory on 3 ranks", ref, train(mpirun(t, 3), "dir3", "--partitions", pdir, "--node-order", "cluster"))
	sameLosses(t, "rcm order, 6-part directory on 2 ranks", ref, train(mpirun(t, 2), "dir2", "--partitions", pdir, "--node-order", "rcm"))
	if !bytes.Equal(before, dirBytes(t, pdir)) {
		t.Fatal("training changed the partition directory")
	}

	var want []float32
	for _, o := range partition.NodeOrders() {
		pred := filepath.Join(dir, "pred-"+o+".npy")
		if r := run(t, 2*time.Minute, nil, "eval", "--model", save(o), "--data", coraDir, "--predictions", pred); r.code != 0 {
			t.Fatalf("eval %s: exit %d\n%s", o, r.code, r.stderr)
		}
		a, err := graph.ReadNpy(pred)
		if err != nil {
			t.Fatal(err)
		}
		got, err := a.Float32()
		if err != nil {
			t.Fatal(err)
		}
		if want == nil {
			want = got
			continue
		}
		for i := range want {
			if math.Abs(float64(got[i]-want[i])) > 1e-3*math.Max(1, math.Abs(float64(want[i]))) {
				t.Fatalf("predictions of the %s-order model: [%d,%d] %g, given order %g", o, i/a.Shape[1], i%a.Shape[1], got[i], want[i])
			}
		}
	}

	r := run(t, time.Minute, nil, "train", "--data", coraDir, "--node-order", "bogus")
	if r.code != 2 || !strings.Contains(r.stderr, "--node-order") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("bad --node-order: exit %d, stderr %q", r.code, r.stderr)
	}
}

// dirBytes concatenates every file of a directory (names and contents).
func dirBytes(t *testing.T, dir string) []byte {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, e := range es {
		x, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %d\n", e.Name(), len(x))
		b.Write(x)
	}
	return b.Bytes()
}

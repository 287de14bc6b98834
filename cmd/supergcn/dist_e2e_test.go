package main

// End-to-end tests of the distributed reader and writer (partition/dist)
// under mpirun: every input format partitions to the same directory as the
// serial path for the same owner array, ParMETIS directories train with the
// single-process losses, and a bad line on one rank ends the job with one
// error and nothing written.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/testdataset"
	"github.com/supergcn/supergcn/partition"
)

// distInputs writes one generated dataset as .sgb, as an edge list with
// .npy features and labels, and as a plain-CSV OGB directory; it returns
// the --data (and extra flags) of each.
func distInputs(t *testing.T, dir string) map[string][]string {
	t.Helper()
	sgb := filepath.Join(dir, "g.sgb")
	if r := run(t, time.Minute, nil, "gen", "--spec", "nodes=3000,degree=8,feat=12,classes=5,seed=4", "--out", sgb); r.code != 0 {
		t.Fatalf("gen: %s", r.stderr)
	}
	ds, err := graph.Load(sgb, graph.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g := ds.Graph
	var el, ecsv bytes.Buffer
	for v := 0; v < g.NumRows; v++ {
		for _, u := range g.Idx[g.Ptr[v]:g.Ptr[v+1]] {
			if u < int32(v) {
				fmt.Fprintf(&el, "%d\t%d\n", u, v)
				fmt.Fprintf(&ecsv, "%d,%d\n", v, u)
			}
		}
	}
	n := ds.NumNodes()
	write := func(path string, b []byte) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edges := filepath.Join(dir, "edges.txt")
	write(edges, el.Bytes())
	feat, lab := filepath.Join(dir, "x.npy"), filepath.Join(dir, "y.npy")
	if err := graph.WriteNpyF32(feat, n, ds.FeatDim, graph.DenseData(ds.Features)); err != nil {
		t.Fatal(err)
	}
	y := make([]float32, n)
	for i, l := range ds.Labels {
		y[i] = float32(l)
	}
	if err := graph.WriteNpyF32(lab, n, 1, y); err != nil {
		t.Fatal(err)
	}
	ogb := filepath.Join(dir, "ogbdir")
	write(filepath.Join(ogb, "raw", "edge.csv"), ecsv.Bytes())
	write(filepath.Join(ogb, "raw", "num-node-list.csv"), []byte(fmt.Sprintf("%d\n", n)))
	var fx, fy bytes.Buffer
	for v := 0; v < n; v++ {
		for k := 0; k < ds.FeatDim; k++ {
			if k > 0 {
				fx.WriteByte(',')
			}
			fmt.Fprintf(&fx, "%g", graph.DenseData(ds.Features)[v*ds.FeatDim+k])
		}
		fx.WriteByte('\n')
		fmt.Fprintf(&fy, "%d\n", ds.Labels[v])
	}
	write(filepath.Join(ogb, "raw", "node-feat.csv"), fx.Bytes())
	write(filepath.Join(ogb, "raw", "node-label.csv"), fy.Bytes())
	for name, ids := range map[string][]int32{"train": ds.Train, "valid": ds.Valid, "test": ds.Test} {
		var b bytes.Buffer
		for _, v := range ids {
			fmt.Fprintf(&b, "%d\n", v)
		}
		write(filepath.Join(ogb, "split", "public", name+".csv"), b.Bytes())
	}
	return map[string][]string{
		"sgb":      {"--data", sgb},
		"edgelist": {"--data", edges, "--features", feat, "--labels", lab},
		"ogb":      {"--data", ogb},
	}
}

// sameDirFiles fails unless the part files of two directories are equal
// byte for byte and their meta.json agree on everything but the method and
// the time.
func sameDirFiles(t *testing.T, what, a, b string) {
	t.Helper()
	ma, err := partition.ReadMeta(a)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := partition.ReadMeta(b)
	if err != nil {
		t.Fatal(err)
	}
	ma.PartitionSeconds, mb.PartitionSeconds, ma.Method, mb.Method = 0, 0, "", ""
	if fmt.Sprintf("%+v", *ma) != fmt.Sprintf("%+v", *mb) {
		t.Fatalf("%s: meta.json differs:\n%+v\n%+v", what, *ma, *mb)
	}
	for p := 0; p < ma.Parts; p++ {
		x, _ := os.ReadFile(filepath.Join(a, partition.PartFile(p)))
		y, _ := os.ReadFile(filepath.Join(b, partition.PartFile(p)))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Fatalf("%s: part %d differs (%d vs %d bytes)", what, p, len(x), len(y))
		}
	}
}

func TestMPIDistPartitionMatchesSerial(t *testing.T) {
	dir := t.TempDir()
	inputs := distInputs(t, dir)
	trainArgs := []string{"--dropout", "0", "--epochs", "8", "--seed", "5", "--bits", "32", "--threads", "1", "--quiet"}
	trainLosses := func(launcher []string, name string, args ...string) []float64 {
		t.Helper()
		out := filepath.Join(dir, name+".jsonl")
		r := run(t, 3*time.Minute, launcher, append(append([]string{"train", "--metrics", out}, args...), trainArgs...)...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", name, r.code, r.stderr)
		}
		return losses(t, out)
	}
	for _, name := range []string{"sgb", "edgelist", "ogb"} {
		src := inputs[name]
		ser := filepath.Join(dir, name+"-serial")
		if r := run(t, 2*time.Minute, nil, append([]string{"partition", "--method", "random", "--seed", "3", "--parts", "4", "--out", ser}, src...)...); r.code != 0 {
			t.Fatalf("%s serial: %s", name, r.stderr)
		}
		for _, np := range []int{2, 4} {
			out := filepath.Join(dir, fmt.Sprintf("%s-dist%d", name, np))
			r := run(t, 2*time.Minute, mpirun(t, np), append([]string{"partition", "--method", "random", "--seed", "3", "--parts", "4", "--out", out}, src...)...)
			if r.code != 0 {
				t.Fatalf("%s on %d ranks: exit %d\n%s", name, np, r.code, r.stderr)
			}
			sameDirFiles(t, fmt.Sprintf("%s on %d ranks", name, np), ser, out)
		}
	}
	// Training from the directories: serial and distributed directories,
	// and ParMETIS on 2 and 4 ranks, give the single-process losses.
	ref := trainLosses(nil, "ref", inputs["sgb"]...)
	sameLosses(t, "serial random directory on 2 ranks", ref, trainLosses(mpirun(t, 2), "ser2", "--partitions", filepath.Join(dir, "sgb-serial")))
	sameLosses(t, "distributed random directory on 4 ranks", ref, trainLosses(mpirun(t, 4), "dist4", "--partitions", filepath.Join(dir, "ogb-dist4")))
	for _, np := range []int{2, 4} {
		out := filepath.Join(dir, fmt.Sprintf("pm%d", np))
		r := run(t, 2*time.Minute, mpirun(t, np), append([]string{"partition", "--method", "parmetis", "--parts", "4", "--out", out}, inputs["sgb"]...)...)
		if r.code != 0 {
			t.Fatalf("parmetis on %d ranks: %s", np, r.stderr)
		}
		sameLosses(t, fmt.Sprintf("parmetis directory from %d ranks", np), ref, trainLosses(mpirun(t, 4), fmt.Sprintf("pm%d", np), "--partitions", out))
	}
	// partition --method auto under mpirun is the multilevel partitioner.
	ml := filepath.Join(dir, "ml4")
	if r := run(t, 2*time.Minute, mpirun(t, 4), append([]string{"partition", "--method", "auto", "--parts", "8", "--out", ml}, inputs["sgb"]...)...); r.code != 0 {
		t.Fatalf("auto on 4 ranks: %s", r.stderr)
	}
	if m, err := partition.ReadMeta(ml); err != nil || !strings.HasPrefix(m.Method, "multilevel (4 ranks") {
		t.Fatalf("auto on 4 ranks: meta %+v, %v: want the multilevel method", m, err)
	}
	sameLosses(t, "multilevel directory from 4 ranks", ref, trainLosses(mpirun(t, 4), "ml4", "--partitions", ml))
	// In memory: train --data under mpirun with the distributed reader.
	sameLosses(t, "in memory, ldg on 4 ranks", ref, trainLosses(mpirun(t, 4), "mem-ldg", append([]string{"--partition-method", "ldg"}, inputs["ogb"]...)...))
	// The default (--partition-method auto) under mpirun is multilevel on the
	// distributed reader; a flag it cannot honour falls back to METIS, saying so.
	sameLosses(t, "in memory, default method on 2 ranks", ref, trainLosses(mpirun(t, 2), "mem-auto", inputs["sgb"]...))
	for _, c := range []struct {
		extra []string
		want  string
	}{
		{nil, "partition: multilevel into 2 parts, distributed"},
		{[]string{"--dedup=false"}, "partition: auto: metis on rank 0"},
	} {
		args := append(append([]string{"train", "--epochs", "1", "--threads", "1", "--bits", "32"}, c.extra...), inputs["sgb"]...)
		r := run(t, 2*time.Minute, mpirun(t, 2), args...)
		if r.code != 0 || !strings.Contains(r.stdout+r.stderr, c.want) {
			t.Errorf("train %v on 2 ranks: exit %d, want a line with %q in\n%s%s", c.extra, r.code, c.want, r.stdout, r.stderr)
		}
	}
}

// A bad line in the last rank's byte range: one error naming the file and
// line, the whole job ends, nothing is written.
func TestMPIDistBadLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.txt")
	var b strings.Builder
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&b, "%d %d\n", i, (i*7+1)%2000)
	}
	b.WriteString("12 oops\n")
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, "%d %d\n", i, i+3)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	r := run(t, 2*time.Minute, mpirun(t, 4), "partition", "--method", "parmetis", "--data", path, "--parts", "4", "--out", out)
	want := path + ":2001:"
	if r.code == 0 || strings.Count(r.stderr, want) != 1 {
		t.Fatalf("exit %d, want one error naming %s\nstderr:\n%s", r.code, want, r.stderr)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("%d entries beside the input after the failed job, want none", len(ents)-1)
	}
	t.Logf("%s", firstLine(r.stderr, want))
}

// A .sgb whose header states 2^31 arcs: `partition --method parmetis` under
// mpirun refuses it before any work, naming the count and the remedies. The
// file is sparse, its sections laid out for the forged count.
func TestMPIDistArcLimit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "big.sgb")
	if r := run(t, time.Minute, nil, "gen", "--spec", "nodes=100,degree=4,feat=2,classes=2", "--out", path); r.code != 0 {
		t.Fatalf("gen: %s", r.stderr)
	}
	testdataset.ForgeArcCount(t, path, 1<<31)
	out := filepath.Join(dir, "out")
	r := run(t, 2*time.Minute, mpirun(t, 2), "partition", "--method", "parmetis", "--data", path, "--parts", "2", "--out", out)
	if r.code == 0 || !strings.Contains(r.stderr, "2147483648 arcs") || !strings.Contains(r.stderr, "--method ldg") ||
		strings.Count(r.stderr, "2147483648 arcs") != 1 {
		t.Fatalf("exit %d, want one error naming 2147483648 arcs and --method ldg\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatalf("%s was written", out)
	}
	t.Logf("%s", firstLine(r.stderr, "arcs"))
}

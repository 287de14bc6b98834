package main

// Inputs and outputs that are not what they claim to be: special files in
// place of inputs, outputs naming inputs, sizes beyond reason. Each must end
// with one line and a non-zero exit, quickly, with nothing half-written.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/testdataset"
)

// TestCLISpecialFiles: a named pipe or a device given as any input is
// refused before it is read (a FIFO would block forever, /dev/zero never
// ends).
func TestCLISpecialFiles(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	const pipe, dev = "a named pipe (FIFO), not a regular file", "/dev/zero: a character device, not a regular file"
	out := filepath.Join(dir, "out")
	for _, c := range []badCase{
		{name: "train --data fifo", args: []string{"train", "--data", fifo}, want: pipe},
		{name: "train --data /dev/zero", args: []string{"train", "--data", "/dev/zero"}, want: dev},
		{name: "train --features fifo", args: []string{"train", "--data", cora, "--features", fifo}, want: pipe},
		{name: "train --labels /dev/zero", args: []string{"train", "--data", cora, "--labels", "/dev/zero"}, want: dev},
		{name: "train --resume fifo", args: []string{"train", "--data", cora, "--resume", fifo}, want: pipe},
		{name: "train --resume /dev/zero", args: []string{"train", "--data", cora, "--resume", "/dev/zero"}, want: dev},
		{name: "eval --model fifo", args: []string{"eval", "--data", cora, "--model", fifo}, want: pipe},
		{name: "eval --model /dev/zero", args: []string{"eval", "--data", cora, "--model", "/dev/zero"}, want: dev},
		{name: "convert --data /dev/zero", args: []string{"convert", "--data", "/dev/zero", "--out", out}, want: dev},
		{name: "partition ldg --data fifo", args: []string{"partition", "--data", fifo, "--method", "ldg", "--parts", "2", "--out", out}, want: pipe},
		{name: "predict --profile fifo", args: []string{"predict", "--profile", fifo, "--partitions", dir, "--network", "10gbit"}, want: pipe},
		{name: "predict --profile /dev/zero", args: []string{"predict", "--profile", "/dev/zero", "--partitions", dir, "--network", "10gbit"}, want: dev},
		{name: "plot fifo", args: []string{"plot", fifo, "--out", out}, want: pipe},
	} {
		expectQuickFailure(t, c)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("an output was written: %v", err)
	}
}

// expectQuickFailure is expectCleanFailure within 30 s (the special-file
// cases used to block forever or run until memory ran out).
func expectQuickFailure(t *testing.T, c badCase) {
	t.Helper()
	r := runEnv(t, 30*time.Second, c.env, c.args...)
	checkCleanFailure(t, c, r)
}

// flipByte flips one bit of the byte at offset at of path (negative: from
// the end).
func flipByte(t *testing.T, path string, at int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if at < 0 {
		at += len(b)
	}
	b[at] ^= 0x08
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMPIDamagedInputs: a flipped feature bit of a .sgb fails the
// distributed readers (partition, train and eval under mpirun) as it fails
// the serial one; a damaged part file read by one rank ends the job with that
// rank's one error line and nothing from the others.
func TestMPIDamagedInputs(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	if r := run(t, 2*time.Minute, nil, "convert", "--data", cora, "--out", p("c.sgb")); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := run(t, 2*time.Minute, nil, "partition", "--data", cora, "--parts", "2", "--out", p("parts")); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := run(t, 2*time.Minute, nil, "train", "--data", p("c.sgb"), "--epochs", "1", "--quiet", "--save", p("m.ckpt")); r.code != 0 {
		t.Fatal(r.stderr)
	}
	// Cora's features are the bulk of the file: a byte past the middle is one.
	st, _ := os.Stat(p("c.sgb"))
	flipByte(t, p("c.sgb"), int(st.Size()*3/5))
	flipByte(t, p("parts/part-00001.bin"), -1000)
	for _, c := range []struct {
		np   int
		args []string
		want string
	}{
		{3, []string{"partition", "--data", p("c.sgb"), "--parts", "3", "--method", "parmetis", "--out", p("out")}, "section x: checksum mismatch"},
		{3, []string{"partition", "--data", p("c.sgb"), "--parts", "3", "--method", "ldg", "--out", p("out")}, "section x: checksum mismatch"},
		{2, []string{"train", "--data", p("c.sgb"), "--epochs", "1", "--quiet"}, "section x: checksum mismatch"},
		{2, []string{"train", "--partitions", p("parts"), "--epochs", "3", "--quiet"}, "part-00001.bin"},
		{2, []string{"eval", "--data", p("c.sgb"), "--model", p("m.ckpt")}, "section x: checksum mismatch"},
		{1, []string{"eval", "--data", p("c.sgb"), "--model", p("m.ckpt")}, "section x: checksum mismatch"},
	} {
		r := run(t, 2*time.Minute, mpirun(t, c.np), c.args...)
		ours := 0
		for _, line := range strings.Split(r.stderr, "\n") {
			if strings.HasPrefix(line, "supergcn") {
				ours++
			}
		}
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, "stopping after this epoch") || goroutineTrace.MatchString(r.stderr) {
			t.Errorf("%v: exit %d, want one error with %q\nstderr:\n%s", c.args, r.code, c.want, r.stderr)
		} else if ours != 1 {
			t.Errorf("%v: %d lines of ours, want 1\nstderr:\n%s", c.args, ours, r.stderr)
		}
	}
	if _, err := os.Stat(p("out")); !os.IsNotExist(err) {
		t.Errorf("a partition of damaged data was written: %v", err)
	}
}

// TestCLISizeBounds: size flags beyond what the process may hold are
// refused before any allocation, as is a --threads count that would
// exhaust the OS threads, and an address-space limit (ulimit -v) too small
// for OpenBLAS's buffers (OpenBLAS would spin in its allocator).
func TestCLISizeBounds(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	for _, c := range []badCase{
		{name: "bench aggr edges 1e14", args: []string{"bench", "aggr", "--nodes", "1000", "--edges", "100000000000000"}, want: "--edges: a graph of 100000000000000 edges needs"},
		{name: "bench stream mib 1e8", args: []string{"bench", "stream", "--mib", "100000000"}, want: "--mib: three arrays of 100000000 MiB needs"},
		{name: "bench stream mib 2^63-1", args: []string{"bench", "stream", "--mib", "9223372036854775807"}, want: "--mib: three arrays"},
		{name: "bench aggr threads 1e5", args: []string{"bench", "aggr", "--threads", "100000"}, want: "100000, more than 1024"},
		{name: "train threads 1e5", args: []string{"train", "--data", cora, "--threads", "100000"}, want: "100000, more than 1024"},
		{name: "eval threads 1e5", args: []string{"eval", "--data", cora, "--model", cora, "--threads", "100000"}, want: "100000, more than 1024"},
	} {
		expectQuickFailure(t, c)
	}
	if r := run(t, time.Minute, nil, "info"); !strings.Contains(strings.ToLower(r.stdout), "openblas") {
		return // gonum's BLAS fails with a Go error instead
	}
	checkBLASLimitLadder(t, cora)
}

// startFailure matches what the Go runtime, cgo or the C libraries print
// when an address-space limit leaves too little to start the process at
// all: the runtime's reservations, a thread stack, glibc's arenas. How
// much a start needs depends on the machine (cores, thread counts), so a
// limit below it says nothing about OpenBLAS's check.
var startFailure = regexp.MustCompile(`fatal error: (out of memory|failed to reserve|runtime: cannot allocate memory)|runtime: out of memory|runtime/cgo: pthread_create failed`)

// checkBLASLimitLadder raises ulimit -v from 768 MiB in steps of 48 MiB
// (less than OpenBLAS's 128 MiB buffer, so one step lands between what
// the start needs and what the buffer then needs): every limit must
// either fail the start or give the one-line refusal, and the first that
// does not fail the start must give the refusal.
func checkBLASLimitLadder(t *testing.T, cora string) {
	t.Helper()
	for kb := 768 << 10; kb <= 4<<20; kb += 48 << 10 {
		c := badCase{name: fmt.Sprintf("train under ulimit -v %d", kb), want: "ulimit -v leaves",
			args: []string{"train", "--data", cora, "--epochs", "2", "--threads", "1"}}
		// GOMAXPROCS=1: fewer runtime threads (each a stack reservation).
		r := run(t, 30*time.Second, []string{"sh", "-c", fmt.Sprintf(`ulimit -v %d && GOMAXPROCS=1 exec "$0" "$@"`, kb)}, c.args...)
		if r.code != 0 && startFailure.MatchString(r.stderr) && !strings.Contains(r.stderr, c.want) {
			continue
		}
		checkCleanFailure(t, c, r)
		return
	}
	t.Errorf("no ulimit -v up to 4 GiB let the process start")
}

// TestMPIFlagErrorsOnce: a bad flag under mpirun is one line (rank 0's),
// not one per rank, and the job ends with the flag error's status.
func TestMPIFlagErrorsOnce(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "--data", cora, "--lr", "-1"}, "--lr: -1"},
		{[]string{"train", "--data", cora, "--no-such-flag"}, "no-such-flag"},
		{[]string{"partition", "--parts", "2", "--out", filepath.Join(t.TempDir(), "p")}, "--data"},
		{[]string{"no-such-command"}, "unknown command"},
	} {
		r := run(t, time.Minute, mpirun(t, 3), c.args...)
		ours := 0
		for _, line := range strings.Split(r.stderr, "\n") {
			if strings.HasPrefix(line, "supergcn") {
				ours++
			}
		}
		if r.code != 2 || ours != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, %d lines of ours, want 2 and one line with %q\nstderr:\n%s", c.args, r.code, ours, c.want, r.stderr)
		}
	}
}

// TestCLIBenchSizes: a bench size (a width, rows, nodes) whose buffers
// exceed what the process may hold is one line naming the flag, not the Go
// runtime's out-of-memory error or a makeslice panic.
func TestCLIBenchSizes(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	for _, c := range []badCase{
		{name: "bench aggr width 1e8", args: []string{"bench", "aggr", "--width", "100000000"}, want: "--width: width 100000000 on 200000 nodes needs"},
		{name: "bench aggr nodes 2e9", args: []string{"bench", "aggr", "--nodes", "2000000000", "--edges", "0"}, want: "--nodes: a graph of 2000000000 nodes needs"},
		{name: "bench aggr Cora width 1e9", args: []string{"bench", "aggr", "--graph", cora, "--width", "1000000000"}, want: "--width: width 1000000000 on 2708 nodes needs"},
		{name: "bench quant rows 1e10", args: []string{"bench", "quant", "--rows", "10000000000"}, want: "--rows × --width: 10000000000 rows of width 128 needs"},
		{name: "bench quant width 1e11", args: []string{"bench", "quant", "--width", "100000000000"}, want: "--rows × --width: 100000 rows of width 100000000000 needs"},
		{name: "bench order widths 1e8", args: []string{"bench", "order", "--widths", "47,100000000"}, want: "--widths: width 100000000 on 400000 nodes needs"},
	} {
		expectQuickFailure(t, c)
	}
}

// TestCLIFormatFlagStatus: an unknown --format is a bad flag (exit 2) in
// every command that takes one, before anything is read.
func TestCLIFormatFlagStatus(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	out := filepath.Join(t.TempDir(), "out")
	for _, args := range [][]string{
		{"train", "--data", cora, "--format", "foo"},
		{"eval", "--data", cora, "--model", out, "--format", "foo"},
		{"partition", "--data", cora, "--parts", "2", "--format", "foo", "--out", out},
		{"convert", "--data", cora, "--format", "foo", "--out", out},
	} {
		r := run(t, time.Minute, nil, args...)
		checkCleanFailure(t, badCase{name: args[0] + " --format foo", want: `--format: "foo": unknown format`}, r)
		if r.code != 2 {
			t.Errorf("%s --format foo: exit %d, want 2", args[0], r.code)
		}
	}
}

// TestCLIPartitionOutParent: a partition --out whose parent directory is
// missing is refused before the graph is read or partitioned.
func TestCLIPartitionOutParent(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	out := filepath.Join(t.TempDir(), "missing", "p")
	r := run(t, time.Minute, nil, "partition", "--data", cora, "--parts", "2", "--out", out)
	checkCleanFailure(t, badCase{name: "partition --out in a missing directory", want: "--out: " + out + ": directory " + filepath.Dir(out) + " does not exist"}, r)
	if r.code != 2 || strings.Contains(r.stdout, "partition: metis") {
		t.Errorf("exit %d, want 2 before any partitioning; stdout:\n%s", r.code, r.stdout)
	}
}

// TestCLIEmptyValidation: a split without validation or test nodes reports
// their accuracies as n/a, not 0, and --save-best (no epoch is best) is
// refused without writing the file.
func TestCLIEmptyValidation(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"s/train.csv": "0\n1\n2\n3\n", "s/valid.csv": "", "s/test.csv": ""})
	sd := filepath.Join(dir, "s")
	r := run(t, time.Minute, nil, "train", "--data", cora, "--split-files", sd, "--epochs", "2")
	if r.code != 0 || !strings.Contains(r.stdout, "val n/a  test n/a") || !strings.Contains(r.stdout, "final: best val n/a (no validation nodes), test n/a") {
		t.Errorf("exit %d, want the empty sets' accuracies as n/a\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	best := filepath.Join(dir, "best.ckpt")
	expectQuickFailure(t, badCase{name: "save-best without validation nodes",
		args: []string{"train", "--data", cora, "--split-files", sd, "--epochs", "2", "--quiet", "--save-best", best},
		want: "--save-best: the split has no labelled validation nodes"})
	if _, err := os.Stat(best); !os.IsNotExist(err) {
		t.Errorf("--save-best written: %v", err)
	}
}

// TestCLIEvalFeatNormMismatch: eval's --feat-norm must agree with the
// preprocessing the checkpoint was trained with.
func TestCLIEvalFeatNormMismatch(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	ck := filepath.Join(t.TempDir(), "m.ckpt")
	if r := run(t, 2*time.Minute, nil, "train", "--data", cora, "--epochs", "2", "--quiet", "--feat-norm", "row", "--save", ck); r.code != 0 {
		t.Fatal(r.stderr)
	}
	expectQuickFailure(t, badCase{name: "eval feat-norm none on a row model", args: []string{"eval", "--data", cora, "--model", ck, "--feat-norm", "none"},
		want: "--feat-norm: none, but " + ck + " was trained with --feat-norm row"})
	if r := run(t, 2*time.Minute, nil, "eval", "--data", cora, "--model", ck, "--feat-norm", "row"); r.code != 0 {
		t.Fatalf("eval with the agreeing --feat-norm: %s", r.stderr)
	}
}

// TestCLIOutputsOverInputs: an output naming an input (by its path or a
// hard link) or another output is refused before any work, and the input
// is left as it was.
func TestCLIOutputsOverInputs(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	if r := run(t, 2*time.Minute, nil, "convert", "--data", cora, "--out", p("d.sgb")); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := run(t, 2*time.Minute, nil, "train", "--data", cora, "--epochs", "1", "--quiet", "--save", p("m.ckpt")); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if err := os.Link(p("d.sgb"), p("hard.sgb")); err != nil {
		t.Fatal(err)
	}
	before := map[string]os.FileInfo{}
	for _, f := range []string{"d.sgb", "m.ckpt"} {
		before[f], _ = os.Stat(p(f))
	}
	for _, c := range []badCase{
		{name: "eval predictions over model", args: []string{"eval", "--data", cora, "--model", p("m.ckpt"), "--predictions", p("m.ckpt")}, want: "--predictions: " + p("m.ckpt") + " is also the input --model"},
		{name: "train save over data", args: []string{"train", "--data", p("d.sgb"), "--save", p("d.sgb")}, want: "--save: " + p("d.sgb") + " is also the input --data"},
		{name: "train metrics over data (hard link)", args: []string{"train", "--data", p("d.sgb"), "--metrics", p("hard.sgb")}, want: "--metrics: " + p("hard.sgb") + " is also the input --data"},
		{name: "eval predictions over data", args: []string{"eval", "--data", p("d.sgb"), "--model", p("m.ckpt"), "--predictions", p("d.sgb")}, want: "is also the input --data"},
		{name: "train save and metrics alike", args: []string{"train", "--data", p("d.sgb"), "--save", p("x"), "--metrics", p("x")}, want: "--metrics: " + p("x") + " is also the output --save"},
		{name: "eval predictions and embeddings alike", args: []string{"eval", "--data", p("d.sgb"), "--model", p("m.ckpt"), "--predictions", p("x"), "--embeddings", p("x")}, want: "--embeddings: " + p("x") + " is also the output --predictions"},
		{name: "train metrics over resume", args: []string{"train", "--data", p("d.sgb"), "--resume", p("m.ckpt"), "--epochs", "3", "--metrics", p("m.ckpt")}, want: "--metrics: " + p("m.ckpt") + " is also the input --resume"},
		{name: "convert out over data", args: []string{"convert", "--data", p("d.sgb"), "--out", p("d.sgb")}, want: "--out: " + p("d.sgb") + " is also the input --data"},
	} {
		expectQuickFailure(t, c)
	}
	for f, st := range before {
		now, err := os.Stat(p(f))
		if err != nil || now.Size() != st.Size() || !now.ModTime().Equal(st.ModTime()) {
			t.Errorf("%s changed: %v", f, err)
		}
	}
	if _, err := os.Stat(p("x")); !os.IsNotExist(err) {
		t.Errorf("an output was written: %v", err)
	}
	// --save may continue the --resume checkpoint.
	if r := run(t, 2*time.Minute, nil, "train", "--data", cora, "--epochs", "2", "--quiet", "--resume", p("m.ckpt"), "--save", p("m.ckpt")); r.code != 0 {
		t.Fatalf("--save onto the --resume checkpoint: %s", r.stderr)
	}
}

// TestCLIFullDiskPlotsAndProfiles: plots and CPU profiles on a full disk
// end with one error line and leave no truncated or empty file behind.
func TestCLIFullDiskPlotsAndProfiles(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	metrics := filepath.Join(t.TempDir(), "m.jsonl")
	if r := run(t, 2*time.Minute, nil, "train", "--data", cora, "--epochs", "3", "--quiet", "--metrics", metrics); r.code != 0 {
		t.Fatal(r.stderr)
	}
	disk := testdataset.SmallDisk(t, 24<<10)
	figs, prof := filepath.Join(disk, "figs"), filepath.Join(disk, "cpu.prof")
	// Fill the disk but for a few kB: the first PNG or the profile cannot fit.
	if err := os.WriteFile(filepath.Join(disk, "filler"), make([]byte, 20<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	expectQuickFailure(t, badCase{name: "plot on a full disk", args: []string{"plot", metrics, "--out", figs}, want: "no space left on device"})
	expectQuickFailure(t, badCase{name: "cpuprofile on a full disk",
		args: []string{"train", "--data", cora, "--epochs", "30", "--quiet", "--cpuprofile", prof}, want: "--cpuprofile: "})
	filepath.Walk(disk, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && path != filepath.Join(disk, "filler") {
			t.Errorf("left on the full disk: %s (%d bytes)", path, info.Size())
		}
		return nil
	})
}

// TestCLISignalDuringConvert: SIGTERM while convert runs ends it with 143
// and leaves no output and no .tmp.
func TestCLISignalDuringConvert(t *testing.T) {
	dir := t.TempDir()
	src, out := filepath.Join(dir, "g.sgb"), filepath.Join(dir, "c.sgb")
	if r := run(t, 2*time.Minute, nil, "gen", "--spec", "nodes=200000,degree=20,feat=32", "--out", src); r.code != 0 {
		t.Fatal(r.stderr)
	}
	for _, after := range []time.Duration{300 * time.Millisecond, 900 * time.Millisecond} {
		r := runWith(t, time.Minute, nil, signalAfterStart(syscall.SIGTERM, after), nil, "convert", "--data", src, "--out", out)
		if r.code == 0 {
			os.Remove(out) // finished before the signal
			continue
		}
		if r.code != 143 || goroutineTrace.MatchString(r.stderr) {
			t.Errorf("SIGTERM after %v: exit %d\n%s", after, r.code, r.stderr)
		}
		for _, f := range []string{out, out + ".tmp"} {
			if _, err := os.Stat(f); !os.IsNotExist(err) {
				t.Errorf("SIGTERM after %v: %s left", after, f)
			}
		}
	}
}

// TestCLIResumeNodeOrder: --node-order contradicting the checkpoint is
// refused (the dropout masks follow the order); left out, it is taken from
// the checkpoint.
func TestCLIResumeNodeOrder(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	ck := filepath.Join(t.TempDir(), "c.ckpt")
	if r := run(t, 2*time.Minute, nil, "train", "--data", cora, "--epochs", "3", "--quiet", "--node-order", "cluster", "--save", ck); r.code != 0 {
		t.Fatal(r.stderr)
	}
	expectQuickFailure(t, badCase{name: "resume with another node order", args: []string{"train", "--data", cora, "--epochs", "6", "--resume", ck, "--node-order", "given"},
		want: "--node-order given contradicts --resume " + ck})
	if r := run(t, 2*time.Minute, nil, "train", "--data", cora, "--epochs", "6", "--quiet", "--resume", ck); r.code != 0 {
		t.Fatalf("resume without --node-order: %s", r.stderr)
	}
}

// TestCLIPartsBeyondNodes: more parts than nodes is one line naming
// --parts, serial and under mpirun, before METIS could fail on an empty
// bisection.
func TestCLIPartsBeyondNodes(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	out := filepath.Join(t.TempDir(), "p")
	expectQuickFailure(t, badCase{name: "partition 5000 parts of cora", args: []string{"partition", "--data", cora, "--parts", "5000", "--out", out},
		want: "--parts: 5000 parts, but cora has 2708 nodes"})
	r := run(t, 2*time.Minute, mpirun(t, 2), "partition", "--data", cora, "--parts", "5000", "--method", "ldg", "--out", out)
	if r.code == 0 || strings.Count(r.stderr, "--parts: 5000 parts") != 1 {
		t.Errorf("under mpirun: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s written: %v", out, err)
	}
}

// TestCLIInternalFlags: the internal --worker of bench profile, run by hand,
// is refused at once instead of waiting on pipes nobody feeds.
func TestCLIInternalFlags(t *testing.T) {
	for _, args := range [][]string{{"bench", "profile", "--worker", "1"}, {"bench", "profile", "--worker", "1", "--lockstep"}} {
		expectQuickFailure(t, badCase{name: strings.Join(args, " "), args: args, want: "--worker: internal"})
	}
}

// TestCLISyntheticFeaturesNegative: a negative --synthetic-features is an
// error whatever the input (a .sgb used to ignore it).
func TestCLISyntheticFeaturesNegative(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	expectQuickFailure(t, badCase{name: "train synthetic-features -1", args: []string{"train", "--data", cora, "--synthetic-features", "-1"},
		want: "--synthetic-features -1 --classes 8: want features ≥ 0"})
}

// TestCLIPlotOutOfRangeMetrics: a metrics record no run writes (an epoch of
// 1e15, an accuracy of 7, a negative time) is refused with its file, line,
// field and value, and no figure is drawn from it.
func TestCLIPlotOutOfRangeMetrics(t *testing.T) {
	dir := t.TempDir()
	good := `{"header":true,"ranks":1}` + "\n" + `{"epoch":1,"loss":1.9,"train_acc":0.3,"val_acc":0.3,"test_acc":0.3,"evaluated":true,"epoch_s":0.1,"aggr_s":0.05}` + "\n"
	out := filepath.Join(dir, "figs")
	for i, c := range []struct{ rec, want string }{
		{`{"epoch":1e15,"loss":1,"epoch_s":0.1}`, ":3: field epoch: value 1e+15, want an integer in [1, 1e9]"},
		{`{"epoch":2,"loss":1,"val_acc":7.0,"epoch_s":0.1}`, ":3: field val_acc: value 7, want an accuracy in [0, 1]"},
		{`{"epoch":2,"loss":1,"epoch_s":-3}`, ":3: field epoch_s: value -3, want a finite time ≥ 0 (seconds)"},
		{`{"epoch":2,"loss":1,"lr":-0.01}`, ":3: field lr: value -0.01, want a finite learning rate > 0"},
	} {
		m := filepath.Join(dir, fmt.Sprintf("m%d.jsonl", i))
		if err := os.WriteFile(m, []byte(good+c.rec+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		expectQuickFailure(t, badCase{name: "plot " + c.rec, args: []string{"plot", m, "--out", out}, want: m + c.want})
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("plot wrote its output directory from a bad file: %v", err)
	}
}

// TestCLIHugeFeatures: input features of 3e38 overflow float32 products in
// the first epoch; the error says so (and how to scale them) rather than
// blaming the learning rate, and nothing is saved. Row normalisation
// trains on them.
func TestCLIHugeFeatures(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	const nodes, cols = 2708, 2 // Cora's nodes
	x := make([]float32, nodes*cols)
	for i := range x {
		x[i] = 1
	}
	for i := range 20 * cols {
		x[i] = 3e38
	}
	feat := filepath.Join(dir, "x.npy")
	if err := graph.WriteNpyF32(feat, nodes, cols, x); err != nil {
		t.Fatal(err)
	}
	ckpt := filepath.Join(dir, "m.ckpt")
	args := []string{"train", "--data", cora, "--features", feat, "--epochs", "3", "--quiet"}
	expectQuickFailure(t, badCase{name: "train features 3e38", args: append(slices.Clone(args), "--save", ckpt),
		want: "the input features reach 3.0e+38 in magnitude, beyond what float32 products hold; scale them (--feat-norm row) or check the data"})
	if _, err := os.Stat(ckpt); !os.IsNotExist(err) {
		t.Errorf("the diverged run wrote its checkpoint: %v", err)
	}
	if r := run(t, 30*time.Second, nil, append(args, "--feat-norm", "row")...); r.code != 0 {
		t.Errorf("--feat-norm row: %s", r.stderr)
	}
}

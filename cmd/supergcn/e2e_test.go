package main

// End-to-end tests of the supergcn binary, under mpirun where they need it.
// They build the binary once (or use $SUPERGCN_BIN) and skip, saying so,
// when mpirun or the shared datasets are absent.

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/supergcn/supergcn/internal/testdataset"
)

var binPath string

func TestMain(m *testing.M) {
	code := func() int {
		flag.Parse()
		if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
			return m.Run() // fuzz targets call the parsers in process: no binary
		}
		if p := os.Getenv("SUPERGCN_BIN"); p != "" {
			abs, err := filepath.Abs(p)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			binPath = abs
			return m.Run()
		}
		dir, err := os.MkdirTemp("", "supergcn-e2e")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		binPath = filepath.Join(dir, "supergcn")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "building supergcn: %v\n%s", err, out)
			return 1
		}
		return m.Run()
	}()
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
	elapsed        time.Duration
}

// run executes the binary (behind an optional launcher) with a time limit.
func run(t *testing.T, limit time.Duration, launcher []string, args ...string) result {
	t.Helper()
	return runWith(t, limit, nil, nil, launcher, args...)
}

// runWith is run with extra environment variables, and a func called with
// the started process (to signal it) while it runs.
func runWith(t *testing.T, limit time.Duration, env []string, during func(*os.Process), launcher []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	argv := append(append(append([]string{}, launcher...), binPath), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_rmaps_base_oversubscribe=1", "OMPI_MCA_mpi_yield_when_idle=1"), env...)
	if during != nil {
		cmd.Cancel = func() error { return cmd.Process.Kill() }
	}
	var so, se strings.Builder
	cmd.Stdout, cmd.Stderr = &so, &se
	t0 := time.Now()
	err := cmd.Start()
	if err == nil {
		if during != nil {
			during(cmd.Process)
		}
		err = cmd.Wait()
	}
	r := result{stdout: so.String(), stderr: se.String(), elapsed: time.Since(t0)}
	if ctx.Err() != nil {
		t.Fatalf("%v did not end within %v\nstdout:\n%s\nstderr:\n%s", argv, limit, r.stdout, r.stderr)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", argv, err)
	}
	return r
}

func mpirun(t *testing.T, np int) []string {
	t.Helper()
	p, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("mpirun not found: skipping MPI end-to-end test")
	}
	return []string{p, "--oversubscribe", "-np", fmt.Sprint(np)}
}

// losses reads the per-epoch losses of a metrics file.
func losses(t *testing.T, path string) []float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m struct {
			Final  bool    `json:"final"`
			Header bool    `json:"header"`
			Loss   float64 `json:"loss"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !m.Final && !m.Header {
			out = append(out, m.Loss)
		}
	}
	return out
}

// exactTrainArgs are the train flags of runs whose losses must agree
// across rank counts: Cora row-normalised, no dropout, fp32 rows.
func exactTrainArgs(model string, epochs int) []string {
	return []string{"--feat-norm", "row", "--model", model, "--dropout", "0", "--epochs", fmt.Sprint(epochs), "--seed", "5", "--bits", "32",
		"--threads", "1", "--quiet"}
}

// trainLosses runs supergcn train (behind launcher) with a metrics file
// in dir named after name, and returns its per-epoch losses.
func trainLosses(t *testing.T, dir string, launcher []string, name string, args ...string) []float64 {
	t.Helper()
	out := filepath.Join(dir, name+".jsonl")
	r := run(t, 5*time.Minute, launcher, append([]string{"train", "--metrics", out}, args...)...)
	if r.code != 0 {
		t.Fatalf("%s: exit %d\n%s", name, r.code, r.stderr)
	}
	return losses(t, out)
}

func sameLosses(t *testing.T, what string, ref, got []float64) {
	t.Helper()
	if len(ref) != len(got) || len(ref) == 0 {
		t.Fatalf("%s: %d epochs vs %d", what, len(got), len(ref))
	}
	for i := range ref {
		if math.Abs(ref[i]-got[i]) > 1e-4*math.Abs(ref[i]) {
			t.Fatalf("%s: epoch %d loss %.8f, one process %.8f", what, i+1, got[i], ref[i])
		}
	}
}

func TestCLIHelpAndBadFlags(t *testing.T) {
	for _, sub := range []string{"train", "eval", "info", "partition", "stats", "gen", "convert", "bench"} {
		r := run(t, time.Minute, nil, sub, "--help")
		if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "usage: supergcn "+sub) {
			t.Errorf("%s --help: exit %d\n%s%s", sub, r.code, r.stdout, r.stderr)
		}
	}
	r := run(t, time.Minute, nil, "train", "--bits", "3")
	if r.code == 0 || !strings.Contains(r.stderr, "--bits") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("bad --bits: exit %d, stderr %q", r.code, r.stderr)
	}
	// --save-every and --resume are checked before any data is read.
	missing := filepath.Join(t.TempDir(), "missing.ckpt")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--save-every", "5"}, "--save-every: needs --save"},
		{[]string{"--save", filepath.Join(t.TempDir(), "m.ckpt"), "--save-every", "-1"}, "--save-every: -1"},
		{[]string{"--resume", missing}, "--resume: open " + missing},
	} {
		r := run(t, time.Minute, nil, append([]string{"train", "--data", missing}, c.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("train %v: exit %d, stderr %q, want %q", c.args, r.code, r.stderr, c.want)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.txt")
	os.WriteFile(bad, []byte("0 1\n1 2\n2 x\n"), 0o644)
	r = run(t, time.Minute, nil, "train", "--data", bad, "--synthetic-features", "8")
	if r.code == 0 || !strings.Contains(r.stderr, bad+":3") {
		t.Errorf("malformed edge list: exit %d, stderr %q", r.code, r.stderr)
	}
}

// mpirun -np P supergcn train equals the single-process run for 50 epochs:
// every model (GIN, SGC and APPNP in memory only), in memory (METIS on rank 0, or random) and from an 8-part
// METIS directory at P = 1, 2, 4, 8; an 8-part directory refuses 3 ranks.
func TestMPITrainEqualsSingle(t *testing.T) {
	coraDir := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	extra := map[string][]string{"gin": {"--train-eps"}, "appnp": {"--k", "5"}}
	common := func(model string) []string { return append(exactTrainArgs(model, 50), extra[model]...) }
	train := func(launcher []string, name string, args ...string) []float64 {
		t.Helper()
		return trainLosses(t, dir, launcher, name, args...)
	}
	ref := map[string][]float64{}
	for _, model := range []string{"gcn", "sage", "gin", "sgc", "appnp"} {
		ref[model] = train(nil, "ref-"+model, append([]string{"--data", coraDir}, common(model)...)...)
	}
	for _, c := range []struct {
		model, method string
		np            int
	}{{"gcn", "metis", 2}, {"sage", "metis", 4}, {"gcn", "random", 8}, {"sage", "random", 2},
		{"gin", "metis", 3}, {"sgc", "random", 4}, {"appnp", "metis", 2}} {
		name := fmt.Sprintf("%s-%s-np%d", c.model, c.method, c.np)
		got := train(mpirun(t, c.np), name, append([]string{"--data", coraDir, "--partition-method", c.method}, common(c.model)...)...)
		sameLosses(t, "in memory, "+name, ref[c.model], got)
	}

	pdir := filepath.Join(dir, "cora-8")
	if r := run(t, 5*time.Minute, nil, "partition", "--data", coraDir, "--parts", "8", "--method", "metis", "--out", pdir); r.code != 0 {
		t.Fatalf("partition: %s", r.stderr)
	}
	for _, np := range []int{1, 2, 4, 8} {
		for _, model := range []string{"gcn", "sage"} {
			if model == "sage" && np != 8 {
				continue
			}
			name := fmt.Sprintf("dir-%s-np%d", model, np)
			got := train(mpirun(t, np), name, append([]string{"--partitions", pdir}, common(model)...)...)
			sameLosses(t, fmt.Sprintf("8-part directory, %s on %d ranks", model, np), ref[model], got)
		}
	}

	// 8 parts on 3 ranks: a clear error before any work, every rank ends.
	r := run(t, 2*time.Minute, mpirun(t, 3), "train", "--partitions", pdir, "--epochs", "5")
	if r.code == 0 || !strings.Contains(r.stderr, "8") || !strings.Contains(r.stderr, "3") {
		t.Fatalf("8 parts on 3 ranks: exit %d\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, "epoch ") {
		t.Fatalf("8 parts on 3 ranks started training:\n%s", r.stdout)
	}
	t.Logf("8 parts on 3 ranks: %s", firstLine(r.stderr, "evenly"))
}

// A damaged part file is reported with its name, and the error on one rank
// ends the whole job quickly: no rank is left waiting in a collective.
func TestMPIDamagedPartAbortsJob(t *testing.T) {
	coraDir := testdataset.Dataset(t, "cora")
	pdir := filepath.Join(t.TempDir(), "cora-4")
	if r := run(t, 5*time.Minute, nil, "partition", "--data", coraDir, "--parts", "4", "--method", "metis", "--out", pdir); r.code != 0 {
		t.Fatalf("partition: %s", r.stderr)
	}
	victim := filepath.Join(pdir, "part-00003.bin")
	b, err := os.ReadFile(victim)
	if err != nil {
		t.Fatal(err)
	}
	for _, damage := range []string{"truncated", "flipped"} {
		d := b
		if damage == "truncated" {
			d = b[:len(b)/2]
		} else {
			d = append([]byte{}, b...)
			d[len(d)/2] ^= 0x40
		}
		if err := os.WriteFile(victim, d, 0o644); err != nil {
			t.Fatal(err)
		}
		r := run(t, 2*time.Minute, mpirun(t, 4), "train", "--partitions", pdir, "--epochs", "3")
		if r.code == 0 || !strings.Contains(r.stderr, "part-00003.bin") {
			t.Fatalf("%s part file: exit %d\n%s", damage, r.code, r.stderr)
		}
		t.Logf("%s part file: job ended in %v with: %s", damage, r.elapsed.Round(time.Millisecond), firstLine(r.stderr, "part-00003"))
	}
}

func firstLine(s, containing string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, containing) {
			return l
		}
	}
	return ""
}

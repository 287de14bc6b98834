package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// emuCluster returns the launcher that runs a job on scripts/emu-cluster.sh
// (nodes network namespaces with shaped links), or skips when this machine
// cannot make namespaces.
func emuCluster(t *testing.T, nodes, perNode int, rate string) []string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("not root: skipping the emulated-cluster test (network namespaces need root)")
	}
	for _, c := range []string{"ip", "tc", "unshare", "mpirun"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("%s not found: skipping the emulated-cluster test", c)
		}
	}
	script, err := filepath.Abs("../../scripts/emu-cluster.sh")
	if err != nil {
		t.Fatal(err)
	}
	probe := "supergcn-netns-probe"
	if out, err := exec.Command("ip", "netns", "add", probe).CombinedOutput(); err != nil {
		t.Skipf("cannot create a network namespace here (%v: %s): skipping the emulated-cluster test", err, strings.TrimSpace(string(out)))
	}
	exec.Command("ip", "netns", "del", probe).Run()
	return []string{script, strconv.Itoa(nodes), strconv.Itoa(perNode), rate, "--"}
}

// emuNamespaces lists the namespaces emu-cluster.sh made (emuXXXX-...).
func emuNamespaces(t *testing.T) []string {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	var ns []string
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(f[0], "emu") {
			ns = append(ns, f[0])
		}
	}
	return ns
}

// linkStats is the line emu-cluster.sh prints after a job: the shapers'
// drops, TCP retransmissions and timeouts.
var linkStats = regexp.MustCompile(`(?m)^emu-cluster: links: dropped=[0-9]+ retransmitted=[0-9]+ timeouts=[0-9]+$`)

// Two "nodes" of one rank each, talking TCP over a shaped 1 Gbit/s link,
// train with the same per-epoch losses as two ranks in shared memory, in
// fp32 and int2, and say what their links dropped; the namespaces are gone
// afterwards, also after a job that fails.
func TestEmuClusterEqualsSharedMemory(t *testing.T) {
	emu := emuCluster(t, 2, 1, "1gbit")
	before := len(emuNamespaces(t))
	dir := t.TempDir()
	common := []string{"--synthetic", "nodes=3000,degree=8,classes=5,feat=24,seed=3", "--hidden", "16", "--dropout", "0",
		"--epochs", "12", "--seed", "5", "--threads", "1", "--quiet", "--partition-method", "metis"}
	train := func(launcher []string, name string, args ...string) []float64 {
		t.Helper()
		out := filepath.Join(dir, name+".jsonl")
		r := run(t, 5*time.Minute, launcher, append(append([]string{"train", "--metrics", out}, common...), args...)...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", name, r.code, r.stdout, r.stderr)
		}
		if strings.HasPrefix(name, "emu-") && !linkStats.MatchString(r.stderr) {
			t.Fatalf("%s: no link counters line on stderr:\n%s", name, r.stderr)
		}
		return losses(t, out)
	}
	for _, bits := range []string{"32", "2"} {
		// --intra-bits: the two ranks in shared memory quantise as two nodes do
		shm := train(mpirun(t, 2), "shm-"+bits, "--bits", bits, "--intra-bits", bits)
		net := train(emu, "emu-"+bits, "--bits", bits, "--intra-bits", bits)
		sameLosses(t, "2 nodes × 1 rank over TCP, --bits "+bits, shm, net)
	}
	// A failing job: its exit status comes back, and nothing is left behind.
	r := run(t, 2*time.Minute, emu, "train", "--data", filepath.Join(dir, "missing"), "--epochs", "1")
	if r.code == 0 || !strings.Contains(r.stderr, "missing") {
		t.Fatalf("failing job on the emulated cluster: exit %d\n%s", r.code, r.stderr)
	}
	if after := emuNamespaces(t); len(after) != before {
		t.Fatalf("namespaces left behind: %v", after)
	}
}

// headerExchange reads the exchange the metrics header says ran.
func headerExchange(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	var h struct {
		Header   bool   `json:"header"`
		Exchange string `json:"exchange"`
	}
	if err := json.Unmarshal([]byte(first), &h); err != nil || !h.Header {
		t.Fatalf("%s: no header line (%v): %.200s", path, err, first)
	}
	return h.Exchange
}

// Four ranks as 2 nodes × 2 on the emulated cluster: MPI_Comm_split_type
// (SHARED) tells the nodes apart (each has its own orted and hostname), so
// the default exchange is two-level, and its fp32 per-epoch losses equal
// the flat exchange's on the same cluster; in shared memory (one node) the
// default is flat. two-level-paired gives the same losses too.
func TestEmuClusterTwoLevelEqualsFlat(t *testing.T) {
	emu := emuCluster(t, 2, 2, "1gbit")
	dir := t.TempDir()
	common := []string{"--synthetic", "nodes=3000,degree=8,classes=5,feat=24,seed=3", "--hidden", "16", "--dropout", "0",
		"--epochs", "10", "--seed", "5", "--threads", "1", "--quiet", "--partition-method", "metis", "--bits", "32"}
	train := func(launcher []string, name string, args ...string) ([]float64, string) {
		t.Helper()
		out := filepath.Join(dir, name+".jsonl")
		r := run(t, 5*time.Minute, launcher, append(append([]string{"train", "--metrics", out}, common...), args...)...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", name, r.code, r.stdout, r.stderr)
		}
		return losses(t, out), headerExchange(t, out)
	}
	flat, ex := train(emu, "flat", "--exchange", "flat")
	if ex != "flat" {
		t.Fatalf("--exchange flat ran %q", ex)
	}
	two, ex := train(emu, "auto")
	if ex != "two-level" {
		t.Fatalf("2 nodes × 2 ranks: the default exchange is %q, want two-level (does split_type(SHARED) see the nodes?)", ex)
	}
	sameLosses(t, "2 nodes × 2 ranks, two-level vs flat, fp32", flat, two)
	paired, ex := train(emu, "paired", "--exchange", "two-level-paired")
	if ex != "two-level-paired" {
		t.Fatalf("--exchange two-level-paired ran %q", ex)
	}
	sameLosses(t, "2 nodes × 2 ranks, two-level-paired vs flat, fp32", flat, paired)
	if _, ex := train(mpirun(t, 4), "shm"); ex != "flat" {
		t.Fatalf("one node × 4 ranks: the default exchange is %q, want flat", ex)
	}
}

package main

import (
	"github.com/supergcn/supergcn/cmd/internal/flagtab"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/supergcn/supergcn/perfmodel"
	"github.com/supergcn/supergcn/perfmodel/measure"
)

// TestBenchProfileFlags: bad measuring flags are one-line errors naming
// the flag.
func TestBenchProfileFlags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.json")
	if err := benchProfile([]string{"--published", "cray-1", "--out", path}); err == nil {
		t.Error("unknown published hardware accepted")
	}
	if err := benchProfile([]string{"--threads", "99", "--cores", "2", "--out", path}); err == nil {
		t.Error("--threads above --cores accepted")
	}
	for _, bad := range [][]string{{"--loads", "0"}, {"--loads", "x"}, {"--loads", "1,,2"}, {"--peers", "0"}, {"--exchange-rows", "2", "--peers", "3"}, {"--exchange-rows", "-2"}, {"--halo-fan", "0"},
		{"--host-nodes", "-1"}, {"--host-nodes", "10"}} {
		err := benchProfile(append([]string{"--cores", "1", "--out", path}, bad...))
		if err == nil || !strings.Contains(flagtab.UserMessage(err), bad[0]) {
			t.Errorf("%v: %v, want an error naming %s", bad, err, bad[0])
		}
	}
}

// TestProfileCopiesLockstep: `bench profile` with two copies at once (the
// workers kept in step through their pipes) ends and writes a valid
// profile with the copies recorded.
func TestProfileCopiesLockstep(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("needs 2 CPUs: bench profile times the node full, a copy a core")
	}
	prof := filepath.Join(t.TempDir(), "p.json")
	r := run(t, 3*time.Minute, nil, "bench", "profile", "--cores", "2", "--threads", "1", "--loads=", "--nodes", "2000", "--degree", "8",
		"--rows", "512", "--exchange-rows", "2048", "--peers", "3", "--reps", "1", "--out", prof)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	p, err := perfmodel.LoadProfile(prof)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rates) != 1 || p.Rates[0].Copies != 2 || p.Rates[0].Exchange == nil || !strings.Contains(p.Source, "lockstep") || !strings.Contains(p.Source, "--spec products --nodes 2000 --degree 8") {
		t.Errorf("rates %+v, source %q: want one entry of 2 copies with the exchange pattern on a products-like graph, measured in lockstep", p.Rates, p.Source)
	}

	// --shards: each copy aggregates its own part of a real partition
	dir := t.TempDir()
	data, pdir := filepath.Join(dir, "g.sgb"), filepath.Join(dir, "p2")
	for _, args := range [][]string{
		{"gen", "--spec", "nodes=3000,degree=10,classes=5,feat=4", "--out", data},
		{"partition", "--data", data, "--parts", "2", "--method", "random", "--out", pdir},
		{"bench", "profile", "--cores", "2", "--threads", "1", "--loads=", "--shards", pdir, "--rows", "512", "--exchange-rows", "2048",
			"--peers", "3", "--reps", "1", "--out", prof},
	} {
		if r := run(t, 3*time.Minute, nil, args...); r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
	}
	if p, err = perfmodel.LoadProfile(prof); err != nil {
		t.Fatal(err)
	}
	if len(p.Rates) != 1 || len(p.Rates[0].Aggr) != len(measure.Widths) || !strings.Contains(p.Source, "the 2 parts of "+pdir) {
		t.Errorf("--shards: %d entries, source %q", len(p.Rates), p.Source)
	}
	if r := run(t, time.Minute, nil, "bench", "profile", "--cores", "1", "--shards", filepath.Join(dir, "none"), "--out", prof); r.code == 0 || !strings.Contains(r.stderr, "--shards") {
		t.Errorf("--shards of no partition: exit %d, %q", r.code, r.stderr)
	}
	if r := run(t, time.Minute, nil, "bench", "profile", "--cores", "1", "--shards", pdir, "--host-nodes", "3000", "--out", prof); r.code == 0 || !strings.Contains(r.stderr, "--host-nodes") {
		t.Errorf("--host-nodes with --shards: exit %d, %q", r.code, r.stderr)
	}

	// --host-nodes: the copies of a measurement share that many nodes
	// (and as many rows in its dense passes, so --rows is refused with it)
	if r := run(t, time.Minute, nil, "bench", "profile", "--cores", "2", "--host-nodes", "6000", "--rows", "512", "--out", prof); r.code != 2 || !strings.Contains(r.stderr, "--rows") {
		t.Errorf("--rows with --host-nodes: exit %d, %q", r.code, r.stderr)
	}
	r = run(t, 3*time.Minute, nil, "bench", "profile", "--cores", "2", "--threads", "1,2", "--loads=", "--host-nodes", "6000", "--degree", "8",
		"--exchange-rows", "0", "--reps", "1", "--out", prof)
	if r.code != 0 {
		t.Fatalf("--host-nodes: exit %d: %s", r.code, r.stderr)
	}
	if p, err = perfmodel.LoadProfile(prof); err != nil {
		t.Fatal(err)
	}
	if len(p.Rates) != 2 || p.Rates[0].AggrNodes != 3000 || p.Rates[1].AggrNodes != 6000 || p.Rates[0].Rows != 3000 || p.Rates[1].Rows != 6000 ||
		!strings.Contains(p.Source, "--host-nodes 6000") || strings.Contains(p.Source, "--rows") {
		t.Errorf("--host-nodes 6000: rates %+v, source %q: want 3000 nodes and rows a copy at 1 thread (2 copies), 6000 at 2", p.Rates, p.Source)
	}
	// --add: a thread count measured later joins the profile (its link stays)
	first := filepath.Join(dir, "first.json")
	small := []string{"--loads=", "--nodes", "2000", "--degree", "8", "--rows", "512", "--exchange-rows", "0", "--reps", "1"}
	for _, args := range [][]string{{"--threads", "2", "--out", first}, {"--threads", "1", "--add", first, "--out", first}} {
		if r := run(t, 3*time.Minute, nil, append(append([]string{"bench", "profile", "--cores", "2"}, small...), args...)...); r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
		if args[1] == "2" {
			if p, err = perfmodel.LoadProfile(first); err != nil {
				t.Fatal(err)
			}
		}
	}
	link := p.IntraNode
	if p, err = perfmodel.LoadProfile(first); err != nil {
		t.Fatal(err)
	}
	if len(p.Rates) != 2 || p.Rates[0].Threads != 1 || p.Rates[1].Threads != 2 || p.IntraNode != link || !strings.Contains(p.Source, "; and ") {
		t.Errorf("--add: rates %d, intra-node %+v (was %+v), source %q: want 1 and 2 threads, the first link, both sources", len(p.Rates), p.IntraNode, link, p.Source)
	}
	if r := run(t, time.Minute, nil, append([]string{"bench", "profile", "--cores", "1", "--add", first, "--out", prof}, small...)...); r.code != 2 || !strings.Contains(r.stderr, "--add") {
		t.Errorf("--add of a 2-core profile to a 1-core run: exit %d, %q", r.code, r.stderr)
	}

	// predict warns of it: a rank of the 2-part partition holds 1500 of its 3000 nodes
	r = run(t, time.Minute, nil, "predict", "--partitions", pdir, "--profile", prof, "--network", "shm", "--model", "gcn", "--bits", "32")
	if r.code != 0 || !strings.Contains(r.stderr, "warning: profile") || !strings.Contains(r.stderr, "--host-nodes 1500") {
		t.Errorf("predict with a profile of 6000 nodes a machine for 1500: exit %d, stderr %q: want a warning naming --host-nodes 1500", r.code, r.stderr)
	}
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/supergcn/supergcn/perfmodel"
)

// TestBenchAlltoall: the intra-node link measured under mpirun replaces
// the profile's assumed one; one process, bad flags and a broken profile
// are one-line errors.
func TestBenchAlltoall(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "p.json")
	p, _ := perfmodel.FromPublished("xeon-gold-6148")
	if err := perfmodel.WriteProfile(prof, p); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.json")
	os.WriteFile(broken, []byte("{\n  \"cores_per_node\": 4,,"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--rows", "10"}, "at least 2 ranks"},
		{[]string{"--rows", "0"}, "--rows, --width and --reps must be positive"},
		{[]string{"--profile", broken}, "broken.json: line 2, column 23: invalid character ','"},
	} {
		r := run(t, time.Minute, nil, append([]string{"bench", "alltoall"}, c.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want one line containing %q", c.args, r.code, r.stderr, c.want)
		}
	}
	r := run(t, 2*time.Minute, mpirun(t, 2), "bench", "alltoall", "--rows", "2000", "--width", "16", "--reps", "3", "--profile", prof)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	got, err := perfmodel.LoadProfile(prof)
	if err != nil {
		t.Fatal(err)
	}
	if l := got.IntraNode; !(l.GBs > 0) || l.LatencyUS < 0 || l.Efficiency != 1 || l == p.IntraNode || !strings.Contains(got.Source, "bench alltoall` (2 ranks") {
		t.Errorf("intra_node %+v, source %q", l, got.Source)
	}
	got.IntraNode, got.Source = p.IntraNode, p.Source
	if a, b := mustJSON(t, got), mustJSON(t, p); a != b {
		t.Errorf("bench alltoall changed more than intra_node:\n%s\nwant\n%s", a, b)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

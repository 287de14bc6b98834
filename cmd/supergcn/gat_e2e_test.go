package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/supergcn/supergcn/internal/testdataset"
)

// mpirun -np 3 supergcn train --model gat equals the single-process run,
// post, pre and hybrid, with attention dropout on (its masks do not depend
// on the ranks).
func TestMPIGATEqualsSingle(t *testing.T) {
	coraDir := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	common := []string{"--data", coraDir, "--feat-norm", "row", "--model", "gat", "--hidden", "16", "--heads", "4",
		"--dropout", "0", "--attn-dropout", "0.3", "--lr", "0.005", "--epochs", "15", "--seed", "5", "--bits", "32",
		"--threads", "1", "--quiet"}
	ref := trainLosses(t, dir, nil, "ref", common...)
	for _, mode := range []string{"post", "pre", "hybrid"} {
		name := fmt.Sprintf("gat-%s-np3", mode)
		got := trainLosses(t, dir, mpirun(t, 3), name, append([]string{"--partition-method", "random", "--aggr-mode", mode}, common...)...)
		sameLosses(t, name, ref, got)
	}
}

// GAT's flags are checked before any data is read, naming the flag.
func TestGATFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "gat", "--hidden", "16", "--heads", "3"}, "--heads: 3 heads do not divide the hidden width 16"},
		{[]string{"--model", "gat", "--attn-dropout", "1"}, "--attn-dropout: 1 is not in [0, 1)"},
		{[]string{"--model", "gcn", "--heads", "4"}, "--heads: only with --model gat"},
	} {
		r := run(t, time.Minute, nil, append([]string{"train", "--data", filepath.Join(t.TempDir(), "missing")}, c.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("train %v: exit %d, stderr %q, want %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

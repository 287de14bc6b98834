package main

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/supergcn/supergcn/internal/testdataset"
)

// mpirun -np 2, 3, 4 supergcn train --model gatv2 equals the single-process
// run (post, pre and hybrid at 3 ranks, hybrid at 2 and 4), attention
// dropout on; int2 rows (every rank pair quantised) train to finite losses
// near fp32's.
func TestMPIGATv2EqualsSingle(t *testing.T) {
	coraDir := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	common := []string{"--data", coraDir, "--feat-norm", "row", "--model", "gatv2", "--hidden", "4", "--heads", "4",
		"--dropout", "0", "--attn-dropout", "0.3", "--lr", "0.005", "--epochs", "12", "--seed", "5",
		"--threads", "1", "--quiet", "--partition-method", "random"}
	ref := trainLosses(t, dir, nil, "ref", append([]string{"--bits", "32"}, common...)...)
	for _, c := range []struct {
		np   int
		mode string
	}{{3, "post"}, {3, "pre"}, {3, "hybrid"}, {2, "hybrid"}, {4, "hybrid"}} {
		name := fmt.Sprintf("gatv2-%s-np%d", c.mode, c.np)
		got := trainLosses(t, dir, mpirun(t, c.np), name, append([]string{"--aggr-mode", c.mode, "--bits", "32"}, common...)...)
		sameLosses(t, name, ref, got)
	}
	got := trainLosses(t, dir, mpirun(t, 3), "int2", append([]string{"--aggr-mode", "hybrid", "--bits", "2", "--intra-bits", "2"}, common...)...)
	for i, l := range got {
		if math.IsNaN(l) || math.Abs(l-ref[i]) > 0.05*ref[i] {
			t.Fatalf("int2: epoch %d loss %.5f, fp32 %.5f", i+1, l, ref[i])
		}
	}
}

// --share-weights takes 0 or 1, and only with gatv2; the attention flags
// go with gatv2 as with gat.
func TestGATv2Flags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "gatv2", "--share-weights", "0.5"}, "--share-weights: 0.5 is not a whole number"},
		{[]string{"--model", "gatv2", "--share-weights", "2"}, "--share-weights: 2 is not in [0, 1]"},
		{[]string{"--model", "gat", "--share-weights", "1"}, "--share-weights"},
		{[]string{"--model", "gatv2", "--attn-dropout", "1"}, "--attn-dropout: 1 is not in [0, 1)"},
	} {
		r := run(t, time.Minute, nil, append([]string{"train", "--data", filepath.Join(t.TempDir(), "missing")}, c.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("train %v: exit %d, stderr %q, want %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/supergcn/supergcn/internal/testdataset"
)

// mpirun -np P supergcn train --model gcnii (16 layers, its
// hyperparameters given as flags) equals the single-process run.
func TestMPIGCNIIEqualsSingle(t *testing.T) {
	coraDir := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	common := []string{"--data", coraDir, "--feat-norm", "row", "--model", "gcnii", "--layers", "16", "--hidden", "16",
		"--alpha", "0.2", "--theta", "0.8", "--conv-decay", "0.005", "--dropout", "0", "--epochs", "10", "--seed", "5",
		"--bits", "32", "--threads", "1", "--quiet"}
	ref := trainLosses(t, dir, nil, "ref", common...)
	for _, np := range []int{2, 4} {
		name := fmt.Sprintf("gcnii-np%d", np)
		got := trainLosses(t, dir, mpirun(t, np), name, append([]string{"--partition-method", "metis"}, common...)...)
		sameLosses(t, name, ref, got)
	}
}

// The declared hyperparameters are checked before any data is read,
// naming the flag: out of range, or given to a model that does not take
// them.
func TestHyperFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "gcnii", "--theta", "-1"}, "--theta: -1 is not in [0, 1000]"},
		{[]string{"--model", "gcn", "--theta", "0.5"}, "--theta: 0.5, but gcn takes no theta (gcnii do)"},
		{[]string{"--model", "gcnii", "--conv-decay", "x"}, "conv-decay"},
	} {
		r := run(t, time.Minute, nil, append([]string{"train", "--data", filepath.Join(t.TempDir(), "missing")}, c.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("train %v: exit %d, stderr %q, want %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

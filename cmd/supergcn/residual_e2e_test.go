package main

import (
	"fmt"
	"testing"

	"github.com/supergcn/supergcn/internal/testdataset"
)

// mpirun -np P supergcn train --residual (3 layers: the first with its
// projection, the second an identity; batch normalisation) equals the
// single-process run.
func TestMPIResidualEqualsSingle(t *testing.T) {
	coraDir := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	common := []string{"--data", coraDir, "--feat-norm", "row", "--model", "gcn", "--layers", "3", "--hidden", "16",
		"--residual", "--norm", "batch", "--dropout", "0", "--epochs", "10", "--seed", "5", "--bits", "32", "--threads", "1", "--quiet"}
	ref := trainLosses(t, dir, nil, "ref", common...)
	for _, np := range []int{2, 4} {
		name := fmt.Sprintf("residual-np%d", np)
		got := trainLosses(t, dir, mpirun(t, np), name, append([]string{"--partition-method", "metis"}, common...)...)
		sameLosses(t, name, ref, got)
	}
}

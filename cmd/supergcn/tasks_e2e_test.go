package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// genTaskData writes a generated 3000-node graph and a target table of
// the task (gen --targets) into dir.
func genTaskData(t *testing.T, dir, kind string) (data, targets string) {
	t.Helper()
	data, targets = filepath.Join(dir, kind+".sgb"), filepath.Join(dir, kind+".npy")
	r := run(t, 2*time.Minute, nil, "gen", "--spec", "nodes=3000,degree=10,classes=8,feat=32,seed=1,train=0.5,valid=0.25,test=0.25",
		"--out", data, "--targets", targets, "--target-task", kind, "--target-tasks", "24")
	if r.code != 0 {
		t.Fatalf("gen: exit %d\n%s", r.code, r.stderr)
	}
	return data, targets
}

// mpirun -np P supergcn train --task multilabel|regression equals the
// single-process run (every epoch's loss within 1e-4), P = 2, 3, 4.
func TestMPITasksEqualSingle(t *testing.T) {
	dir := t.TempDir()
	for _, kind := range []string{"multilabel", "regression"} {
		data, targets := genTaskData(t, dir, kind)
		args := []string{"--data", data, "--task", kind, "--targets", targets, "--dropout", "0", "--epochs", "20", "--bits", "32",
			"--threads", "1", "--quiet", "--eval-every", "5"}
		ref := trainLosses(t, dir, nil, kind+"-ref", args...)
		for _, np := range []int{2, 3, 4} {
			name := fmt.Sprintf("%s-np%d", kind, np)
			sameLosses(t, name, ref, trainLosses(t, dir, mpirun(t, np), name, append(args, "--partition-method", "random")...))
		}
	}
}

// Bad targets and task flags: one line on stderr naming the file and the
// entry, or the flag; non-zero exit, nothing trained.
func TestCLITaskErrors(t *testing.T) {
	dir := t.TempDir()
	data, targets := genTaskData(t, dir, "multilabel")
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("0,1\n1,0.5\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--task", "multilabel"}, "--task multilabel: give --targets FILE"},
		{[]string{"--task", "ranking"}, `--task: "ranking" is not one of node, multilabel, regression`},
		{[]string{"--targets", targets}, "--targets: task node trains on the dataset's labels"},
		{[]string{"--task", "multilabel", "--targets", bad}, bad + ": node 1, target 1 is 0.5: want 0, 1 or NaN"},
		{[]string{"--task", "multilabel", "--targets", filepath.Join(dir, "missing.npy")}, "--targets: "},
		{[]string{"--task", "multilabel", "--targets", targets, "--label-prop", "0.5"}, "--label-prop"},
	} {
		r := run(t, 2*time.Minute, nil, append([]string{"train", "--data", data, "--epochs", "2", "--quiet"}, c.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("train %v: exit %d, stderr %q, want one line with %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

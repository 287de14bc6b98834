package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/supergcn/supergcn/internal/testdataset"
)

// A task that srun started as one of several without PMI refuses to train
// (it would race the others on the same files), before reading any data.
func TestPMIMismatchRefused(t *testing.T) {
	r := runWith(t, time.Minute, []string{"SLURM_STEP_NUM_TASKS=2", "SLURM_PROCID=1"}, nil, nil,
		"train", "--synthetic", "nodes=500,degree=4,classes=2,feat=8", "--epochs", "2")
	if r.code == 0 || !strings.Contains(r.stderr, "srun --mpi=pmix") || strings.Contains(r.stdout, "epoch") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("srun task without PMI: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}

// SIGTERM (one process) and SIGUSR1 to mpirun (two ranks) finish the epoch,
// write the checkpoint and exit 75; resuming it ends with the uninterrupted
// run's losses. Resuming the checkpoint on other data is refused.
func TestSignalStopsWithCheckpoint(t *testing.T) {
	coraDir := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	common := []string{"train", "--data", coraDir, "--feat-norm", "row", "--epochs", "60", "--seed", "3", "--bits", "32", "--threads", "1", "--quiet"}
	for _, c := range []struct {
		name     string
		sig      syscall.Signal
		launcher []string
	}{{"SIGTERM", syscall.SIGTERM, nil}, {"SIGUSR1-mpirun", syscall.SIGUSR1, []string{"mpirun"}}} {
		t.Run(c.name, func(t *testing.T) {
			launcher := c.launcher
			if launcher != nil {
				launcher = mpirun(t, 2)
			}
			ref := filepath.Join(dir, c.name+"-ref.jsonl")
			if r := run(t, 5*time.Minute, launcher, append(common, "--metrics", ref)...); r.code != 0 {
				t.Fatalf("uninterrupted run: exit %d\n%s", r.code, r.stderr)
			}
			refLosses := losses(t, ref)
			ckpt, metrics := filepath.Join(dir, c.name+".ckpt"), filepath.Join(dir, c.name+".jsonl")
			args := append(append([]string{}, common...), "--save", ckpt, "--metrics", metrics)
			// Sent once every rank can catch it (mpirun forwards SIGUSR1 only
			// to the ranks it has started), it stops the run after its first
			// epoch, whenever it lands.
			ranks := 1
			if launcher != nil {
				ranks = 2
			}
			signalAfterEpochs := signalWhenRanksCatch(c.sig, ranks)
			r := runWith(t, 5*time.Minute, nil, signalAfterEpochs, launcher, args...)
			if r.code != exitStopped || !strings.Contains(r.stderr, "checkpoint "+ckpt) {
				t.Fatalf("after %v: exit %d, want %d\n%s", c.sig, r.code, exitStopped, r.stderr)
			}
			stopped := len(losses(t, metrics))
			if stopped >= 60 {
				t.Fatalf("the run was not stopped early (%d epochs)", stopped)
			}
			r = run(t, 5*time.Minute, launcher, append(args, "--resume", ckpt)...)
			if r.code != 0 {
				t.Fatalf("resume: exit %d\n%s", r.code, r.stderr)
			}
			sameLosses(t, c.name+" stop and resume", refLosses, losses(t, metrics))
			t.Logf("stopped after epoch %d, resumed to the uninterrupted run's losses", stopped)

			// The same checkpoint with other data: refused, nothing trained.
			r = run(t, time.Minute, nil, "train", "--synthetic", "nodes=300,degree=4,classes=7,feat=16", "--epochs", "60", "--resume", ckpt)
			if r.code != 1 || !strings.Contains(r.stderr, "other data") || strings.Contains(r.stdout, "epoch ") {
				t.Fatalf("resume on other data: exit %d\n%s", r.code, r.stderr)
			}
		})
	}
}

// info --json is one JSON object with the build, CPU, BLAS, partitioner and
// MPI facts filled in; --version prints the version and commit.
func TestInfoJSONAndVersion(t *testing.T) {
	r := run(t, time.Minute, nil, "info", "--json")
	if r.code != 0 {
		t.Fatalf("info --json: exit %d\n%s", r.code, r.stderr)
	}
	var bi buildInfo
	if err := json.Unmarshal([]byte(r.stdout), &bi); err != nil {
		t.Fatalf("info --json is not one JSON object: %v\n%s", err, r.stdout)
	}
	for k, v := range map[string]string{"cpu_model": bi.CPUModel, "aggr_kernel": bi.AggrKernel, "blas": bi.BLAS,
		"metis": bi.METIS, "parmetis": bi.ParMETIS, "mpi": bi.MPI, "mpi_thread_level": bi.MPIThread, "version": bi.Version, "commit": bi.Commit} {
		if v == "" {
			t.Errorf("info --json: %s is empty", k)
		}
	}
	if !strings.HasPrefix(bi.MPIThread, "MPI_THREAD_") {
		t.Errorf("info --json: MPI thread level %q", bi.MPIThread)
	}
	r = run(t, time.Minute, nil, "--version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "supergcn ") || !strings.Contains(r.stdout, "commit ") {
		t.Fatalf("--version: exit %d, %q", r.code, r.stdout)
	}
}

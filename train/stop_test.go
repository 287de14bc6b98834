package train

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/partition"
)

// runGroup trains on p in-process ranks (random partition) and returns
// every rank's result and error.
func runGroup(t *testing.T, ds *graph.Dataset, p int, cfg func(rank int) Config) ([]*Result, []error) {
	t.Helper()
	owner := partition.Random(ds.NumNodes(), p, 7)
	results, errs := make([]*Result, p), make([]error, p)
	if err := comm.RunGroup(p, func(c comm.Comm) error {
		results[c.Rank()], errs[c.Rank()] = Run(cfg(c.Rank()), partition.Split(ds, owner, c.Rank(), p), c)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return results, errs
}

// A stop requested on one rank only (as a signal delivered to one process)
// stops every rank after the same epoch with a StoppedError and a
// checkpoint; resuming it ends with the uninterrupted run's loss and model.
func TestStopSavesAndResumesExactly(t *testing.T) {
	ds := cora(t)
	dir := t.TempDir()
	base := kipfConfig("gcn", 3, 12, 0.5)
	ref := distributed(t, ds, partition.Random(ds.NumNodes(), 2, 7), 2, base)

	ckpt := filepath.Join(dir, "job.ckpt")
	var asked atomic.Int32
	results, errs := runGroup(t, ds, 2, func(rank int) Config {
		c := base
		c.SavePath = ckpt
		if rank == 1 {
			c.Stop = func() bool { return asked.Add(1) >= 5 } // from epoch 5 on
		}
		return c
	})
	for r, err := range errs {
		var se *StoppedError
		if !errors.As(err, &se) || se.Epoch != 5 || se.Epochs != 12 || se.Saved != ckpt {
			t.Fatalf("rank %d: err = %v, want a stop after epoch 5 with checkpoint %s", r, err, ckpt)
		}
		if len(results[r].Epochs) != 5 {
			t.Fatalf("rank %d trained %d epochs before stopping, want 5", r, len(results[r].Epochs))
		}
	}
	ck, err := LoadCheckpoint(ckpt)
	if err != nil || ck.Train.Epoch != 5 {
		t.Fatalf("checkpoint after the stop: %v, %+v", err, ck)
	}
	c := base
	c.ResumePath = ckpt
	got := distributed(t, ds, partition.Random(ds.NumNodes(), 2, 7), 2, c)
	a, b := ref.Epochs[len(ref.Epochs)-1], got.Epochs[len(got.Epochs)-1]
	if a.Epoch != 12 || b.Epoch != 12 || a.Loss != b.Loss || a.ValAcc != b.ValAcc {
		t.Fatalf("last epoch after stop+resume: %+v; uninterrupted: %+v", b, a)
	}

	// Without a checkpoint file the stop still happens, and says so.
	_, errs = runGroup(t, ds, 1, func(int) Config {
		c := base
		c.Stop = func() bool { return true }
		return c
	})
	var se *StoppedError
	if !errors.As(errs[0], &se) || se.Epoch != 1 || se.Saved != "" {
		t.Fatalf("stop without --save: %v", errs[0])
	}
}

// The data identity does not depend on the partitioning, and changes with
// any feature, label, split bit or edge.
func TestDataIdentity(t *testing.T) {
	ds := cora(t)
	id := func(d *graph.Dataset, p int) string {
		owner := partition.Random(d.NumNodes(), p, 3)
		ids := make([]string, p)
		if err := comm.RunGroup(p, func(c comm.Comm) error {
			var err error
			ids[c.Rank()], err = DataIdentity(partition.Split(d, owner, c.Rank(), p), c)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		for r := range ids {
			if ids[r] != ids[0] {
				t.Fatalf("P=%d: rank %d has identity %s, rank 0 %s", p, r, ids[r], ids[0])
			}
		}
		return ids[0]
	}
	one := id(ds, 1)
	if three := id(ds, 3); three != one {
		t.Fatalf("identity on 3 ranks %s, on one %s", three, one)
	}
	mod := *ds
	mod.Features = graph.DenseX(append([]float32(nil), graph.DenseData(ds.Features)...), ds.NumNodes(), ds.FeatDim)
	graph.DenseData(mod.Features)[12345] += 0.5
	if id(&mod, 2) == one {
		t.Fatal("a changed feature keeps the identity")
	}
	mod = *ds
	mod.Labels = append([]int32(nil), ds.Labels...)
	mod.Labels[7] = (mod.Labels[7] + 1) % int32(ds.NumClasses)
	if id(&mod, 1) == one {
		t.Fatal("a changed label keeps the identity")
	}
	mod = *ds
	g := *ds.Graph
	g.Idx = append([]int32(nil), ds.Graph.Idx...)
	g.Idx[0] = (g.Idx[0] + 1) % int32(ds.NumNodes())
	mod.Graph = &g
	if id(&mod, 2) == one {
		t.Fatal("a changed edge keeps the identity")
	}
}

// A checkpoint refuses to resume on other data: the failure of a second run
// submitted from the same directory silently picking up the first's
// checkpoint.
// The checkpoint is written on 2 ranks and resumed on one: the identity
// does not depend on the rank count.
func TestResumeRefusesOtherData(t *testing.T) {
	ds := cora(t)
	saved := kipfConfig("gcn", 6, 3, 0.5)
	saved.SavePath = filepath.Join(t.TempDir(), "two-ranks.ckpt")
	distributed(t, ds, partition.Random(ds.NumNodes(), 2, 1), 2, saved)
	cfg := saved
	other := *ds
	other.Features = graph.DenseX(append([]float32(nil), graph.DenseData(ds.Features)...), ds.NumNodes(), ds.FeatDim)
	for i := range graph.DenseData(other.Features)[:ds.FeatDim] {
		graph.DenseData(other.Features)[i] = 1 - graph.DenseData(other.Features)[i]
	}
	c := kipfConfig("gcn", 6, 6, 0.5)
	c.ResumePath = cfg.SavePath
	_, err := Run(c, partition.Split(&other, make([]int32, ds.NumNodes()), 0, 1), comm.Single())
	var dm *DataMismatchError
	if !errors.As(err, &dm) || dm.Path != cfg.SavePath {
		t.Fatalf("resume on other data: err = %v", err)
	}
	// The same data on one rank resumes.
	single(t, ds, c)
}

// The metrics file starts with the header record, and every epoch record
// has per-rank min ≤ max for each breakdown time, the max being the field.
func TestMetricsHeaderAndRankSpread(t *testing.T) {
	ds := cora(t)
	path := filepath.Join(t.TempDir(), "m.jsonl")
	cfg := kipfConfig("gcn", 2, 3, 0.5)
	cfg.MetricsPath = path
	cfg.Header = &RunHeader{Version: "v-test", Commit: "abc", Command: []string{"supergcn", "train"}, Dataset: "cora"}
	distributed(t, ds, partition.Random(ds.NumNodes(), 2, 7), 2, cfg)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var lines [][]byte
	for sc.Scan() {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
	}
	if len(lines) != 5 {
		t.Fatalf("%d records, want header + 3 epochs + final", len(lines))
	}
	var h RunHeader
	if err := json.Unmarshal(lines[0], &h); err != nil || !h.Header || h.Version != "v-test" || h.Ranks != 2 ||
		len(h.DataID) != 16 || len(h.Hosts) != 1 || h.Hosts[0] == "" || h.Start == "" || h.Dataset != "cora" {
		t.Fatalf("header record %s (%v)", lines[0], err)
	}
	for _, l := range lines[1:4] {
		var m EpochMetrics
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"epoch_s", "aggr_s", "comm_s", "dense_s", "sync_s", "other_s"} {
			lo, ok1 := m.RankMin[k]
			hi, ok2 := m.RankMax[k]
			if !ok1 || !ok2 || lo > hi {
				t.Fatalf("epoch %d: %s min %v max %v", m.Epoch, k, m.RankMin, m.RankMax)
			}
		}
		if m.RankMax["epoch_s"] != m.EpochS || m.RankMax["aggr_s"] != m.AggrS {
			t.Fatalf("epoch %d: rank max %v, fields epoch %g aggr %g", m.Epoch, m.RankMax, m.EpochS, m.AggrS)
		}
	}
}

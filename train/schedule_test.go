package train

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/supergcn/supergcn/internal/testdataset"
	"math"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/partition"
)

// TestPatienceStopsEarly: with Patience 5 a 200-epoch Cora run stops five
// evaluations after its best validation epoch, says so in the final
// record, the metrics file and the summary line, and saves that epoch;
// resuming the checkpoint trains nothing more. At P=2 every rank stops
// after the same epoch.
func TestPatienceStopsEarly(t *testing.T) {
	ds := cora(t)
	dir := t.TempDir()
	cfg := kipfConfig("gcn", 2, 200, 0.5)
	cfg.Patience = 5
	cfg.MetricsPath, cfg.SavePath = filepath.Join(dir, "m.jsonl"), filepath.Join(dir, "m.ckpt")
	var log bytes.Buffer
	cfg.Log = &log
	res := single(t, ds, cfg)
	f, e := res.Final, len(res.Epochs)
	if e >= 200 || f.StoppedEarly != e || f.Epochs != e || f.Patience != 5 || f.BestEpoch != e-5 {
		t.Fatalf("trained %d epochs, final %+v; want a stop 5 epochs after the best", e, f)
	}
	for _, m := range res.Epochs[f.BestEpoch:] {
		if m.ValAcc > f.BestValAcc {
			t.Fatalf("epoch %d: val %.4f above the best %.4f, yet training stopped", m.Epoch, m.ValAcc, f.BestValAcc)
		}
	}
	if want := fmt.Sprintf("stopped early at epoch %d (patience 5)", e); !strings.Contains(log.String(), want) {
		t.Fatalf("summary line without %q:\n%s", want, log.String()[max(log.Len()-400, 0):])
	}
	recs, final := testdataset.MetricsRecords(t, cfg.MetricsPath)
	if len(recs) != e || final["stopped_early"] != float64(e) || final["patience"] != float64(5) {
		t.Fatalf("metrics file: %d epoch records, final %v", len(recs), final)
	}
	if ck, err := LoadCheckpoint(cfg.SavePath); err != nil || ck.Train.Epoch != e || ck.Train.LoopState.StoppedEarly != e {
		t.Fatalf("checkpoint: %v, %+v", err, ck)
	}
	c := cfg
	c.ResumePath, c.SavePath, c.MetricsPath, c.Log = cfg.SavePath, "", "", nil
	if again := single(t, ds, c); len(again.Epochs) != 0 || again.Final.StoppedEarly != e || again.Final.BestEpoch != f.BestEpoch {
		t.Fatalf("resuming the stopped run: %d epochs, final %+v", len(again.Epochs), again.Final)
	}

	results, errs := runGroup(t, ds, 2, func(int) Config {
		c := kipfConfig("gcn", 2, 200, 0.5)
		c.Patience = 5
		return c
	})
	for r, err := range errs {
		if err != nil || results[r].Final.StoppedEarly == 0 || results[r].Final.StoppedEarly != results[0].Final.StoppedEarly {
			t.Fatalf("P=2 rank %d: %v, final %+v (rank 0: %+v)", r, err, results[r].Final, results[0].Final)
		}
	}
}

// TestLRScheduleFormulas: the lr of every epoch, in the results and the
// metrics file, is the step and cosine schedules' formula.
func TestLRScheduleFormulas(t *testing.T) {
	ds := cora(t)
	const epochs, lr0, lrMin = 13, 0.02, 0.001
	for _, tc := range []struct {
		schedule string
		want     func(e int) float64
	}{
		{ScheduleNone, func(int) float64 { return lr0 }},
		{ScheduleStep, func(e int) float64 { return lr0 * math.Pow(0.5, float64((e-1)/4)) }},
		{ScheduleCosine, func(e int) float64 {
			return lrMin + (lr0-lrMin)*(1+math.Cos(math.Pi*float64(e-1)/epochs))/2
		}},
	} {
		t.Run(tc.schedule, func(t *testing.T) {
			cfg := kipfConfig("gcn", 1, epochs, 0.5)
			cfg.LR, cfg.LRSchedule, cfg.LRStepSize, cfg.LRGamma, cfg.LRMin = lr0, tc.schedule, 4, 0.5, lrMin
			cfg.MetricsPath = filepath.Join(t.TempDir(), "m.jsonl")
			res := single(t, ds, cfg)
			recs, _ := testdataset.MetricsRecords(t, cfg.MetricsPath)
			if len(res.Epochs) != epochs || len(recs) != epochs {
				t.Fatalf("%d epochs, %d records", len(res.Epochs), len(recs))
			}
			for i, m := range res.Epochs {
				want := tc.want(m.Epoch)
				if math.Abs(m.LR-want) > 1e-12*want || recs[i]["lr"] != m.LR {
					t.Fatalf("epoch %d: lr %v (metrics file %v), want %v", m.Epoch, m.LR, recs[i]["lr"], want)
				}
			}
			if tc.schedule == ScheduleStep && res.Epochs[12].LR != lr0/8 {
				t.Fatalf("step: epoch 13 lr %v, want %v", res.Epochs[12].LR, lr0/8)
			}
		})
	}
}

// TestLRPlateau: the plateau schedule multiplies the learning rate by
// LRGamma after LRPlateauPatience+1 evaluations without a validation loss
// below the best by 1e-4 (relative), as ReduceLROnPlateau, and never goes
// below LRMin; the run is one that reduces it several times.
func TestLRPlateau(t *testing.T) {
	ds := cora(t)
	cfg := kipfConfig("gcn", 1, 60, 0.5)
	cfg.LR, cfg.LRSchedule, cfg.LRGamma, cfg.LRPlateauPatience, cfg.LRMin = 0.1, SchedulePlateau, 0.5, 1, 0.01
	res := single(t, ds, cfg)
	lr, best, bad, reductions := cfg.LR, math.Inf(1), 0, 0
	for _, m := range res.Epochs {
		if m.LR != lr {
			t.Fatalf("epoch %d: lr %v, want %v", m.Epoch, m.LR, lr)
		}
		if m.ValLoss < best*(1-1e-4) {
			best, bad = m.ValLoss, 0
		} else if bad++; bad > cfg.LRPlateauPatience {
			if next := math.Max(lr*cfg.LRGamma, cfg.LRMin); lr-next > 1e-8 {
				lr = next
				reductions++
			}
			bad = 0
		}
	}
	if reductions < 2 || lr != cfg.LRMin {
		t.Fatalf("%d reductions, last lr %v: the run does not exercise the schedule down to LRMin", reductions, lr)
	}
}

// TestValTestLoss: every evaluated record carries val_loss and test_loss
// (positive, in the metrics file too), the others neither; at P=2 they are
// the single process's (dropout 0: the same model up to float sums).
func TestValTestLoss(t *testing.T) {
	ds := cora(t)
	cfg := kipfConfig("gcn", 4, 8, 0)
	cfg.EvalEvery = 3
	cfg.MetricsPath = filepath.Join(t.TempDir(), "m.jsonl")
	ref := single(t, ds, cfg)
	recs, _ := testdataset.MetricsRecords(t, cfg.MetricsPath)
	for i, m := range ref.Epochs {
		_, hasVal := recs[i]["val_loss"]
		_, hasTest := recs[i]["test_loss"]
		if m.Evaluated != (m.Epoch%3 == 0 || m.Epoch == 8) || hasVal != m.Evaluated || hasTest != m.Evaluated {
			t.Fatalf("epoch %d: evaluated %v, val_loss %v, test_loss %v in the record", m.Epoch, m.Evaluated, hasVal, hasTest)
		}
		if m.Evaluated && !(m.ValLoss > 0 && m.TestLoss > 0 && recs[i]["val_loss"] == m.ValLoss) {
			t.Fatalf("epoch %d: val_loss %v (record %v), test_loss %v", m.Epoch, m.ValLoss, recs[i]["val_loss"], m.TestLoss)
		}
	}
	c := cfg
	c.MetricsPath = ""
	got := distributed(t, ds, partition.Random(ds.NumNodes(), 2, 7), 2, c)
	for i, m := range got.Epochs {
		r := ref.Epochs[i]
		if math.Abs(m.ValLoss-r.ValLoss) > 1e-4*r.ValLoss || math.Abs(m.TestLoss-r.TestLoss) > 1e-4*r.TestLoss {
			t.Fatalf("epoch %d at P=2: val_loss %v test_loss %v; one process %v %v", m.Epoch, m.ValLoss, m.TestLoss, r.ValLoss, r.TestLoss)
		}
	}
}

// TestResumeWithSchedule: a run stopped after epoch 19 (a signal) and
// resumed from its checkpoint continues as the uninterrupted run, with
// each schedule and early stopping: the same lr, losses and validation
// losses every epoch, the same final record and training state. The cut
// comes where the state matters: epochs without a better validation
// accuracy counted, the plateau schedule's rate reduced.
func TestResumeWithSchedule(t *testing.T) {
	ds := cora(t)
	const cut = 19
	for _, schedule := range []string{ScheduleStep, ScheduleCosine, SchedulePlateau} {
		t.Run(schedule, func(t *testing.T) {
			cfg := kipfConfig("gcn", 3, 30, 0.5)
			cfg.LR, cfg.LRSchedule, cfg.LRStepSize, cfg.LRGamma, cfg.LRMin, cfg.LRPlateauPatience = 0.2, schedule, 5, 0.5, 0.001, 1
			cfg.Patience = 12
			dir := t.TempDir()
			cfg.SavePath = filepath.Join(dir, "ref.ckpt")
			ref := single(t, ds, cfg)

			c := cfg
			c.SavePath = filepath.Join(dir, "job.ckpt")
			var asked atomic.Int32
			c.Stop = func() bool { return asked.Add(1) >= cut }
			var se *StoppedError
			if _, err := Run(c, partition.Split(ds, make([]int32, ds.NumNodes()), 0, 1), comm.Single()); !errors.As(err, &se) || se.Epoch != cut {
				t.Fatalf("stop after epoch %d: %v", cut, err)
			}
			ck, err := LoadCheckpoint(c.SavePath)
			if err != nil {
				t.Fatal(err)
			}
			if s := ck.Train.LoopState; s.PatienceBad == 0 || (schedule == SchedulePlateau && !(s.LR < cfg.LR)) {
				t.Fatalf("state at the cut %+v: nothing for the resumed run to restore", s)
			}
			c.Stop, c.ResumePath = nil, c.SavePath
			got := single(t, ds, c)
			if len(got.Epochs) != len(ref.Epochs)-cut {
				t.Fatalf("resumed run trained %d epochs, uninterrupted %d in all", len(got.Epochs), len(ref.Epochs))
			}
			for i, m := range got.Epochs {
				r := ref.Epochs[cut+i]
				if m.Epoch != r.Epoch || m.LR != r.LR || m.Loss != r.Loss || m.ValLoss != r.ValLoss {
					t.Fatalf("epoch %d after resume: lr %v loss %v val_loss %v; uninterrupted: lr %v loss %v val_loss %v",
						m.Epoch, m.LR, m.Loss, m.ValLoss, r.LR, r.Loss, r.ValLoss)
				}
			}
			a, b := ref.Final, got.Final
			a.TotalS, b.TotalS, a.PlanS, b.PlanS = 0, 0, 0, 0
			if a != b {
				t.Fatalf("final after resume %+v, uninterrupted %+v", b, a)
			}
			refCk, err1 := LoadCheckpoint(cfg.SavePath)
			gotCk, err2 := LoadCheckpoint(c.SavePath)
			if err1 != nil || err2 != nil || *refCk.Train != *gotCk.Train {
				t.Fatalf("final training state after resume %+v, uninterrupted %+v (%v, %v)", gotCk.Train, refCk.Train, err2, err1)
			}
		})
	}
}

// TestResumeRefusesOtherSchedule: a resumed run must keep the
// checkpoint's schedule and early-stopping settings, and under the cosine
// schedule its length.
func TestResumeRefusesOtherSchedule(t *testing.T) {
	ds := cora(t)
	cfg := kipfConfig("gcn", 3, 6, 0.5)
	cfg.LRSchedule, cfg.LRMin, cfg.Patience = ScheduleCosine, 0.001, 4
	cfg.SavePath = filepath.Join(t.TempDir(), "c.ckpt")
	single(t, ds, cfg)
	for _, d := range []struct {
		edit func(c *Config)
		want string
	}{
		{func(c *Config) { c.LRSchedule, c.LRStepSize, c.LRGamma = ScheduleStep, 2, 0.5 }, "train.Config.LRSchedule cosine, this run step"},
		{func(c *Config) { c.LRMin = 0.002 }, "train.Config.LRMin 0.001, this run 0.002"},
		{func(c *Config) { c.Patience = 0 }, "train.Config.Patience 4, this run 0"},
		{func(c *Config) { c.Epochs = 9 }, "train.Config.Epochs (the cosine schedule's length) 6, this run 9"},
	} {
		c := cfg
		d.edit(&c)
		c.ResumePath, c.SavePath = cfg.SavePath, ""
		_, err := Run(c, partition.Split(ds, make([]int32, ds.NumNodes()), 0, 1), comm.Single())
		if err == nil || !strings.Contains(err.Error(), d.want) {
			t.Fatalf("resume with other settings: err = %v, want %q", err, d.want)
		}
	}
}

// TestStopOnValLoss: with StopOn val-loss the best epoch is the one of the
// lowest validation loss (its test accuracy reported), Patience counts
// evaluations since it, a run resumed from an epoch before the stop ends
// exactly as the uninterrupted one, and a resume with the other criterion
// is refused.
func TestStopOnValLoss(t *testing.T) {
	ds := cora(t)
	dir := t.TempDir()
	cfg := kipfConfig("gcn", 2, 300, 0.5)
	cfg.Patience, cfg.StopOn = 10, StopValLoss
	cfg.SavePath = filepath.Join(dir, "ref.ckpt")
	ref := single(t, ds, cfg)
	f, e := ref.Final, len(ref.Epochs)
	low := 0
	for i, m := range ref.Epochs {
		if m.ValLoss < ref.Epochs[low].ValLoss {
			low = i
		}
	}
	if b := ref.Epochs[low]; f.BestEpoch != b.Epoch || f.TestAcc != b.TestAcc || f.BestValAcc != b.ValAcc || f.BestValLoss != b.ValLoss {
		t.Fatalf("final %+v; the lowest validation loss is epoch %+v", f, b)
	}
	if e >= 300 || f.StoppedEarly != e || e != f.BestEpoch+10 {
		t.Fatalf("trained %d epochs, final %+v: want a stop 10 epochs after the lowest validation loss", e, f)
	}

	cut := e - 5
	c := cfg
	c.SavePath = filepath.Join(dir, "job.ckpt")
	var asked atomic.Int32
	c.Stop = func() bool { return asked.Add(1) >= int32(cut) }
	var se *StoppedError
	if _, err := Run(c, partition.Split(ds, make([]int32, ds.NumNodes()), 0, 1), comm.Single()); !errors.As(err, &se) || se.Epoch != cut {
		t.Fatalf("stop after epoch %d: %v", cut, err)
	}
	c.Stop, c.ResumePath = nil, c.SavePath
	got := single(t, ds, c)
	a, b := ref.Final, got.Final
	a.TotalS, b.TotalS, a.PlanS, b.PlanS = 0, 0, 0, 0
	if len(got.Epochs) != e-cut || a != b {
		t.Fatalf("resumed at %d: %d epochs, final %+v; uninterrupted %+v", cut, len(got.Epochs), b, a)
	}

	c.StopOn, c.SavePath = StopValAcc, ""
	_, err := Run(c, partition.Split(ds, make([]int32, ds.NumNodes()), 0, 1), comm.Single())
	if want := "train.Config.StopOn val-loss, this run val-acc"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("resume with the other criterion: err = %v, want %q", err, want)
	}
}

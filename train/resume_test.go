package train

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/quant"
)

// trainTwice runs cfg for 20 epochs straight and, separately, for 12 epochs
// with --save-every 4 and then resumed from that checkpoint to 20, with
// every rank's results; it returns the straight run, the resumed run (both
// rank 0) and the two final checkpoints.
func trainTwice(t *testing.T, ds *graph.Dataset, p int, cfg Config) (ref, got *Result, refCk, gotCk *Checkpoint) {
	t.Helper()
	dir := t.TempDir()
	runP := func(c Config) *Result {
		if p == 1 {
			return single(t, ds, c)
		}
		return distributed(t, ds, partition.Random(ds.NumNodes(), p, 7), p, c)
	}
	load := func(path string) *Checkpoint {
		ck, err := LoadCheckpoint(path)
		if err != nil {
			t.Fatal(err)
		}
		return ck
	}

	c := cfg
	c.Epochs = 20
	c.SavePath = filepath.Join(dir, "straight.ckpt")
	ref = runP(c)
	refCk = load(c.SavePath)

	// The first job is cut at epoch 12 (as a walltime kill after the
	// checkpoint of epoch 12 would leave it); the second resumes.
	ckpt := filepath.Join(dir, "job.ckpt")
	metrics := filepath.Join(dir, "job.jsonl")
	c = cfg
	c.Epochs, c.SavePath, c.SaveEvery, c.MetricsPath = 12, ckpt, 4, metrics
	first := runP(c)
	if ck := load(ckpt); ck.Train == nil || ck.Train.Epoch != 12 || ck.Train.AdamSteps != 12 {
		t.Fatalf("checkpoint after 12 epochs: training state %+v", ck.Train)
	}
	for e := range first.Epochs {
		if first.Epochs[e].Loss != ref.Epochs[e].Loss {
			t.Fatalf("epoch %d before the cut: loss %.8f, straight run %.8f", e+1, first.Epochs[e].Loss, ref.Epochs[e].Loss)
		}
	}
	// Resuming at --epochs trains nothing and restores the bookkeeping: the
	// final record is the first job's.
	c = cfg
	c.Epochs, c.ResumePath = 12, ckpt
	if again := runP(c); len(again.Epochs) != 0 || again.Final.BestValAcc != first.Final.BestValAcc ||
		again.Final.BestEpoch != first.Final.BestEpoch || again.Final.TestAcc != first.Final.TestAcc || again.Final.LastTest != first.Final.LastTest {
		t.Fatalf("resume at the last epoch: %d epochs, final %+v; first job's final %+v", len(again.Epochs), again.Final, first.Final)
	}
	c = cfg
	c.Epochs, c.SavePath, c.SaveEvery, c.MetricsPath, c.ResumePath = 20, ckpt, 4, metrics, ckpt
	got = runP(c)
	gotCk = load(ckpt)

	// The metrics file holds both jobs: epochs 1–12, a final record, 13–20,
	// a final record.
	f, err := os.Open(metrics)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var epochs []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m struct {
			Final bool `json:"final"`
			Epoch int  `json:"epoch"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if m.Final {
			epochs = append(epochs, -1)
		} else {
			epochs = append(epochs, m.Epoch)
		}
	}
	if len(epochs) != 22 || epochs[11] != 12 || epochs[12] != -1 || epochs[13] != 13 || epochs[21] != -1 {
		t.Fatalf("metrics file after resume: epochs %v", epochs)
	}
	return ref, got, refCk, gotCk
}

func checkResumed(t *testing.T, ref, got *Result, refCk, gotCk *Checkpoint) {
	t.Helper()
	if len(got.Epochs) != 8 || got.Epochs[0].Epoch != 13 {
		t.Fatalf("resumed run trained %d epochs starting at %d, want 13–20", len(got.Epochs), got.Epochs[0].Epoch)
	}
	for i, m := range got.Epochs {
		r := ref.Epochs[12+i]
		if math.Abs(m.Loss-r.Loss) > 1e-5*math.Abs(r.Loss) || m.ValAcc != r.ValAcc || m.TestAcc != r.TestAcc {
			t.Fatalf("epoch %d after resume: loss %.8f val %.4f test %.4f; uninterrupted: loss %.8f val %.4f test %.4f",
				m.Epoch, m.Loss, m.ValAcc, m.TestAcc, r.Loss, r.ValAcc, r.TestAcc)
		}
	}
	a, b := ref.Final, got.Final
	if a.BestValAcc != b.BestValAcc || a.BestEpoch != b.BestEpoch || a.TestAcc != b.TestAcc || a.LastTest != b.LastTest || b.Epochs != 20 {
		t.Fatalf("final record after resume %+v, uninterrupted %+v", b, a)
	}
	if len(refCk.Params) != len(gotCk.Params) {
		t.Fatalf("%d vs %d saved parameters", len(gotCk.Params), len(refCk.Params))
	}
	for i, p := range refCk.Params {
		q := gotCk.Params[i]
		for j := range p.W {
			if math.Abs(float64(p.W[j]-q.W[j])) > 1e-5*math.Max(math.Abs(float64(p.W[j])), 1e-3) {
				t.Fatalf("final %s[%d]: %g after resume, %g uninterrupted", p.Name, j, q.W[j], p.W[j])
			}
		}
	}
	if *refCk.Train != *gotCk.Train {
		t.Fatalf("final training state after resume %+v, uninterrupted %+v", *gotCk.Train, *refCk.Train)
	}
}

// Resuming from a --save-every checkpoint continues exactly: with dropout
// 0.5 (and label propagation, whose embedding has its own Adam state) the
// losses of epochs 13–20 and the final parameters equal the uninterrupted
// run's, in one process and at P=2.
func TestResumeEqualsUninterrupted(t *testing.T) {
	ds := cora(t)
	for _, tc := range []struct {
		name      string
		p         int
		lp        float64
		precision string
	}{{"P1", 1, 0, ""}, {"P1/labelprop", 1, 0.5, ""}, {"P2", 2, 0, ""}, {"P2/bf16", 2, 0, "bf16"}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := kipfConfig("gcn", 5, 0, 0.5)
			cfg.LabelProp = tc.lp
			cfg.Model.Precision = tc.precision
			ref, got, refCk, gotCk := trainTwice(t, ds, tc.p, cfg)
			checkResumed(t, ref, got, refCk, gotCk)
		})
	}
}

// A checkpoint for another model is refused, naming the ResumePath field and the differing one;
// so is a version-1 checkpoint without optimizer state.
func TestResumeRefusesOtherModel(t *testing.T) {
	ds := cora(t)
	dir := t.TempDir()
	cfg := kipfConfig("gcn", 6, 3, 0.5)
	cfg.SavePath = filepath.Join(dir, "m.ckpt")
	single(t, ds, cfg)
	owner := make([]int32, ds.NumNodes())
	try := func(c Config) error {
		_, err := Run(c, partition.Split(ds, owner, 0, 1), comm.Single())
		return err
	}
	c := kipfConfig("gcn", 6, 6, 0.5)
	c.Model.Hidden = 32
	c.ResumePath = cfg.SavePath
	if err := try(c); err == nil || !strings.Contains(err.Error(), "train.Config.ResumePath: "+cfg.SavePath) || !strings.Contains(err.Error(), "nn.Config.Hidden 16, this run 32") {
		t.Fatalf("resume with another --hidden: err = %v", err)
	}
	c = kipfConfig("gcn", 6, 6, 0.5)
	c.LabelProp = 0.5
	c.ResumePath = cfg.SavePath
	if err := try(c); err == nil || !strings.Contains(err.Error(), "train.Config.LabelProp") {
		t.Fatalf("resume with another --label-prop: err = %v", err)
	}
	// Settings that change the continuation are refused too, naming both values.
	for _, d := range []struct {
		edit func(c *Config)
		want string
	}{
		{func(c *Config) { c.Model.Dropout = 0.3 }, "nn.Config.Dropout 0.5, this run 0.3"},
		{func(c *Config) { c.Model.Seed, c.Seed = 7, 7 }, "nn.Config.Seed 6, this run 7"},
		{func(c *Config) { c.FeatNorm = "row" }, "train.Config.FeatNorm none, this run row"},
		{func(c *Config) { c.LR = 0.05 }, "train.Config.LR 0.01, this run 0.05"},
		{func(c *Config) { c.Decoupled = true }, "train.Config.Decoupled false, this run true"},
	} {
		c = kipfConfig("gcn", 6, 6, 0.5)
		d.edit(&c)
		c.ResumePath = cfg.SavePath
		if err := try(c); err == nil || !strings.Contains(err.Error(), d.want) {
			t.Fatalf("resume with other settings: err = %v, want %q", err, d.want)
		}
	}
	c = kipfConfig("gcn", 6, 2, 0.5)
	c.ResumePath = cfg.SavePath
	if err := try(c); err == nil || !strings.Contains(err.Error(), "past train.Config.Epochs 2") {
		t.Fatalf("resume past --epochs: err = %v", err)
	}

	// Version 1 (no training state) still loads for eval, but is not resumed.
	ck, err := LoadCheckpoint(cfg.SavePath)
	if err != nil {
		t.Fatal(err)
	}
	v1 := filepath.Join(dir, "v1.ckpt")
	if err := writeV1(v1, ck); err != nil {
		t.Fatal(err)
	}
	old, err := LoadCheckpoint(v1)
	if err != nil {
		t.Fatalf("version-1 checkpoint: %v", err)
	}
	if old.Train != nil || len(old.Params) != len(ck.Params) || old.Params[0].W[7] != ck.Params[0].W[7] {
		t.Fatalf("version-1 checkpoint read back wrong: train %v, %d params", old.Train, len(old.Params))
	}
	if _, err := Evaluate(old, partition.Split(ds, owner, 0, 1), comm.Single(), 2, ""); err != nil {
		t.Fatalf("eval of a version-1 checkpoint: %v", err)
	}
	c = kipfConfig("gcn", 6, 6, 0.5)
	c.ResumePath = v1
	if err := try(c); err == nil || !strings.Contains(err.Error(), "no optimizer state") {
		t.Fatalf("resume from version 1: err = %v", err)
	}
}

// writeV1 writes ck in the version-1 layout (header without training state,
// parameters only), as builds before --resume did.
func writeV1(path string, ck *Checkpoint) error {
	plain := *ck
	plain.Train = nil
	plain.Params = nil
	for _, p := range ck.Params {
		plain.Params = append(plain.Params, SavedParam{Name: p.Name, W: p.W})
	}
	if err := SaveCheckpoint(path, &plain); err != nil {
		return err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	b = b[:len(b)-4]
	b[container.MagicSize] = 1 // version, little-endian uint32
	b = append(b, 0, 0, 0, 0)
	sum := container.Checksum(b[:len(b)-4])
	b[len(b)-4], b[len(b)-3], b[len(b)-2], b[len(b)-1] = byte(sum), byte(sum>>8), byte(sum>>16), byte(sum>>24)
	return os.WriteFile(path, b, 0o644)
}

// Resuming stays exact when the evaluation passes reuse the features'
// aggregate (a 16-wide first layer on 8 features): the resumed run computes
// it afresh at its first evaluation, exactly as the uninterrupted run did,
// also with an 8-bit evaluation exchange at P=2.
func TestResumeEqualsUninterruptedEvalAggregate(t *testing.T) {
	ds := narrowCora(t, 8)
	for _, tc := range []struct {
		name     string
		p        int
		evalBits int
	}{{"P1", 1, 0}, {"P2", 2, 0}, {"P2/eval8", 2, 8}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := kipfConfig("sage", 5, 0, 0.5)
			cfg.Model.Norm = "layer"
			cfg.Wire[quant.Eval] = quant.Wire{Bits: tc.evalBits}
			ref, got, refCk, gotCk := trainTwice(t, ds, tc.p, cfg)
			checkResumed(t, ref, got, refCk, gotCk)
		})
	}
}

// TestResumeEvalEveryFinalRecord: with EvalEvery 7, a run of k epochs
// (its last one evaluated off the grid) resumed to 14 ends with the final
// record of an uninterrupted 14-epoch run; resuming at k keeps the short
// run's own record.
func TestResumeEvalEveryFinalRecord(t *testing.T) {
	ds := cora(t)
	dir := t.TempDir()
	cfg := kipfConfig("gcn", 5, 14, 0.5)
	cfg.EvalEvery = 7
	ref := single(t, ds, cfg)
	for _, k := range []int{9, 13} {
		c := cfg
		c.Epochs, c.SavePath = k, filepath.Join(dir, fmt.Sprintf("k%d.ckpt", k))
		short := single(t, ds, c)
		c.ResumePath, c.SavePath = c.SavePath, ""
		if again := single(t, ds, c); again.Final.BestValAcc != short.Final.BestValAcc || again.Final.BestEpoch != short.Final.BestEpoch {
			t.Fatalf("k=%d resumed at its end: final %+v, the run's own %+v", k, again.Final, short.Final)
		}
		c.Epochs = 14
		got := single(t, ds, c)
		if got.Final.BestValAcc != ref.Final.BestValAcc || got.Final.BestEpoch != ref.Final.BestEpoch ||
			got.Final.TestAcc != ref.Final.TestAcc || got.Final.LastTest != ref.Final.LastTest {
			t.Errorf("k=%d resumed to 14: final %+v, uninterrupted %+v", k, got.Final, ref.Final)
		}
	}
}

// TestResumeRefusesOtherNodeOrder: the dropout masks follow the node order,
// so a checkpoint of one order cannot continue exactly under another.
func TestResumeRefusesOtherNodeOrder(t *testing.T) {
	ds := cora(t)
	cfg := kipfConfig("gcn", 5, 3, 0.5)
	cfg.NodeOrder, cfg.SavePath = partition.OrderCluster, filepath.Join(t.TempDir(), "c.ckpt")
	single(t, ds, cfg)
	cfg.NodeOrder, cfg.ResumePath, cfg.Epochs = partition.OrderGiven, cfg.SavePath, 6
	_, err := Run(cfg, partition.Split(ds, make([]int32, ds.NumNodes()), 0, 1), comm.Single())
	if err == nil || !strings.Contains(err.Error(), "train.Config.NodeOrder cluster, this run given") {
		t.Fatalf("resume with another node order: %v", err)
	}
}

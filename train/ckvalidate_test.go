package train

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/nn"

	"github.com/supergcn/supergcn/internal/container"
)

// smallCheckpoint is a valid two-layer GCN checkpoint with training state.
func smallCheckpoint() *Checkpoint {
	cfg := nn.Config{Model: "gcn", Layers: 2, In: 3, Hidden: 4, Out: 2, Dropout: 0.5, Norm: "none", Seed: 1}
	ck := &Checkpoint{Model: cfg, FeatNorm: "none",
		Train: &TrainState{Epoch: 5, AdamSteps: 5, DropoutStep: 5, BestValAcc: 0.5, BestEpoch: 4, BestTestAcc: 0.5, LastTestAcc: 0.4,
			Optim: Optim{LR: 0.01, WeightDecay: 5e-4}}}
	for _, p := range []struct {
		name string
		n    int
	}{{"conv0.lin.weight", 12}, {"conv0.bias", 4}, {"conv1.lin.weight", 8}, {"conv1.bias", 2}} {
		w := make([]float32, p.n)
		for i := range w {
			w[i] = float32(i) / 10
		}
		ck.Params = append(ck.Params, SavedParam{Name: p.name, W: w, M: make([]float32, p.n), V: make([]float32, p.n)})
	}
	return ck
}

// forge writes a version-2 file with the given JSON header and payload and
// a valid CRC, as a hostile user (or a buggy build) could.
func forge(t *testing.T, header []byte, payload []byte) string {
	t.Helper()
	var b bytes.Buffer
	b.Write(ckptFormat.Prefix())
	binary.Write(&b, binary.LittleEndian, uint32(len(header)))
	b.Write(header)
	b.Write(payload)
	binary.Write(&b, binary.LittleEndian, container.Checksum(b.Bytes()))
	path := filepath.Join(t.TempDir(), "forged.ckpt")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Checkpoints whose CRC is valid but whose fields are not are refused
// field by field, with an error naming the file, never a panic or a huge
// allocation.
func TestCheckpointForgedFields(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.ckpt")
	if err := SaveCheckpoint(good, smallCheckpoint()); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCheckpoint(good); err != nil {
		t.Fatalf("valid checkpoint: %v", err)
	}
	for _, c := range []struct {
		name string
		edit func(ck *Checkpoint)
		want string
	}{
		{"negative epoch", func(ck *Checkpoint) { ck.Train.Epoch = -5 }, "train.epoch -5"},
		{"dropout 5", func(ck *Checkpoint) { ck.Model.Dropout = 5 }, "Dropout"},
		{"NaN parameter", func(ck *Checkpoint) { ck.Params[2].W[3] = float32(math.NaN()) }, "non-finite values"},
		{"Inf moment", func(ck *Checkpoint) { ck.Params[1].M[0] = float32(math.Inf(1)) }, "non-finite Adam moment m"},
		{"negative v", func(ck *Checkpoint) { ck.Params[1].V[0] = -1 }, "negative Adam moment v"},
		{"unknown feat_norm", func(ck *Checkpoint) { ck.FeatNorm = "zscore" }, "feat_norm"},
		{"label_prop 2", func(ck *Checkpoint) { ck.LabelProp = 2 }, "label_prop"},
		{"hidden 2^40", func(ck *Checkpoint) { ck.Model.Hidden = 1 << 40 }, "Hidden"},
		{"hidden mismatch", func(ck *Checkpoint) { ck.Model.Hidden = 5 }, "parameter values"},
		{"best epoch after epoch", func(ck *Checkpoint) { ck.Train.BestEpoch = 9 }, "best_epoch"},
		{"accuracy 7", func(ck *Checkpoint) { ck.Train.BestValAcc = 7 }, "accuracies"},
		{"negative lr", func(ck *Checkpoint) { ck.Train.Optim.LR = -1 }, "optim"},
		{"unknown schedule", func(ck *Checkpoint) { ck.Train.Loop.LRSchedule = "exp" }, `train.loop LRSchedule: "exp"`},
		{"step gamma 2", func(ck *Checkpoint) {
			ck.Train.Loop = LoopSettings{LRSchedule: ScheduleStep, LRStepSize: 3, LRGamma: 2}
		}, "train.loop LRGamma: 2"},
		{"negative patience", func(ck *Checkpoint) { ck.Train.Loop = LoopSettings{LRSchedule: ScheduleNone, Patience: -2} }, "train.loop Patience: -2"},
		{"negative scheduled lr", func(ck *Checkpoint) { ck.Train.LoopState.LR = -0.5 }, "train.loop_state: learning rate -0.5"},
		{"negative counter", func(ck *Checkpoint) { ck.Train.LoopState.PlateauBad = -1 }, "train.loop_state: counters -1"},
		{"stopped after epoch", func(ck *Checkpoint) { ck.Train.LoopState.StoppedEarly = 6 }, "stopped_early 6"},
	} {
		ck := smallCheckpoint()
		c.edit(ck)
		path := filepath.Join(dir, "bad.ckpt")
		if err := SaveCheckpoint(path, ck); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		_, err := LoadCheckpoint(path)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), path+": ") {
			t.Errorf("%s: err = %v, want one naming %s and %q", c.name, err, path, c.want)
		}
	}

	// A parameter length of 2^62 in the header: refused before allocating.
	for _, n := range []int64{1 << 62, 1<<62 + 1, -1, 1 << 31} {
		h := fmt.Appendf(nil, `{"model":{"Model":"gcn","Layers":1,"In":1,"Hidden":1,"Out":1},"params":[{"name":"conv0.lin.weight","len":%d}]}`, n)
		path := forge(t, h, make([]byte, 8))
		if _, err := LoadCheckpoint(path); err == nil || !strings.Contains(err.Error(), "runs past the end") {
			t.Errorf("params len %d: err = %v", n, err)
		}
	}
}

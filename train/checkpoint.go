package train

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/internal/sysmem"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/task"
)

// ckptFormat: version 2 adds the training state (Adam moments, epoch,
// dropout position); version 1 is still read.
var ckptFormat = container.Format{Magic: "SGCNCKPT", Version: 2, Min: 1}

// Checkpoint is a saved model: its configuration and parameter values, and
// (written by training) the state needed to resume training exactly.
type Checkpoint struct {
	Model     nn.Config `json:"model"`
	LabelProp float64   `json:"label_prop"`
	FeatNorm  string    `json:"feat_norm"` // input preprocessing the model was trained with
	DataID    string    `json:"data_id"`   // DataIdentity of the training data ("" in older files)
	Task      string    `json:"task"`      // the training objective (task.Names; "" in older files: node)
	NegRatio  int       `json:"neg_ratio"` // link: negatives per training edge (0 for other tasks)
	Decoder   string    `json:"decoder"`   // link: the pair scorer with weights (task.Decoders; "" the dot product)
	// LinkMetric is the link task's selecting metric ("" for other tasks
	// and in files of older builds, which selected by rocauc).
	LinkMetric string `json:"link_metric"`
	Params     []SavedParam
	Train      *TrainState // nil in version-1 files: no optimizer state, cannot be resumed
}

// SavedParam is one named parameter tensor, with its Adam moments M and V
// when the checkpoint has a TrainState (nil otherwise).
type SavedParam struct {
	Name string    `json:"name"`
	W    []float32 `json:"-"`
	M, V []float32 `json:"-"`
}

// TrainState is where training stood when the checkpoint was written.
type TrainState struct {
	Epoch       int     `json:"epoch"`        // epochs completed
	AdamSteps   int     `json:"adam_steps"`   // Adam's step count t
	DropoutStep uint64  `json:"dropout_step"` // nn.Model.DropoutStep (the same on every rank)
	BestValAcc  float64 `json:"best_val_acc"` // -1 before the first epoch
	BestEpoch   int     `json:"best_epoch"`
	BestTestAcc float64 `json:"best_test_acc"`           // test accuracy at BestEpoch
	BestValLoss float64 `json:"best_val_loss,omitempty"` // validation loss at BestEpoch (absent in files of older builds)
	LastTestAcc float64 `json:"last_test_acc"`           // test accuracy of epoch Epoch
	Optim       Optim   `json:"optim"`                   // zero in files of older builds
	// NodeOrder and EvalEvery are the run's train.Config values (absent in
	// files of older builds): the dropout masks follow the node order, the
	// best-validation record the evaluation grid.
	NodeOrder string `json:"node_order,omitempty"`
	EvalEvery int    `json:"eval_every,omitempty"`
	// GridBest is the best-validation record over the epochs on the
	// EvalEvery grid only, without the off-grid evaluation of a run's last
	// epoch: what a run resumed past Epoch continues from.
	// Set when EvalEvery is (files of this build).
	GridBest BestRecord `json:"grid_best"`
	// Loop is the run's learning-rate schedule and early-stopping
	// settings (LRSchedule "" in files of older builds, which had neither),
	// LoopState where they stood after Epoch.
	Loop      LoopSettings `json:"loop"`
	LoopState LoopState    `json:"loop_state"`
}

// BestRecord is a best-validation record.
type BestRecord struct {
	ValAcc  float64 `json:"val_acc"`
	Epoch   int     `json:"epoch"`
	TestAcc float64 `json:"test_acc"`
	ValLoss float64 `json:"val_loss,omitempty"`
}

// Optim is the optimiser's configuration, which a resumed run takes over.
type Optim struct {
	LR          float64 `json:"lr"`
	WeightDecay float64 `json:"weight_decay"`
	DecayAll    bool    `json:"decay_all"`
	Decoupled   bool    `json:"adamw"`
}

type ckptHeader struct {
	Model      nn.Config   `json:"model"`
	LabelProp  float64     `json:"label_prop"`
	FeatNorm   string      `json:"feat_norm,omitempty"`
	DataID     string      `json:"data_id,omitempty"`
	Task       string      `json:"task,omitempty"` // absent for node classification
	NegRatio   int         `json:"neg_ratio,omitempty"`
	Decoder    string      `json:"decoder,omitempty"`
	LinkMetric string      `json:"link_metric,omitempty"`
	Train      *TrainState `json:"train,omitempty"` // version 2: the moments follow the parameters
	Params     []struct {
		Name string `json:"name"`
		Len  int    `json:"len"`
	} `json:"params"`
}

// save writes the model and the training state after epoch done to path
// (rank 0; errors name the input name, SavePath or SaveBest;
// parameters, optimizer state and the dropout position are identical on
// every rank).
func (t *trainer) save(path, name string, done int) error {
	if t.c.Rank() != 0 {
		return nil
	}
	if l, what := t.nonFiniteParam(); l >= 0 {
		return fmt.Errorf("not saving %s: layer %d has a non-finite %s after epoch %d (the previous checkpoint is kept)", path, l, what, done)
	}
	m, v, steps := t.opt.State()
	ck := Checkpoint{Model: t.model.Config(), LabelProp: t.cfg.LabelProp, FeatNorm: t.cfg.FeatNorm, DataID: t.dataID, Task: t.kind.Name, NegRatio: t.negRatio(), Decoder: t.decoder(), LinkMetric: t.linkMetric(),
		Train: &TrainState{Epoch: done, AdamSteps: steps, DropoutStep: t.model.DropoutStep(),
			BestValAcc: t.best.BestValAcc, BestEpoch: t.best.BestEpoch, BestTestAcc: t.best.TestAcc, LastTestAcc: t.lastTest,
			BestValLoss: finiteOrZero(t.best.BestValLoss),
			GridBest:    BestRecord{ValAcc: t.gridBest.BestValAcc, Epoch: t.gridBest.BestEpoch, TestAcc: t.gridBest.TestAcc, ValLoss: finiteOrZero(t.gridBest.BestValLoss)},
			NodeOrder:   t.nodeOrder(), EvalEvery: max(t.cfg.EvalEvery, 1),
			Optim: Optim{LR: t.cfg.LR, WeightDecay: t.cfg.WeightDecay, DecayAll: t.cfg.DecayAll, Decoupled: t.cfg.Decoupled},
			Loop:  t.cfg.loopSettings().Used(), LoopState: t.loop}}
	for i, p := range t.params {
		ck.Params = append(ck.Params, SavedParam{Name: p.Name, W: p.W, M: m[i], V: v[i]})
	}
	return field.Wrap(name, SaveCheckpoint(path, &ck))
}

// SaveCheckpoint writes ck to path (container.WriteFile: path.tmp, fsync,
// rename; no .tmp left on error): magic,
// version, a JSON header, the parameters as little-endian float32, with a
// TrainState the Adam moments (every parameter's M, then every parameter's
// V, in parameter order), and a CRC32-C of everything before it.
func SaveCheckpoint(path string, ck *Checkpoint) error {
	var h ckptHeader
	h.Model, h.LabelProp, h.FeatNorm, h.DataID, h.Train = ck.Model, ck.LabelProp, ck.FeatNorm, ck.DataID, ck.Train
	if ck.Task != task.Default {
		h.Task = ck.Task
	}
	h.NegRatio, h.Decoder, h.LinkMetric = ck.NegRatio, ck.Decoder, ck.LinkMetric
	for _, p := range ck.Params {
		if ck.Train != nil && (len(p.M) != len(p.W) || len(p.V) != len(p.W)) {
			return fmt.Errorf("%s: parameter %s: %d values but moments of %d and %d", path, p.Name, len(p.W), len(p.M), len(p.V))
		}
		h.Params = append(h.Params, struct {
			Name string `json:"name"`
			Len  int    `json:"len"`
		}{p.Name, len(p.W)})
	}
	js, err := json.Marshal(h)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	buf.Write(ckptFormat.Prefix())
	buf.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(js))))
	buf.Write(js)
	put := func(b []byte) error { buf.Write(b); return nil }
	for _, p := range ck.Params {
		container.EmitLE(p.W, put)
	}
	if ck.Train != nil {
		for _, p := range ck.Params {
			container.EmitLE(p.M, put)
		}
		for _, p := range ck.Params {
			container.EmitLE(p.V, put)
		}
	}
	buf.Write(binary.LittleEndian.AppendUint32(nil, container.Checksum(buf.Bytes())))
	return container.WriteBytes(path, 0o644, buf.Bytes())
}

// LoadCheckpoint reads a checkpoint written by SaveCheckpoint (version 2)
// or by an older build (version 1: no training state), verifying it.
func LoadCheckpoint(path string) (*Checkpoint, error) {
	b, err := container.ReadInput(path, sysmem.Limit(), "checkpoint in this process's memory")
	if err != nil {
		return nil, err
	}
	return decodeCheckpoint(path, b)
}

// decodeCheckpoint decodes and validates the bytes b of checkpoint path.
func decodeCheckpoint(path string, b []byte) (*Checkpoint, error) {
	var err error
	bad := func(msg string) error { return fmt.Errorf("%s: not a valid supergcn checkpoint: %s", path, msg) }
	if len(b) < container.PrefixSize+8 || !ckptFormat.HasMagic(b) {
		return nil, bad("bad magic")
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if container.Checksum(body) != sum {
		return nil, bad("checksum mismatch (damaged or truncated file)")
	}
	version, err := ckptFormat.CheckPrefix(b)
	if err != nil {
		return nil, bad(fmt.Sprintf("version %d, this build reads %d to %d", version, ckptFormat.Min, ckptFormat.Version))
	}
	off := container.PrefixSize
	n := int(binary.LittleEndian.Uint32(b[off:]))
	off += 4
	if off+n > len(body) {
		return nil, bad("header length beyond end of file")
	}
	var h ckptHeader
	if err := json.Unmarshal(b[off:off+n], &h); err != nil {
		return nil, bad("header: " + err.Error())
	}
	off += n
	if version == 1 && h.Train != nil {
		return nil, bad("version 1 with a training state")
	}
	ck := &Checkpoint{Model: h.Model, LabelProp: h.LabelProp, FeatNorm: h.FeatNorm, DataID: h.DataID, Task: h.Task, NegRatio: h.NegRatio, Decoder: h.Decoder, LinkMetric: h.LinkMetric, Train: h.Train}
	if ck.Task == "" {
		ck.Task = task.Default
	}
	read := func(name, what string, n int) ([]float32, error) {
		if n < 0 || n > (len(body)-off)/4 {
			return nil, bad(fmt.Sprintf("%s of parameter %s runs past the end of the file", what, name))
		}
		w := container.DecodeLE[float32](b[off : off+4*n])
		off += 4 * n
		return w, nil
	}
	for _, p := range h.Params {
		w, err := read(p.Name, "values", p.Len)
		if err != nil {
			return nil, err
		}
		ck.Params = append(ck.Params, SavedParam{Name: p.Name, W: w})
	}
	if ck.Train != nil {
		for i, p := range h.Params {
			if ck.Params[i].M, err = read(p.Name, "Adam moment m", p.Len); err != nil {
				return nil, err
			}
		}
		for i, p := range h.Params {
			if ck.Params[i].V, err = read(p.Name, "Adam moment v", p.Len); err != nil {
				return nil, err
			}
		}
	}
	if off != len(body) {
		return nil, bad("trailing bytes after the parameters")
	}
	if err := ck.validate(); err != nil {
		return nil, bad(err.Error())
	}
	return ck, nil
}

// validate checks a decoded checkpoint field by field: a file with a valid
// CRC can still carry values no training writes (forged or from a buggy
// build), which must not reach an allocation or the optimiser.
func (ck *Checkpoint) validate() error {
	if err := ck.Model.Validate(); err != nil {
		// the checkpoint's value, not an input of this run: no field name
		// that a command line would rename to its flag
		var fe *field.Error
		if errors.As(err, &fe) {
			return fmt.Errorf("model %s: %v", strings.TrimPrefix(fe.Field, "nn.Config."), fe.Err)
		}
		return fmt.Errorf("model: %v", err)
	}
	switch {
	case !(ck.LabelProp >= 0 && ck.LabelProp < 1):
		return fmt.Errorf("label_prop %g is not in [0, 1)", ck.LabelProp)
	case ck.FeatNorm != "" && ck.FeatNorm != "none" && ck.FeatNorm != "row":
		return fmt.Errorf("feat_norm %q is not none or row", ck.FeatNorm)
	case !slices.Contains(task.Names(), ck.Task):
		return fmt.Errorf("task %q is not one of %s", ck.Task, strings.Join(task.Names(), ", "))
	case ck.Decoder != "" && (ck.Task != "link" || task.CheckDecoder(ck.Decoder) != nil):
		return fmt.Errorf("decoder %q: not a decoder of task %s", ck.Decoder, ck.Task)
	}
	want := ck.Model.NumParams()
	var have int64
	for _, p := range ck.Params {
		have += int64(len(p.W))
	}
	if ck.LabelProp > 0 {
		want += int64(ck.Model.In) * int64(ck.Model.Out) // the label embedding
	}
	want += task.DecoderParams(ck.Decoder, ck.Model.Out)
	if have != want {
		return fmt.Errorf("%d parameter values, the model it describes has %d", have, want)
	}
	for _, p := range ck.Params {
		for _, a := range []struct {
			what string
			x    []float32
		}{{"values", p.W}, {"Adam moment m", p.M}, {"Adam moment v", p.V}} {
			if !nn.AllFinite(a.x) {
				return fmt.Errorf("parameter %s: non-finite %s", p.Name, a.what)
			}
		}
		for _, v := range p.V {
			if v < 0 {
				return fmt.Errorf("parameter %s: negative Adam moment v %g", p.Name, v)
			}
		}
	}
	if tr := ck.Train; tr != nil {
		acc := func(x float64) bool { return x >= -1 && x <= 1 }
		switch {
		case tr.Epoch < 0:
			return fmt.Errorf("train.epoch %d, need ≥ 0", tr.Epoch)
		case tr.AdamSteps < 0 || tr.AdamSteps > tr.Epoch:
			return fmt.Errorf("train.adam_steps %d is not in [0, epoch %d]", tr.AdamSteps, tr.Epoch)
		case tr.BestEpoch < 0 || tr.BestEpoch > tr.Epoch:
			return fmt.Errorf("train.best_epoch %d is not in [0, epoch %d]", tr.BestEpoch, tr.Epoch)
		case !acc(tr.BestValAcc) || !acc(tr.BestTestAcc) || !acc(tr.LastTestAcc):
			return fmt.Errorf("train: accuracies %g, %g, %g are not in [-1, 1]", tr.BestValAcc, tr.BestTestAcc, tr.LastTestAcc)
		}
		if o := tr.Optim; o != (Optim{}) && (!(o.LR > 0) || math.IsInf(o.LR, 0) || !(o.WeightDecay >= 0) || math.IsInf(o.WeightDecay, 0)) {
			return fmt.Errorf("train.optim: learning rate %g and weight decay %g must be finite, > 0 and ≥ 0", o.LR, o.WeightDecay)
		}
		return tr.validateLoop()
	}
	return nil
}

// validateLoop checks the schedule and early-stopping settings and state
// of a decoded checkpoint.
func (tr *TrainState) validateLoop() error {
	l, s := tr.Loop, tr.LoopState
	if l.LRSchedule != "" {
		if err := l.check(math.Inf(1)); err != nil {
			var fe *field.Error
			if errors.As(err, &fe) { // the checkpoint's value, not this run's: no field name to rename
				return fmt.Errorf("train.loop %s: %v", strings.TrimPrefix(fe.Field, "train.Config."), fe.Err)
			}
			return err
		}
	}
	finite := func(x float64) bool { return x >= 0 && !math.IsInf(x, 0) }
	switch {
	case l.CosineEpochs < 0:
		return fmt.Errorf("train.loop.cosine_epochs %d, need ≥ 0", l.CosineEpochs)
	case !finite(s.LR) || !finite(s.PlateauBest):
		return fmt.Errorf("train.loop_state: learning rate %g and best validation loss %g must be finite and ≥ 0", s.LR, s.PlateauBest)
	case s.PlateauBad < 0 || s.PatienceBad < 0:
		return fmt.Errorf("train.loop_state: counters %d and %d, need ≥ 0", s.PlateauBad, s.PatienceBad)
	case s.StoppedEarly < 0 || s.StoppedEarly > tr.Epoch:
		return fmt.Errorf("train.loop_state.stopped_early %d is not in [0, epoch %d]", s.StoppedEarly, tr.Epoch)
	}
	return nil
}

// resume restores a checkpoint written by training into the freshly built
// trainer (every rank reads the file): parameters, Adam state, dropout
// position, best-validation bookkeeping and the epoch to continue after.
// The checkpoint must describe the model the flags describe.
func (t *trainer) resume(path string) error {
	fail := func(format string, args ...any) error {
		return field.Errorf("train.Config.ResumePath", "%s: %s", path, fmt.Sprintf(format, args...))
	}
	ck, err := LoadCheckpoint(path)
	if err != nil {
		return field.Wrap("train.Config.ResumePath", err)
	}
	if ck.Train == nil {
		return fail("no optimizer state (a version-1 checkpoint, or not written by training): it can be evaluated, not resumed")
	}
	if ck.DataID != "" && ck.DataID != t.dataID {
		return &DataMismatchError{Path: path, Checkpoint: ck.DataID, Run: t.dataID}
	}
	have, want := ck.Model, t.model.Config()
	norm := func(s string) string {
		if s == "" {
			return "none"
		}
		return s
	}
	type setting struct {
		field      string
		have, want any
	}
	settings := []setting{
		{"train.Config.Task", ck.Task, t.kind.Name}, // first: a task sets the outputs
		{"task.Table.NegRatio", ck.NegRatio, t.negRatio()},
		{"task.Table.Decoder", cmp.Or(ck.Decoder, "dot"), cmp.Or(t.decoder(), "dot")},
		{"nn.Config.Model", have.Model, want.Model},
		{"nn.Config.Layers", have.Layers, want.Layers},
		{"nn.Config.Hidden", have.Hidden, want.Hidden},
		{"nn.Config.Norm", norm(have.Norm), norm(want.Norm)},
		{"nn.Config.JK", norm(have.JK), norm(want.JK)},
		{"nn.Config.Residual", have.Residual, want.Residual},
		{"input features", have.In, want.In},
		{"classes", have.Out, want.Out},
		{"nn.Config.Dropout", have.Dropout, want.Dropout},
		{"nn.Config.Seed", have.Seed, want.Seed},
		{"nn.Config.Hyper", fmt.Sprint(have.HyperValues()), fmt.Sprint(want.HyperValues())},
		{"train.Config.LabelProp", ck.LabelProp, t.cfg.LabelProp},
		{"train.Config.FeatNorm", norm(ck.FeatNorm), norm(t.cfg.FeatNorm)},
	}
	if ck.LinkMetric != "" { // absent in checkpoints of older builds
		settings = append(settings, setting{"task.Table.LinkMetric", ck.LinkMetric, t.linkMetric()})
	}
	if o := ck.Train.Optim; o != (Optim{}) { // absent in checkpoints of older builds
		settings = append(settings,
			setting{"train.Config.LR", o.LR, t.cfg.LR},
			setting{"train.Config.WeightDecay", o.WeightDecay, t.cfg.WeightDecay},
			setting{"train.Config.DecayAll", o.DecayAll, t.cfg.DecayAll},
			setting{"train.Config.Decoupled", o.Decoupled, t.cfg.Decoupled})
	}
	if ck.Train.NodeOrder != "" {
		settings = append(settings, setting{"train.Config.NodeOrder", ck.Train.NodeOrder, t.nodeOrder()})
	}
	if ck.Train.EvalEvery > 0 {
		settings = append(settings, setting{"train.Config.EvalEvery", ck.Train.EvalEvery, max(t.cfg.EvalEvery, 1)})
	}
	if l, r := ck.Train.Loop, t.cfg.loopSettings().Used(); l.LRSchedule != "" { // absent in checkpoints of older builds
		settings = append(settings,
			setting{"train.Config.LRSchedule", l.LRSchedule, r.LRSchedule},
			setting{"train.Config.LRStepSize", l.LRStepSize, r.LRStepSize},
			setting{"train.Config.LRGamma", l.LRGamma, r.LRGamma},
			setting{"train.Config.LRMin", l.LRMin, r.LRMin},
			setting{"train.Config.LRPlateauPatience", l.LRPlateauPatience, r.LRPlateauPatience},
			setting{"train.Config.Patience", l.Patience, r.Patience},
			setting{"train.Config.StopOn", cmp.Or(l.StopOn, StopValAcc), r.StopOn},
			setting{"train.Config.Epochs (the cosine schedule's length)", l.CosineEpochs, r.CosineEpochs})
	}
	for _, d := range settings {
		if d.have != d.want {
			return fail("checkpoint has %s %v, this run %v", d.field, d.have, d.want)
		}
	}
	if ck.Train.Epoch > t.cfg.Epochs {
		return fail("checkpoint is at epoch %d, past train.Config.Epochs %d", ck.Train.Epoch, t.cfg.Epochs)
	}
	if len(ck.Params) != len(t.params) {
		return fail("%d parameters, the model has %d", len(ck.Params), len(t.params))
	}
	m := make([][]float32, len(t.params))
	v := make([][]float32, len(t.params))
	for i, p := range t.params {
		sp := ck.Params[i]
		if sp.Name != p.Name || len(sp.W) != len(p.W) {
			return fail("parameter %d is %s (%d values), the model's is %s (%d values)", i, sp.Name, len(sp.W), p.Name, len(p.W))
		}
		m[i], v[i] = sp.M, sp.V
	}
	if err := t.opt.SetState(m, v, ck.Train.AdamSteps); err != nil {
		return fail("%v", err)
	}
	for i, p := range t.params {
		copy(p.W, ck.Params[i].W)
	}
	t.model.SetDropoutStep(ck.Train.DropoutStep)
	t.done = ck.Train.Epoch
	t.best.BestValAcc, t.best.BestEpoch, t.best.TestAcc = ck.Train.BestValAcc, ck.Train.BestEpoch, ck.Train.BestTestAcc
	t.best.BestValLoss = ck.Train.BestValLoss
	t.gridBest = t.best
	if g := ck.Train.GridBest; ck.Train.EvalEvery > 0 && t.done < t.cfg.Epochs { // training goes on: the grid's record
		t.gridBest.BestValAcc, t.gridBest.BestEpoch, t.gridBest.TestAcc = g.ValAcc, g.Epoch, g.TestAcc
		t.gridBest.BestValLoss = g.ValLoss
		t.best = t.gridBest
	}
	t.lastTest = ck.Train.LastTestAcc
	if s := ck.Train.LoopState; s.LR > 0 { // absent in checkpoints of older builds, which had no schedule
		t.loop = s
	}
	return nil
}

// DataMismatchError: a checkpoint written by training on other data than
// this run's (another dataset, split, features or preprocessing).
type DataMismatchError struct {
	Path            string
	Checkpoint, Run string // DataIdentity values
}

func (e *DataMismatchError) Error() string {
	return fmt.Sprintf("checkpoint %s was trained on other data (data id %s; this run's data: %s): "+
		"another dataset, split, features or feature normalisation; start afresh with another checkpoint file", e.Path, e.Checkpoint, e.Run)
}

// finiteOrZero is x, or 0 (absent in the file) where x is NaN or infinite,
// which JSON cannot carry: a diverged run's validation loss.
func finiteOrZero(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// Package trainargs checks and resolves what the train (and gen) command
// lines give beyond parsing: the settings a --resume checkpoint fixes, the
// wire formats of the bits flags, and the target tables of the tasks.
package trainargs

import (
	"cmp"
	"fmt"

	"github.com/supergcn/supergcn/cmd/internal/flagtab"
	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/train"
)

// Resume reads the --resume checkpoint and takes the model and
// training settings from it, so the run continues the saved one exactly; a
// flag given with another value is refused, naming both.
func Resume(cfg *train.Config, seed *uint64, featNorm *string, isSet func(flag string) bool) error {
	if err := container.CheckInput(cfg.ResumePath); err != nil {
		return flagtab.UsageError(fmt.Sprintf("--resume: %v", err))
	}
	ck, err := train.LoadCheckpoint(cfg.ResumePath)
	if err != nil {
		return fmt.Errorf("--resume: %w", err)
	}
	if ck.Train == nil {
		return flagtab.UsageError(fmt.Sprintf("--resume %s: no optimizer state (a version-1 checkpoint, or not written by training): it can be evaluated, not resumed", cfg.ResumePath))
	}
	if ck.Task != cfg.Task { // the task decides the targets read, so the data: refuse before reading it
		return flagtab.UsageError(fmt.Sprintf("--task: checkpoint %s was trained for task %s, this run is %s (give --task %s with its targets)", cfg.ResumePath, ck.Task, cfg.Task, ck.Task))
	}
	ckFeatNorm := ck.FeatNorm
	if ckFeatNorm == "" {
		ckFeatNorm = "none"
	}
	norm := ck.Model.Norm
	if norm == "" {
		norm = "none"
	}
	precision := ck.Model.Precision
	if precision == "" {
		precision = "fp32"
	}
	type setting = resumeSetting
	m := &cfg.Model
	settings := []setting{
		{"model", m.Model, ck.Model.Model, func() { m.Model = ck.Model.Model }},
		{"layers", m.Layers, ck.Model.Layers, func() { m.Layers = ck.Model.Layers }},
		{"hidden", m.Hidden, PerHead(ck.Model), func() { m.Hidden = PerHead(ck.Model) }},
		{"dropout", m.Dropout, ck.Model.Dropout, func() { m.Dropout = ck.Model.Dropout }},
		{"norm", m.Norm, norm, func() { m.Norm = norm }},
		{"jk", m.JK, cmp.Or(ck.Model.JK, "none"), func() { m.JK = cmp.Or(ck.Model.JK, "none") }},
		{"residual", m.Residual, ck.Model.Residual, func() { m.Residual = ck.Model.Residual }},
		{"precision", m.Precision, precision, func() { m.Precision = precision }},
		{"heads", m.Heads, ck.Model.Heads, func() { m.Heads = ck.Model.Heads }},
		{"out-heads", m.OutHeads, ck.Model.OutHeads, func() { m.OutHeads = ck.Model.OutHeads }},
		{"attn-dropout", m.AttnDropout, ck.Model.AttnDropout, func() { m.AttnDropout = ck.Model.AttnDropout }},
		{"seed", *seed, ck.Model.Seed, func() { *seed = ck.Model.Seed }},
		{"label-prop", cfg.LabelProp, ck.LabelProp, func() { cfg.LabelProp = ck.LabelProp }},
		{"feat-norm", *featNorm, ckFeatNorm, func() { *featNorm = ckFeatNorm }},
	}
	if o := ck.Train.Optim; o != (train.Optim{}) { // absent in checkpoints of older builds
		settings = append(settings,
			setting{"lr", cfg.LR, o.LR, func() { cfg.LR = o.LR }},
			setting{"weight-decay", cfg.WeightDecay, o.WeightDecay, func() { cfg.WeightDecay = o.WeightDecay }},
			setting{"decay-all", cfg.DecayAll, o.DecayAll, func() { cfg.DecayAll = o.DecayAll }},
			setting{"adamw", cfg.Decoupled, o.Decoupled, func() { cfg.Decoupled = o.Decoupled }})
	}
	if tr := ck.Train; tr.NodeOrder != "" { // absent in checkpoints of older builds
		settings = append(settings,
			setting{"node-order", cfg.NodeOrder, tr.NodeOrder, func() { cfg.NodeOrder = tr.NodeOrder }},
			setting{"eval-every", max(cfg.EvalEvery, 1), tr.EvalEvery, func() { cfg.EvalEvery = tr.EvalEvery }})
	}
	for _, h := range nn.Hypers() { // the hyperparameters the checkpoint's model declares
		if v, err := ck.Model.HyperValue(h.Name); err == nil {
			settings = append(settings, setting{h.Name, m.Hyper[h.Name], v, func() { m.Hyper = ck.Model.Hyper }})
		}
	}
	settings = append(settings, loopResumeSettings(cfg, ck.Train.Loop)...)
	for _, s := range settings {
		if isSet(s.flag) && s.flagValue != s.ckValue {
			return flagtab.UsageError(fmt.Sprintf("--%s %v contradicts --resume %s, which was trained with --%s %v (a resumed run takes its model and training settings from the checkpoint: drop the flag, or start a new run)",
				s.flag, s.flagValue, cfg.ResumePath, s.flag, s.ckValue))

		}
		s.take()
	}
	return nil
}

// resumeSetting is a training setting a checkpoint records: the flag,
// its value on the command line and in the checkpoint, and a func that
// takes the checkpoint's.
type resumeSetting struct {
	flag      string
	flagValue any
	ckValue   any
	take      func()
}

// loopResumeSettings are the schedule and early-stopping settings of
// checkpoint settings l (train.LoopSettings.Used: those its schedule
// uses; none in checkpoints of older builds).
func loopResumeSettings(cfg *train.Config, l train.LoopSettings) []resumeSetting {
	if l.LRSchedule == "" {
		return nil
	}
	s := []resumeSetting{
		{"lr-schedule", cfg.LRSchedule, l.LRSchedule, func() { cfg.LRSchedule = l.LRSchedule }},
		{"patience", cfg.Patience, l.Patience, func() { cfg.Patience = l.Patience }},
		{"stop-on", cmp.Or(cfg.StopOn, train.StopValAcc), cmp.Or(l.StopOn, train.StopValAcc), func() { cfg.StopOn = l.StopOn }},
	}
	gamma := resumeSetting{"lr-gamma", cfg.LRGamma, l.LRGamma, func() { cfg.LRGamma = l.LRGamma }}
	lrMin := resumeSetting{"lr-min", cfg.LRMin, l.LRMin, func() { cfg.LRMin = l.LRMin }}
	switch l.LRSchedule {
	case train.ScheduleStep:
		s = append(s, gamma, resumeSetting{"lr-step-size", cfg.LRStepSize, l.LRStepSize, func() { cfg.LRStepSize = l.LRStepSize }})
	case train.ScheduleCosine:
		s = append(s, lrMin, resumeSetting{"epochs", cfg.Epochs, l.CosineEpochs, func() { cfg.Epochs = l.CosineEpochs }})
	case train.SchedulePlateau:
		s = append(s, gamma, lrMin,
			resumeSetting{"lr-plateau-patience", cfg.LRPlateauPatience, l.LRPlateauPatience, func() { cfg.LRPlateauPatience = l.LRPlateauPatience }})
	}
	return s
}

// PerHead is --hidden for model m of nn.Config (the inverse of multiplying it by the heads):
// the width of one head of an attention model.
func PerHead(m nn.Config) int {
	if op, err := nn.ModelOp(m.Model); err == nil && op.Attends() && m.Layers > 1 {
		return m.Hidden / max(m.Heads, 1)
	}
	return m.Hidden
}

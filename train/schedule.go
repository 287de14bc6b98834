package train

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/supergcn/supergcn/internal/field"
)

// Learning-rate schedules (Config.LRSchedule; "" is ScheduleNone).
const (
	ScheduleNone    = "none"    // Config.LR throughout
	ScheduleStep    = "step"    // LR · LRGamma^⌊(epoch-1)/LRStepSize⌋ (torch StepLR)
	ScheduleCosine  = "cosine"  // from LR to LRMin over Epochs (torch CosineAnnealingLR, T_max = Epochs)
	SchedulePlateau = "plateau" // ×LRGamma when the validation loss stalls (torch ReduceLROnPlateau)
)

// The validation value that chooses the best epoch and that early
// stopping watches (Config.StopOn).
const (
	StopValAcc  = "val-acc"  // the task's metric (accuracy for node classification)
	StopValLoss = "val-loss" // the validation loss, lowest best
)

// Schedules lists the learning-rate schedules.
func Schedules() []string {
	return []string{ScheduleNone, ScheduleStep, ScheduleCosine, SchedulePlateau}
}

// The plateau schedule's fixed settings, torch.optim.lr_scheduler.
// ReduceLROnPlateau's defaults: a loss improves when it is below the best
// by more than the relative threshold; a reduction smaller than eps is not
// made.
const (
	plateauThreshold = 1e-4
	plateauEps       = 1e-8
)

// LoopSettings are the learning-rate schedule and early-stopping settings
// of a run (the Config fields of the same names). Checkpoints record those
// the schedule uses (the others 0); LRSchedule "" in a checkpoint: written
// by an older build, which had neither.
type LoopSettings struct {
	LRSchedule        string  `json:"lr_schedule"`
	LRStepSize        int     `json:"lr_step_size,omitempty"`
	LRGamma           float64 `json:"lr_gamma,omitempty"`
	LRMin             float64 `json:"lr_min,omitempty"`
	LRPlateauPatience int     `json:"lr_plateau_patience,omitempty"`
	Patience          int     `json:"patience,omitempty"`
	StopOn            string  `json:"stop_on,omitempty"` // "" in files of older builds: StopValAcc
	// CosineEpochs is Config.Epochs under the cosine schedule (its
	// length), 0 under the others.
	CosineEpochs int `json:"cosine_epochs,omitempty"`
}

// LoopState is where the schedule and early stopping stood after the
// checkpoint's epoch.
type LoopState struct {
	LR           float64 `json:"lr"`            // learning rate of the next epoch (0 in files of older builds)
	PlateauBest  float64 `json:"plateau_best"`  // lowest validation loss so far (plateau, when PlateauSeen)
	PlateauSeen  bool    `json:"plateau_seen"`  // a validation loss was observed
	PlateauBad   int     `json:"plateau_bad"`   // evaluations since the validation loss last improved
	PatienceBad  int     `json:"patience_bad"`  // evaluations since the best validation accuracy last improved
	StoppedEarly int     `json:"stopped_early"` // the epoch early stopping ended training after (0: it did not)
}

// loopSettings returns c's schedule and early-stopping settings
// (LRSchedule "" as ScheduleNone).
func (c Config) loopSettings() LoopSettings {
	l := LoopSettings{LRSchedule: c.LRSchedule, LRStepSize: c.LRStepSize, LRGamma: c.LRGamma, LRMin: c.LRMin,
		LRPlateauPatience: c.LRPlateauPatience, Patience: c.Patience, StopOn: cmp.Or(c.StopOn, StopValAcc)}
	if l.LRSchedule == "" {
		l.LRSchedule = ScheduleNone
	}
	if l.LRSchedule == ScheduleCosine {
		l.CosineEpochs = c.Epochs
	}
	return l
}

// Used returns l with the settings its schedule does not use zeroed: what
// a checkpoint records, and what a resumed run must match.
func (l LoopSettings) Used() LoopSettings {
	u := LoopSettings{LRSchedule: l.LRSchedule, Patience: l.Patience, StopOn: l.StopOn, CosineEpochs: l.CosineEpochs}
	switch l.LRSchedule {
	case ScheduleStep:
		u.LRStepSize, u.LRGamma = l.LRStepSize, l.LRGamma
	case ScheduleCosine:
		u.LRMin = l.LRMin
	case SchedulePlateau:
		u.LRGamma, u.LRMin, u.LRPlateauPatience = l.LRGamma, l.LRMin, l.LRPlateauPatience
	}
	return u
}

// check reports the first invalid setting of l as a *field.Error naming
// the Config field; lr is the initial learning rate. A setting the
// schedule does not use is checked only for its range.
func (l LoopSettings) check(lr float64) error {
	bad := func(name, format string, args ...any) error {
		return field.Errorf("train.Config."+name, format, args...)
	}
	uses := func(kinds ...string) bool { return slices.Contains(kinds, l.LRSchedule) }
	switch {
	case !slices.Contains(Schedules(), l.LRSchedule):
		return bad("LRSchedule", "%q is not one of %s", l.LRSchedule, strings.Join(Schedules(), ", "))
	case l.Patience < 0:
		return bad("Patience", "%d, need ≥ 0 (0: no early stopping)", l.Patience)
	case l.StopOn != "" && l.StopOn != StopValAcc && l.StopOn != StopValLoss: // "": a checkpoint of an older build
		return bad("StopOn", "%q is not %s or %s", l.StopOn, StopValAcc, StopValLoss)
	case l.LRStepSize < 0 || (uses(ScheduleStep) && l.LRStepSize < 1):
		return bad("LRStepSize", "%d, need ≥ 1 epoch", l.LRStepSize)
	case uses(ScheduleStep, SchedulePlateau) && !(l.LRGamma > 0 && l.LRGamma <= 1):
		return bad("LRGamma", "%g is not in (0, 1]", l.LRGamma)
	case !(l.LRGamma >= 0 && l.LRGamma <= 1):
		return bad("LRGamma", "%g is not in (0, 1]", l.LRGamma)
	case !(l.LRMin >= 0) || math.IsInf(l.LRMin, 0):
		return bad("LRMin", "%g, need a finite value ≥ 0", l.LRMin)
	case uses(ScheduleCosine, SchedulePlateau) && l.LRMin > lr:
		return bad("LRMin", "%g is above the initial learning rate train.Config.LR %g", l.LRMin, lr)
	case l.LRPlateauPatience < 0:
		return bad("LRPlateauPatience", "%d, need ≥ 0", l.LRPlateauPatience)
	}
	return nil
}

// lrAt is the learning rate of epoch e: the schedule's formula, or the
// plateau schedule's current rate.
func (t *trainer) lrAt(e int) float64 {
	c := t.cfg
	switch c.LRSchedule {
	case ScheduleStep:
		return c.LR * math.Pow(c.LRGamma, float64((e-1)/c.LRStepSize))
	case ScheduleCosine:
		return c.LRMin + (c.LR-c.LRMin)*(1+math.Cos(math.Pi*float64(e-1)/float64(max(c.Epochs, 1))))/2
	case SchedulePlateau:
		return t.loop.LR
	}
	return c.LR
}

// advanceLoop takes an epoch evaluated on the EvalEvery grid into early
// stopping (accImproved: its validation accuracy beat the best so far)
// and the plateau schedule, then sets the next epoch's learning rate.
// Every rank sees the same all-reduced metrics and decides the same.
func (t *trainer) advanceLoop(m EpochMetrics, onGrid, accImproved bool) {
	c, s := t.cfg, &t.loop
	if onGrid && m.Evaluated {
		if accImproved {
			s.PatienceBad = 0
		} else {
			s.PatienceBad++
		}
		if c.Patience > 0 && s.PatienceBad >= c.Patience {
			s.StoppedEarly = m.Epoch
		}
		if c.LRSchedule == SchedulePlateau {
			t.plateauStep(m.ValLoss)
		}
	}
	s.LR = t.lrAt(m.Epoch + 1)
}

// plateauStep is ReduceLROnPlateau's step (mode min, relative threshold,
// no cooldown, min_lr LRMin) on validation loss loss.
func (t *trainer) plateauStep(loss float64) {
	c, s := t.cfg, &t.loop
	if !s.PlateauSeen || loss < s.PlateauBest*(1-plateauThreshold) {
		s.PlateauBest, s.PlateauSeen, s.PlateauBad = loss, true, 0
	} else {
		s.PlateauBad++
	}
	if s.PlateauBad > c.LRPlateauPatience {
		if lr := math.Max(s.LR*c.LRGamma, c.LRMin); s.LR-lr > plateauEps {
			s.LR = lr
		}
		s.PlateauBad = 0
	}
}

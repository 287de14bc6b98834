package train

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/nn"
)

// What a rank found non-finite in its training step (the kind of a
// divergence code; code = layer*4 + kind, 0 = all finite).
const (
	nfLoss     = 1 // its share of the loss
	nfGradient = 2 // a parameter gradient
	nfExchange = 3 // a boundary row its quantisers were given
)

// DivergedError is a training step that produced a NaN or an infinity: the
// loss, a gradient or a boundary row, first seen on Rank in Layer (1-based:
// the layer whose output or parameters held it; 0 the label-propagation
// embedding of the input).
type DivergedError struct {
	Epoch, Layer, Rank int
	What               string // "loss", "gradient" or "boundary rows"
	// FeatMax, when not 0, is the input features' largest magnitude (over
	// all ranks), set when it exceeds featOverflow: then the data, not the
	// learning rate, is the likely cause.
	FeatMax float64
}

func (e *DivergedError) Error() string {
	if e.FeatMax > 0 {
		return fmt.Sprintf("non-finite %s in layer %d on rank %d: the input features reach %.1e in magnitude, beyond what float32 products hold; scale them (train.Config.FeatNorm row) or check the data; nothing was saved for this epoch",
			e.What, e.Layer, e.Rank, e.FeatMax)
	}
	return fmt.Sprintf("non-finite %s in layer %d on rank %d: training diverged (lower train.Config.LR?); nothing was saved for this epoch",
		e.What, e.Layer, e.Rank)
}

// featOverflow is the input feature magnitude beyond which a divergence is
// blamed on the features: float32 holds magnitudes up to 3.4e38, and a
// gradient of the first layer scales with the features, so Adam's second
// moment (the gradient squared) overflows near 1e19 whatever the learning
// rate. No limit is imposed: features this large may still train (a
// sparse row, small weights); the message only names them when training
// does diverge.
const featOverflow = 1e18

// maxAbs returns the largest magnitude in x (+Inf when x holds an
// infinity; NaN values are skipped).
func maxAbs(x []float32) float64 {
	m := float32(0)
	for _, v := range x {
		if v < 0 {
			v = -v
		}
		if v > m {
			m = v
		}
	}
	return float64(m)
}

// blameFeatures names the input features in a DivergedError when they are
// large enough to overflow on their own (featOverflow); other errors pass
// unchanged.
func (t *trainer) blameFeatures(err error) error {
	var de *DivergedError
	if t.featMax > featOverflow && errors.As(err, &de) {
		de.FeatMax = t.featMax
	}
	return err
}

// localDivergence inspects this rank's training step (after Backward,
// before the all-reduce) and returns its divergence code: the first layer
// whose output went non-finite, else the first layer whose gradient did.
func (t *trainer) localDivergence(lossSum float64, logits *dense.Matrix) float64 {
	kind := 0
	nf := t.nonFinite()
	gradLayer := -1
	for _, p := range t.params {
		if !nn.AllFinite(p.G) {
			gradLayer = paramLayer(p.Name)
			break
		}
	}
	switch {
	case nf > t.nonFiniteSeen:
		kind = nfExchange
	case math.IsNaN(lossSum) || math.IsInf(lossSum, 0):
		kind = nfLoss
	case gradLayer >= 0:
		kind = nfGradient
	default:
		return 0
	}
	t.nonFiniteSeen = nf
	layer := t.model.NonFiniteLayer(logits)
	if layer == 0 {
		layer = gradLayer
	}
	if layer < 0 {
		layer = t.model.Config().Layers // only the loss: the output layer
	}
	return float64(layer*4 + kind)
}

// divergence decodes the per-rank codes summed by the all-reduce (slot r is
// rank r's) into the error of the lowest rank that found one, or nil.
func divergence(epoch int, codes []float64) error {
	for r, c := range codes {
		if c == 0 {
			continue
		}
		code := int(c)
		what := map[int]string{nfLoss: "loss", nfGradient: "gradient", nfExchange: "boundary rows"}[code%4]
		return &DivergedError{Epoch: epoch, Layer: code / 4, Rank: r, What: what}
	}
	return nil
}

// diverged turns the exchange's report of non-finite boundary rows (raised
// on the sending rank while quantising) into a DivergedError; other errors
// pass unchanged.
func diverged(epoch int, err error) error {
	var nf *exchange.NonFiniteError
	if errors.As(err, &nf) {
		return &DivergedError{Epoch: epoch, Layer: nf.Layer + 1, Rank: nf.Rank, What: nf.Dir + " boundary rows"}
	}
	return err
}

// paramLayer is the 1-based layer of a parameter named conv{i}.… or
// norm{i}.… (0 for the label-propagation embedding and unknown names).
func paramLayer(name string) int {
	for _, pre := range []string{"conv", "norm"} {
		if rest, ok := strings.CutPrefix(name, pre); ok {
			digits, _, _ := strings.Cut(rest, ".")
			if i, err := strconv.Atoi(digits); err == nil {
				return i + 1
			}
		}
	}
	return 0
}

// nonFiniteParam returns the layer of the first parameter whose values or
// Adam moments hold a NaN or an infinity, and which of them ("parameter",
// "Adam moment m" or "Adam moment v"), or -1 when all are finite: a
// checkpoint with either could not be read back.
func (t *trainer) nonFiniteParam() (int, string) {
	m, v, _ := t.opt.State()
	for i, p := range t.params {
		switch {
		case !nn.AllFinite(p.W):
			return paramLayer(p.Name), "parameter"
		case i < len(m) && !nn.AllFinite(m[i]):
			return paramLayer(p.Name), "Adam moment m"
		case i < len(v) && !nn.AllFinite(v[i]):
			return paramLayer(p.Name), "Adam moment v"
		}
	}
	return -1, ""
}

// lossWatch warns once when the loss stays well above its lowest value for
// risingEpochs epochs in a row: above risingFactor times it, and by more
// than riseFraction of the loss scale (riseFloor at least). The scale is
// the loss of an untrained model: ln(classes), or the first loss observed
// where that is larger. A run drifting towards divergence, or a learning
// rate too high to converge, climbs back towards that scale; a converged
// loss wandering between 0.03 and 0.07 does not.
type lossWatch struct {
	scale    float64
	min      float64
	minEpoch int
	above    int
	warned   bool
}

const (
	risingFactor = 1.5
	riseFraction = 0.25
	riseFloor    = 0.05
	risingEpochs = 10
)

// newLossWatch returns the watch of a model with the given output classes.
func newLossWatch(classes int) lossWatch {
	return lossWatch{scale: math.Log(float64(max(classes, 1)))}
}

// observe records the loss of epoch and returns a warning the first time
// the loss has been too high for too long ("" otherwise).
func (w *lossWatch) observe(epoch int, loss float64) string {
	if w.minEpoch == 0 {
		w.scale = max(w.scale, loss)
	}
	if w.minEpoch == 0 || loss < w.min {
		w.min, w.minEpoch, w.above = loss, epoch, 0
		return ""
	}
	if loss <= risingFactor*w.min || loss-w.min <= max(riseFraction*w.scale, riseFloor) {
		w.above = 0
		return ""
	}
	if w.above++; w.above < risingEpochs || w.warned {
		return ""
	}
	w.warned = true
	return fmt.Sprintf("warning: epoch %d: the loss %.4g has stayed above %g× its minimum %.4g (epoch %d), by more than %.0f%% of an untrained model's loss %.4g, for %d epochs: training may be diverging (lower the learning rate?)",
		epoch, loss, risingFactor, w.min, w.minEpoch, 100*riseFraction, w.scale, risingEpochs)
}

package nn

import (
	"cmp"
	"fmt"
	"math"
)

// AdamConfig holds Adam's hyper-parameters.
type AdamConfig struct {
	LR, Beta1, Beta2, Eps float64
	WeightDecay           float64 // applied only to Params with Decay set
	Decoupled             bool    // AdamW-style decay instead of L2 in the gradient
}

// DefaultAdam is torch.optim.Adam's defaults with Kipf & Welling's learning
// rate and weight decay (lr 0.01, betas 0.9/0.999, eps 1e-8, decay 5e-4).
func DefaultAdam() AdamConfig {
	return AdamConfig{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 5e-4}
}

// Adam is the Adam optimiser in the form of torch.optim.Adam. At step t, for
// every element w of a parameter with gradient g:
//
//	g ← g + wd·w                 (Decoupled false, Decay set: L2, torch Adam)
//	m ← β1·m + (1-β1)·g
//	v ← β2·v + (1-β2)·g²
//	w ← w - lr·wd·w              (Decoupled true, Decay set: torch AdamW,
//	                              applied before the moment update to w)
//	w ← w - (lr/(1-β1^t)) · m / (sqrt(v/(1-β2^t)) + eps)
//
// Moments are float32 (like torch's fp32 state); the update arithmetic is
// float64. Kipf & Welling's Cora numbers use the L2 form with wd 5e-4 on the
// first layer only, which is the default of Model.Params' Decay flags.
type Adam struct {
	cfg    AdamConfig
	params []*Param
	m, v   [][]float32
	t      int
}

// NewAdam returns an optimiser over params (each with its own moments).
func NewAdam(params []*Param, c AdamConfig) (*Adam, error) {
	switch {
	case !(c.LR > 0) || math.IsInf(c.LR, 0):
		return nil, fmt.Errorf("nn: AdamConfig.LR: %g must be finite and > 0", c.LR)
	case !(c.Beta1 >= 0 && c.Beta1 < 1):
		return nil, fmt.Errorf("nn: AdamConfig.Beta1: %g outside [0, 1)", c.Beta1)
	case !(c.Beta2 >= 0 && c.Beta2 < 1):
		return nil, fmt.Errorf("nn: AdamConfig.Beta2: %g outside [0, 1)", c.Beta2)
	case !(c.Eps > 0):
		return nil, fmt.Errorf("nn: AdamConfig.Eps: %g must be > 0", c.Eps)
	case !(c.WeightDecay >= 0) || math.IsInf(c.WeightDecay, 0):
		return nil, fmt.Errorf("nn: AdamConfig.WeightDecay: %g must be finite and ≥ 0", c.WeightDecay)
	}
	a := &Adam{cfg: c, params: params}
	for _, p := range params {
		if len(p.G) != len(p.W) {
			return nil, fmt.Errorf("nn: NewAdam: param %s has %d values but %d gradients", p.Name, len(p.W), len(p.G))
		}
		a.m = append(a.m, make([]float32, len(p.W)))
		a.v = append(a.v, make([]float32, len(p.W)))
	}
	return a, nil
}

// SetLR changes the learning rate for the following steps.
func (a *Adam) SetLR(lr float64) { a.cfg.LR = lr }

// Steps is the number of steps taken.
func (a *Adam) Steps() int { return a.t }

// Step updates every parameter from its current gradient G.
func (a *Adam) Step() {
	a.t++
	c := a.cfg
	bc1 := 1 - math.Pow(c.Beta1, float64(a.t))
	bc2 := 1 - math.Pow(c.Beta2, float64(a.t))
	stepSize := c.LR / bc1
	sqrtBC2 := math.Sqrt(bc2)
	for i, p := range a.params {
		wd := 0.0
		if p.Decay {
			wd = cmp.Or(p.DecayRate, c.WeightDecay)
		}
		l2, shrink := wd, 1.0
		if c.Decoupled {
			l2, shrink = 0, 1-c.LR*wd
		}
		m, v := a.m[i], a.v[i]
		for j, g32 := range p.G {
			w := float64(p.W[j])
			g := float64(g32) + l2*w
			mj := c.Beta1*float64(m[j]) + (1-c.Beta1)*g
			vj := c.Beta2*float64(v[j]) + (1-c.Beta2)*g*g
			m[j], v[j] = float32(mj), float32(vj)
			w *= shrink
			p.W[j] = float32(w - stepSize*mj/(math.Sqrt(vj)/sqrtBC2+c.Eps))
		}
	}
}

// State returns the optimiser's state: the first and second moments of each
// parameter (in the order given to NewAdam; the optimiser's own slices, to
// be read, not kept across Step) and the number of steps taken.
func (a *Adam) State() (m, v [][]float32, steps int) { return a.m, a.v, a.t }

// SetState replaces the optimiser's state with copies of m and v and the
// step count, as State returned them, so that training continues exactly
// where it stopped (a resumed checkpoint).
func (a *Adam) SetState(m, v [][]float32, steps int) error {
	if len(m) != len(a.m) || len(v) != len(a.v) {
		return fmt.Errorf("nn: Adam.SetState: %d/%d moment tensors for %d parameters", len(m), len(v), len(a.params))
	}
	if steps < 0 {
		return fmt.Errorf("nn: Adam.SetState: negative step count %d", steps)
	}
	for i, p := range a.params {
		if len(m[i]) != len(p.W) || len(v[i]) != len(p.W) {
			return fmt.Errorf("nn: Adam.SetState: param %s has %d values, moments %d and %d", p.Name, len(p.W), len(m[i]), len(v[i]))
		}
	}
	for i := range a.params {
		copy(a.m[i], m[i])
		copy(a.v[i], v[i])
	}
	a.t = steps
	return nil
}

package nn

import (
	"fmt"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/rowk"
)

// HiddenStage is the fused stage between two hidden convolutions,
// dropout(ReLU(LayerNorm(o + b))) forward in one pass and its gradient in
// one pass, on its own with its own buffers: the stage a Model runs,
// for timing it as training runs it (perfmodel/measure). The bias and
// the LayerNorm's parameters start at 0, 1 and 0.
type HiddenStage struct {
	a hiddenAct
}

// NewHiddenStage returns the stage over rows of width values, with a
// LayerNorm when layerNorm, dropout rate dropout (in [0, 1)) and the row
// kernels named kernel (Model.SetKernel's names).
func NewHiddenStage(width int, layerNorm bool, dropout float64, kernel string) (*HiddenStage, error) {
	if width < 1 || width > MaxWidth {
		return nil, fmt.Errorf("nn: NewHiddenStage: width %d, want 1 to %d", width, MaxWidth)
	}
	if !(dropout >= 0 && dropout < 1) {
		return nil, fmt.Errorf("nn: NewHiddenStage: dropout %g is not in [0, 1)", dropout)
	}
	k, err := rowk.Lookup(kernel)
	if err != nil {
		return nil, err
	}
	s := &HiddenStage{a: hiddenAct{p: dropout, bias: make([]float32, width), kern: k}}
	if layerNorm {
		s.a.norm = NewLayerNorm("norm", width)
		s.a.norm.kern = k
	}
	return s, nil
}

// Forward computes the stage's output from o (without LayerNorm the
// output overwrites o), dropping with seed when train.
func (s *HiddenStage) Forward(o *dense.Matrix, train bool, seed uint64) (*dense.Matrix, error) {
	if o.Cols != len(s.a.bias) {
		return nil, fmt.Errorf("nn: HiddenStage.Forward: %d columns, want %d", o.Cols, len(s.a.bias))
	}
	return s.a.forward(o, train, seed), nil
}

// Backward maps the gradient g of the last Forward's output (g is
// overwritten) to that of its input, and returns it.
func (s *HiddenStage) Backward(g *dense.Matrix) (*dense.Matrix, error) {
	if s.a.h == nil || g.Rows != s.a.h.Rows || g.Cols != s.a.h.Cols {
		return nil, fmt.Errorf("nn: HiddenStage.Backward: a %d×%d gradient without a Forward of that shape", g.Rows, g.Cols)
	}
	return s.a.backward(g), nil
}

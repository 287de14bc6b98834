package nn

import (
	"fmt"
)

// ParamShape is one parameter of a model as NewModel builds it, without
// building it: its name, its shape (Rows×Cols as Param stores it: a weight
// matrix In×Out, a vector 1×n) and whether it is a linear layer's weight
// matrix (torch.nn.Linear holds those transposed, Out×In).
type ParamShape struct {
	Name       string
	Rows, Cols int
	Weight     bool
}

// ParamShapes returns the parameters of the model of c in Model.Params
// order (per layer its conv's in plan order, then the normalisation's
// weight and bias (and running statistics), then the residual projection;
// the jumping-knowledge linear layer last). c must be valid (Validate's error otherwise).
func (c Config) ParamShapes() ([]ParamShape, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	m, _ := lookupModel(c.Model)
	var out []ParamShape
	for i := range c.Layers {
		s := c.shape(m, i)
		for _, p := range m.plan(s).Params {
			out = append(out, ParamShape{Name: s.Name + p.Suffix, Rows: p.Rows, Cols: p.Cols, Weight: p.Weight})
		}
		if i < c.Layers-1 || c.jumping() {
			for _, suf := range normSuffixes(c.Norm) {
				out = append(out, ParamShape{Name: normName(i) + suf, Rows: 1, Cols: s.Out})
			}
		}
		for _, p := range c.resParams(s) {
			out = append(out, ParamShape{Name: resName(i) + p.Suffix, Rows: p.Rows, Cols: p.Cols, Weight: p.Weight})
		}
	}
	return append(out, c.jkParams()...), nil
}

// normSuffixes is the parameter names of a normalisation norm after its
// prefix (none without normalisation).
func normSuffixes(norm string) []string {
	switch norm {
	case "layer":
		return []string{".weight", ".bias"}
	case "batch":
		return []string{".weight", ".bias", ".running_mean", ".running_var"}
	}
	return nil
}

// normName is the name prefix of the LayerNorm after hidden layer i.
func normName(i int) string { return fmt.Sprintf("norm%d", i) }

// Steps is hyperparameter k of the model of c, its propagation steps (0
// for a model without steps).
func (c Config) Steps() int {
	k, _ := c.HyperValue("k")
	return int(k)
}

// Teleport is hyperparameter alpha of the model of c (0 for a model
// without one).
func (c Config) Teleport() float64 {
	a, _ := c.HyperValue("alpha")
	return a
}

// TrainEps reports whether the model of c learns GIN's ε (hyperparameter
// train-eps).
func (c Config) TrainEps() bool {
	e, _ := c.HyperValue("train-eps")
	return e != 0
}

// LayerNormEps is the ε of the model's LayerNorms (NewLayerNorm).
const LayerNormEps = 1e-5

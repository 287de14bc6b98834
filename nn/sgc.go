package nn

// SGC is the simplified graph convolution of Wu et al. (ICML 2019; PyG
// SGConv): K steps of Â, then one linear layer,
//
//	out = Â^K·X·W + b,
//
// a GCNLayer of K steps with torch.nn.Linear's initialisation (uniform in
// ±1/sqrt(In), weight and bias). With Layers > 1 such layers are stacked
// with the Model's hidden stages between them; the model of the paper has
// one layer.

// sgcHypers are SGC's hyperparameters.
var sgcHypers = []Hyper{stepsHyper(2)}

// stepsHyper declares K, the propagation steps, with default k (sgc,
// appnp).
func stepsHyper(k int) Hyper {
	return Hyper{Name: "k", Default: float64(k), Min: 1, Max: MaxSteps, Int: true, Help: "propagation steps K"}
}

// sgcPlan declares an SGC layer: W (a weight) and b.
func sgcPlan(s LayerShape) LayerPlan {
	bound := linearBound(s.In)
	return LayerPlan{
		Params: []ParamSpec{
			{Suffix: ".lin.weight", Rows: s.In, Cols: s.Out, Bound: bound, Weight: true},
			{Suffix: ".lin.bias", Rows: 1, Cols: s.Out, Bound: bound}},
		Cost: linearPropCost(s.Op, s.In, s.Out, s.steps(), false),
		Mem:  linearPropMem(s.In, s.Out, s.steps())}
}

// buildSGC builds an SGC layer: a GCNLayer of K steps.
func buildSGC(s LayerShape, ps []*Param) Conv { return newGCN(s, ps, s.steps()) }

// steps is hyperparameter k of layer s's model (0 where it takes none).
func (s LayerShape) steps() int { return int(s.Hyper["k"]) }

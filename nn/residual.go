package nn

import (
	"fmt"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/field"
)

// Residual (skip) connections (Config.Residual; DGL's residual=True, the
// "res" block of PyG's DeepGCNLayer without its pre-activation order):
// every hidden layer adds its input to its activation before the dropout,
//
//	h_{i+1} = dropout(ReLU([norm](conv_i(h_i))) + R_i(h_i))
//
// R_i is the identity where the layer's input and output widths match
// (every hidden layer but the first, and the first when In = Hidden), and
// a learned linear projection without bias where they do not:
// res{i}.weight (In_i × Hidden, torch.nn.Linear's initialisation; PyG
// Linear(bias=False) holds it transposed). The output convolution has no
// skip; with jumping knowledge every convolution is hidden and has one.
// Models run it through the separate-pass body of jk.go.

// residual reports whether layer i of c's model adds a skip connection.
func (c Config) residual(i int) bool {
	return c.Residual && (i < c.Layers-1 || c.jumping())
}

// validateResidual checks Config.Residual against model m: a pipeline
// row without attention.
func (c Config) validateResidual(m modelKind) error {
	if c.Residual && (m.body != nil || m.op == OpAttention) {
		return field.Errorf("nn.Config.Residual", "%s has no residual connections (they take gcn, sage, gin, sgc, appnp)", m.name)
	}
	return nil
}

// resParams is the shape of the projection of layer s of c's model (none
// where the layer has no skip or its widths match).
func (c Config) resParams(s LayerShape) []ParamSpec {
	if !c.residual(s.Index) || s.In == s.Out {
		return nil
	}
	return []ParamSpec{{Suffix: ".weight", Rows: s.In, Cols: s.Out, Bound: linearBound(s.In), Weight: true}}
}

// resName is the name prefix of layer i's projection.
func resName(i int) string { return fmt.Sprintf("res%d", i) }

// skip is a hidden layer's residual connection: w nil for the identity.
type skip struct {
	w  *Param
	dh *dense.Matrix // the input gradient through the skip, until the layer's backward adds it
}

// forward adds R(h) to z (the activation, h's rows).
func (s *skip) forward(pool *arena, h, z *dense.Matrix) {
	if s.w == nil {
		dense.Add(z, h)
		return
	}
	pool.gemm(false, false, 1, h, s.w.values(), 1, z)
}

// backward takes dz = dL/d(activation + R(h)) before the activation's
// backward overwrites it: the projection's gradient hᵀ·dz, and with
// wantInputGrad the input gradient through the skip (dz, or dz·Wᵀ), held
// until addInputGrad.
func (s *skip) backward(pool *arena, h, dz *dense.Matrix, wantInputGrad bool) {
	if s.w != nil {
		pool.gemm(true, false, 1, h, dz, 0, s.w.grad())
	}
	if !wantInputGrad {
		return
	}
	dh := pool.lend(&s.dh, dz.Rows, h.Cols)
	if s.w == nil {
		copy(dh.Data, dz.Data)
		return
	}
	pool.gemm(false, true, 1, dz, s.w.values(), 0, dh)
}

// addInputGrad adds the skip's input gradient to gx, the convolution's,
// and gives its buffer back.
func (s *skip) addInputGrad(pool *arena, gx *dense.Matrix) {
	if s.dh == nil {
		return
	}
	dense.Add(gx, s.dh)
	pool.reclaim(&s.dh)
}

// ResidualCost is the cost schedule of layer i's skip connection in the
// model of c (empty where it has none), per row: forward the activation
// copied into the sum (8 bytes a value), then the input added (12 bytes)
// or its projection multiplied in; backward the gradient through the skip
// (a copy, or the projection's two products) and its sum into the
// convolution's input gradient (12 bytes a value of the input).
func (c Config) ResidualCost(i int) LayerCost {
	if !c.residual(i) {
		return LayerCost{}
	}
	in, h := c.Hidden, c.Hidden
	if i == 0 {
		in = c.In
	}
	lc := LayerCost{Forward: []CostStep{elem(8, h), elem(12, h)}, Backward: []CostStep{elem(8, h), elem(12, h)}}
	if in != h {
		lc.Forward[1] = gemm("nn", in, h)
		lc.Backward = []CostStep{gemm("tn", in, h), gemm("nt", h, in), elem(12, in)}
	}
	if i == 0 { // the model's input gradient is not wanted: only the projection's weight gradient
		lc.Backward = lc.Backward[:0]
		if in != h {
			lc.Backward = append(lc.Backward, gemm("tn", in, h))
		}
	}
	return lc
}

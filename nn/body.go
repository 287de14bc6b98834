package nn

import "github.com/supergcn/supergcn/dense"

// body is a model's own architecture over the parameters its table row's
// plan declares layer by layer (modelKind.body), for models that are not
// Model's pipeline of convolutions (a layer that reads the initial
// representation, skip connections). Model.Forward and Backward check the
// shapes, count the dropout step and hand the pass to the body; the body
// takes its buffers from the Model's pool and its dropout seeds from seed
// (a site number per dropout, the same sites every step).
type body interface {
	forward(p Pass, op Operator, x *dense.Matrix, seed func(site int) uint64) (*dense.Matrix, error)
	// backward sets every parameter's G from dlogits (which it may
	// overwrite) and returns dL/dx when wantInputGrad.
	backward(p Pass, op Operator, dlogits *dense.Matrix, wantInputGrad bool) (*dense.Matrix, error)
	lastHidden() *dense.Matrix // the input of the output layer in the last Forward
	setPool(a *arena)
	release()          // every buffer of the last Forward and Backward
	setDecay(all bool) // the parameters' weight decay (Model.SetDecayAll)
}

package nn

import (
	"math"
	"math/rand/v2"

	"github.com/supergcn/supergcn/dense"
)

// Param is one learnable tensor: its values W, its gradient G (same length,
// overwritten by each Backward) and whether the optimiser applies weight
// decay to it. Weight matrices are stored row-major In×Out (the transpose of
// torch.nn.Linear's Out×In weight), so a layer computes X·W.
type Param struct {
	Name       string
	W, G       []float32
	Decay      bool
	DecayRate  float64 // with Decay: this rate instead of the optimiser's weight decay (0: the optimiser's)
	Rows, Cols int     // shape of W (Rows×Cols; vectors are 1×n)
	weight     bool    // a weight matrix (ParamSpec.Weight): decayed in the first layer by default
	buffer     bool    // a statistic kept with the parameters (BatchNorm's running ones): no gradient, never decayed
}

// newParam returns a zeroed rows×cols parameter.
func newParam(name string, rows, cols int) *Param {
	return &Param{Name: name, Rows: rows, Cols: cols,
		W: make([]float32, rows*cols), G: make([]float32, rows*cols)}
}

// values views W as a matrix (aliasing the storage).
func (p *Param) values() *dense.Matrix { return &dense.Matrix{Rows: p.Rows, Cols: p.Cols, Data: p.W} }

// grad views G as a matrix (aliasing the storage).
func (p *Param) grad() *dense.Matrix { return &dense.Matrix{Rows: p.Rows, Cols: p.Cols, Data: p.G} }

// uniform fills w with values drawn uniformly from [-bound, bound), in index
// order, so the same generator state gives the same values on every process.
func uniform(w []float32, bound float64, r *rand.Rand) {
	for i := range w {
		w[i] = float32(bound * (2*r.Float64() - 1))
	}
}

// glorotBound is the Glorot/Xavier-uniform bound sqrt(6/(fanIn+fanOut))
// (PyG's glorot, used by GCNConv).
func glorotBound(fanIn, fanOut int) float64 { return math.Sqrt(6 / float64(fanIn+fanOut)) }

// linearBound is torch.nn.Linear's default bound 1/sqrt(fanIn), for both the
// weight (kaiming_uniform with a=sqrt(5)) and the bias (PyG's Linear, used by
// SAGEConv, does the same).
func linearBound(fanIn int) float64 { return 1 / math.Sqrt(float64(fanIn)) }

package exchange

import "github.com/supergcn/supergcn/nn"

// SumFloat64 sums x over the ranks, in place (nn.Reducer: the statistics
// of batch normalisation over the whole graph).
func (p *Propagator) SumFloat64(x []float64) error { return p.c.AllreduceSumF64(x) }

var _ nn.Reducer = (*Propagator)(nil)

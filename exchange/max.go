package exchange

import (
	"fmt"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
)

// The max operator (nn.OpMax, an nn.MaxAggregator) runs on the flat
// exchange's plan with the maximum in place of the sum: the maximum is
// associative, so a pre-aggregated cut edge's sender ships, per destination,
// the element-wise maximum over its cover edges (a partial maximum), and a
// post-aggregated source goes as its raw row, as for the sums:
//
//	Forward:  send = max_S(x) (arg: the local source of every value);
//	          all-to-all; out = max_A(x) (arg: a local node);
//	          out = max(out, max_H(recv)) (arg: Rows() + receive row)
//	Backward: back[r] = gout routed to receive row r; reverse all-to-all;
//	          gx = gout routed to the local nodes; gx += recv routed through
//	          the send arguments
//
// Every gradient value thus goes to the rank whose row won and there to
// the arg-max source. The arguments cost one int32 per value of every owned
// row and of every sent row, per layer (kept from Forward to Backward).
// Among equal values the first one met wins: the local in-edges in order,
// then the received rows in the halo's order (see nn.MaxAggregator on ties).
// A codec (quantised rows) quantises the partial maxima and raw rows as it
// does the sums' rows; the receiver takes the maximum of the decoded rows,
// and the backward rows (mostly zeros: only winning values carry a
// gradient) go through the backward codec.

// maxLayer is what one layer's MaxForward keeps for its MaxBackward.
type maxLayer struct {
	arg, sarg []int32 // arg max of the owned rows and of the send-buffer rows
	w         int     // width of the forward pass
}

// maxFlat is the flat pattern of an OpMax operator.
func (p *Propagator) maxFlat(op string) (*flat, error) {
	f, ok := p.pat.(*flat)
	if p.kind != nn.OpMax || !ok {
		return nil, fmt.Errorf("exchange: %s on a %s operator", op, p.kind)
	}
	return f, nil
}

// MaxForward implements nn.MaxAggregator.
func (p *Propagator) MaxForward(ps nn.Pass, x, out *dense.Matrix) error {
	f, err := p.maxFlat("MaxForward")
	if err != nil {
		return err
	}
	if err := nn.CheckMax(p.n, x, out); err != nil {
		return err
	}
	if p.maxes == nil {
		p.maxes = map[int]*maxLayer{}
	}
	l := p.maxes[ps.Layer]
	if l == nil {
		l = &maxLayer{}
		p.maxes[ps.Layer] = l
	}
	w := x.Cols
	t := p.c.Wtime()
	f.resize(w)
	l.w, l.arg, l.sarg = w, nn.ResizeArgs(l.arg, p.n*w), nn.ResizeArgs(l.sarg, f.sbuf.Rows*w)
	f.send.ApplyMax(x, f.sbuf, l.sarg, 0, false)
	p.lap(t, &p.stats.AggrSeconds)
	err = p.overlapPosted(func() { p.local.ApplyMax(x, out, l.arg, 0, false) }, func(done <-chan struct{}) error {
		return f.move(p, ps, false, done)
	})
	if err != nil {
		return fmt.Errorf("exchange: forward: %w", err)
	}
	p.finishPass(&p.stats.Forwards, func() { f.halo.ApplyMax(f.rbuf, out, l.arg, int32(p.n), true) })
	return nil
}

// MaxBackward implements nn.MaxAggregator.
func (p *Propagator) MaxBackward(ps nn.Pass, gout, gx *dense.Matrix) error {
	f, err := p.maxFlat("MaxBackward")
	if err != nil {
		return err
	}
	l := p.maxes[ps.Layer]
	if err := nn.CheckMaxGrad(p.n, maxWidth(l), l != nil, ps.Layer, gout, gx); err != nil {
		return err
	}
	t := p.c.Wtime()
	f.resize(l.w)
	f.halo.ScatterMax(gout, l.arg, int32(p.n), f.rbuf, false)
	p.lap(t, &p.stats.AggrSeconds)
	err = p.overlapPosted(func() { p.local.ScatterMax(gout, l.arg, 0, gx, false) }, func(done <-chan struct{}) error {
		return f.move(p, ps, true, done)
	})
	if err != nil {
		return fmt.Errorf("exchange: backward: %w", err)
	}
	p.finishPass(&p.stats.Backwards, func() { f.send.ScatterMax(f.sbuf, l.sarg, 0, gx, true) })
	return nil
}

// maxWidth is the width of l's forward pass (0 without one).
func maxWidth(l *maxLayer) int {
	if l == nil {
		return 0
	}
	return l.w
}

var _ nn.MaxAggregator = (*Propagator)(nil)

// maxExchange is the exchange the max operator runs for the requested one
// (a ParseExchange result): the flat one, which "" chooses; the two-level
// patterns sum their node-pair rows and are refused, as are edge weights
// (PyG's max aggregation takes none).
func maxExchange(s *partition.Shard, exch string) (string, error) {
	if s.Weighted() {
		return "", fmt.Errorf("exchange: rank %d: the max operator (SAGE max and pool) does not use edge weights: drop them (dataset.Source.IgnoreWeights)", s.Rank)
	}
	if exch != "" && exch != ExchangeFlat {
		return "", fmt.Errorf("exchange: the max operator (SAGE max and pool) runs the %s exchange, not %s", ExchangeFlat, exch)
	}
	return ExchangeFlat, nil
}

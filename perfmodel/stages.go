package perfmodel

import (
	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/quant"
)

// An exchange pattern is predicted from its stage list: the all-to-alls
// one exchange (one layer, one direction) runs in order, each with what
// it moves and what aggregation work surrounds it. predictor.exchange
// times any pattern's list; a pattern is a function here that builds its
// lists from the partition's volumes or its plan's (Config.Staged), and a
// line of patternOf.

// transfer is a set of messages posted together.
type transfer struct {
	msgs []exchange.Message // as the forward pass sends them; the backward pass sends each the other way
	wire quant.Wire
	// inter: messages between ranks of different nodes travel the
	// network (on a multi-node network); the others are copies between
	// ranks of one node.
	inter bool
}

// stage is one all-to-all of an exchange: its transfers move at once.
// The rank's driver encodes the stage's send rows just before its post
// (the first stage's before the exchange's, beside the local product),
// moves them and decodes the received rows just after.
type stage struct {
	transfers []transfer
	// slowest: every rank's stage lasts as long as its slowest rank's
	// transfers (the driver waits for the stage to end before the next);
	// otherwise each rank's own.
	slowest bool
	// floor: the stage's intra-node copies take at least their time
	// alone, whatever the sharing of the cores with the local product.
	floor bool
	// written: the rows the stage sends are written by the send product
	// before the exchange's post (one row gather a row).
	written bool
	// halo: the rows the stage receives are the halo rows, which pre
	// aggregation scatter-adds after the exchange.
	halo bool
	// fold is, per rank, the rows the driver aggregates after the stage
	// and before the next one (nil: none): a scatter-add each with
	// foldAdd (backward), else a row gather.
	fold    []int64
	foldAdd bool
}

// pattern is an exchange pattern's stage list for one exchange at wire
// (the role's; the Intra wire is derived from it), in the order the walk's
// direction runs them.
type pattern func(wire quant.Wire, backward bool) []stage

// patternOf is exchange pattern x's stage lists (exchange.Exchanges, as
// Predict resolves Config.Exchange) on p's volumes and configuration: a
// staged pattern's (exchange.Staged) from its Config.Staged volume, any
// other's from the partition's rank pairs.
func patternOf(x string, p *predictor) pattern {
	if exchange.Staged(x) {
		return twoLevelStages(p)
	}
	return flatStages(p)
}

// flatStages is exchange's flat exchange: one all-to-all of every ordered
// rank pair's rows in the Config.Mode (the partition's volumes), at the
// Intra wire between ranks of one node (all of them on a single-node
// network) and at wire between nodes; each rank's transfer lasts its own
// time. Every row sent is written by the send product; every row received
// is a halo row.
func flatStages(p *predictor) pattern {
	return flatStagesOf(p, func(c exchange.RowCounts) int64 { return c.Of(p.cfg.Mode) })
}

// flatStagesOf is flatStages with the rows of each pair from its counts.
func flatStagesOf(p *predictor, rowsOf func(exchange.RowCounts) int64) pattern {
	var same, other []exchange.Message
	for to := range p.vols {
		for _, pe := range p.vols[to].Recv {
			rows := rowsOf(pe.Counts)
			if rows == 0 {
				continue
			}
			m := exchange.Message{From: pe.From, To: to, Rows: rows}
			if p.net.Single || pe.From/p.k == to/p.k {
				same = append(same, m)
			} else {
				other = append(other, m)
			}
		}
	}
	return func(wire quant.Wire, _ bool) []stage {
		return []stage{{transfers: []transfer{
			{msgs: same, wire: p.cfg.Wire.IntraFor(wire)},
			{msgs: other, wire: wire, inter: true},
		}, written: true, halo: true}}
	}
}

// twoLevelStages is the two-level exchange of Config.Staged: three
// all-to-alls in order (reversed, with the messages reversed, backward):
// gather inside the node at the Intra wire, between nodes at wire,
// scatter inside the node. Each stage ends at its slowest rank.
//
// The aggregation work is the exchange's own (exchange.forwardTwoLevel,
// backwardTwoLevel): forward, the send products S1·xs and S2x·xs write
// the rows the rank sends in the gather and the inter-node stage before
// the post; backward, Hᵀ·g writes the three receive buffers, every row
// the rank sends in the three stages. Between the stages the driver
// folds: after the first, forward S2r adds the partial sums received
// into the partial rows (a gather entry each), backward S3ᵀ adds the rows
// received back from the scatter stage into the inter-node rows (a
// scatter-add each); after the second, forward S3 copies the rows
// forwarded in the scatter stage, backward S2rᵀ adds the partial rows'
// gradients into the partial sums. The halo rows are post-aggregated
// (hybrid mode only), so no stage's rows are scatter-added after.
func twoLevelStages(p *predictor) pattern {
	st := p.cfg.Staged
	partial := p.partialSums(st.Gather)
	forwarded := make([]int64, len(p.vols)) // rows each rank forwards in the scatter stage
	for _, m := range st.Scatter {
		forwarded[m.From] += m.Rows
	}
	return func(wire quant.Wire, backward bool) []stage {
		intra := p.cfg.Wire.IntraFor(wire)
		one := func(msgs []exchange.Message, w quant.Wire, inter bool) stage {
			return stage{transfers: []transfer{{msgs: msgs, wire: w, inter: inter}}, slowest: true, floor: true, written: true}
		}
		s := []stage{one(st.Gather, intra, false), one(st.Inter, wire, true), one(st.Scatter, intra, false)}
		if backward {
			s[0], s[2] = s[2], s[0]
			s[0].fold, s[1].fold = forwarded, partial
			s[0].foldAdd, s[1].foldAdd = true, true
		} else {
			s[2].written = false
			s[0].fold, s[1].fold = partial, forwarded
		}
		return s
	}
}

// partialSums is, per rank, the partial sums it receives in a two-level
// exchange's gather stage (forward): its Gather rows less the flat rows of
// its same-node peers, which Gather also holds (exchange.NodeVolumesOf
// puts both there).
func (p *predictor) partialSums(gather []exchange.Message) []int64 {
	n := make([]int64, len(p.vols))
	for _, m := range gather {
		n[m.To] += m.Rows
	}
	for r := range p.vols {
		for _, pe := range p.vols[r].Recv {
			if pe.From/p.k == r/p.k {
				n[r] -= pe.Counts.Hybrid
			}
		}
		n[r] = max(n[r], 0)
	}
	return n
}

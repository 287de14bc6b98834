package perfmodel

import (
	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/quant"
)

// stageCost is one stage's per-rank rows and seconds.
type stageCost struct {
	sent, recv []int64
	enc, dec   []float64 // codec seconds on the rank's threads alone
	copy       []float64 // intra-node transfer seconds (the driver's copies)
	wire       []float64 // network seconds (the driver waits)
}

// exchange adds one boundary exchange of rows of width values at wire
// between nodes and at the Intra wire between ranks of one node, as the
// configured pattern's stage list (patternOf) moves them: forward rows
// travel from the owner of a source to the rank that aggregates it,
// backward (gradient) rows the other way. The phase before it ends at
// the slowest rank (the ranks agree on the method with a small collective
// first); then each rank aggregates (local, pre-aggregated and halo
// products), encodes, moves and decodes its rows stage by stage.
func (p *predictor) exchange(width int, wire quant.Wire, backward, training bool) {
	ranks := len(p.vols)
	stages := p.stages(wire, backward)
	if p.target {
		stages = p.stagesV2(wire, backward)
	}
	cs := make([]stageCost, len(stages))
	for si := range stages {
		cs[si] = p.stageCost(&stages[si], width, backward, training)
	}
	// Scale, fill the send buffers, encode the first stage and post:
	// before the exchange's synchronisation point.
	local, after, done := make([]float64, ranks), make([]float64, ranks), make([]float64, ranks)
	for r := range p.vols {
		var written, halo int64
		for si, s := range stages {
			if s.written {
				written += cs[si].sent[r]
			}
			if s.halo {
				halo += cs[si].recv[r]
			}
		}
		var before float64
		before, local[r], after[r] = p.exchangeWork(r, width, backward, written, halo)
		p.addAggr(r, before)
		done[r] = p.sharedEncode(r, cs[0].enc[r], local[r])
	}
	p.sync()
	p.addCollective(ranks)
	for r := range p.vols {
		p.addStages(r, stages, cs, width, local[r], done[r], after[r])
	}
	p.sync()
}

// stageCost counts stage s's bytes into the walk's totals and times its
// transfers for every rank: a rank's transfer over the intra-node link
// is its messages and its busiest direction's bytes; over the network,
// its messages and its node's inter-node bytes (the busiest direction, or
// the busiest node sending to it). With s.slowest every rank takes the
// slowest rank's time.
func (p *predictor) stageCost(s *stage, width int, backward, training bool) stageCost {
	ranks := len(p.vols)
	c := stageCost{sent: make([]int64, ranks), recv: make([]int64, ranks), enc: make([]float64, ranks),
		dec: make([]float64, ranks), copy: make([]float64, ranks), wire: make([]float64, ranks)}
	for _, t := range s.transfers {
		sent, recv, secs, network := p.transferCost(t, width, backward, training)
		for r := range ranks {
			c.sent[r] += sent[r]
			c.recv[r] += recv[r]
			c.enc[r] += p.rates.QuantSeconds(sent[r], width, t.wire, false)
			c.dec[r] += p.rates.QuantSeconds(recv[r], width, t.wire, true)
		}
		if s.slowest {
			m := 0.0
			for _, x := range secs {
				m = max(m, x)
			}
			for r := range secs {
				secs[r] = m
			}
		}
		dst := c.copy
		if network {
			dst = c.wire
		}
		for r := range ranks {
			dst[r] = max(dst[r], secs[r])
		}
	}
	return c
}

// transferCost counts transfer t's bytes into the walk's totals and
// returns every rank's rows sent and received and its transfer seconds,
// and whether they are network time.
func (p *predictor) transferCost(t transfer, width int, backward, training bool) (sent, recv []int64, secs []float64, network bool) {
	ranks := len(p.vols)
	sent, recv, secs = make([]int64, ranks), make([]int64, ranks), make([]float64, ranks)
	out, in := make([]float64, ranks), make([]float64, ranks)
	msgOut, msgIn := make([]int64, ranks), make([]int64, ranks)
	nodeOut, nodeIn := make([]float64, p.nodes), make([]float64, p.nodes)
	crosses := func(m exchange.Message) (from, to int, x bool) {
		from, to = m.From, m.To
		if backward {
			from, to = to, from
		}
		return from, to, t.inter && !p.net.Single && from/p.k != to/p.k
	}
	for _, m := range t.msgs {
		from, to, x := crosses(m)
		b := t.wire.Bytes(m.Rows, width)
		msgOut[from]++
		msgIn[to]++
		sent[from] += m.Rows
		recv[to] += m.Rows
		if x {
			nodeOut[from/p.k] += float64(b)
			nodeIn[to/p.k] += float64(b)
			p.interBytes += float64(b)
		} else {
			out[from] += float64(b)
			in[to] += float64(b)
			if training {
				p.intraBytes += b
			}
		}
		p.allBytes += float64(b)
		if training {
			p.trainBytes += b
		} else {
			p.evalBytes += b
		}
	}
	network = t.inter && !p.net.Single && p.nodes > 1
	busiest := make([]float64, ranks) // the busiest node sending to the rank
	for _, m := range t.msgs {
		if from, to, x := crosses(m); x {
			busiest[to] = max(busiest[to], nodeOut[from/p.k])
		}
	}
	for r := range ranks {
		if network {
			n := r / p.k
			secs[r] = p.net.Inter.Seconds(max(msgOut[r], msgIn[r]), max(nodeOut[n], nodeIn[n], busiest[r]))
		} else {
			secs[r] = p.intra.Seconds(max(msgOut[r], msgIn[r]), max(out[r], in[r]))
		}
	}
	return sent, recv, secs, network
}

// addStages adds to rank r the part of an exchange after the post: the
// stages one after another on the exchange's driver, beside the local
// product (local seconds, done of them already run beside the first
// stage's encoding, sharedEncode), then what is left of the local product
// and after seconds of aggregation (cut edges, received rows, scaling).
//
// The components are attributed as the exchange's timers attribute them
// (exchange.Propagator: the driver's wall time; the local product runs on
// its own goroutine): comm_s the transfers' wall time, quant_s the
// codec's, aggr_s the driver's folds between stages, what is left of the
// local product once the driver is done, and after. The driver's copies
// (on its one thread), codec (on the rank's threads) and folds (on its
// one thread) share the rank's cores with the local product while any of
// it is left (sharedWall); a stage's network time (the driver sleeps
// between polls) leaves the local product the cores to itself. A stage
// moving copies and network rows at once lasts the longer of the two.
func (p *predictor) addStages(r int, stages []stage, cs []stageCost, width int, local, done, after float64) {
	l := local - done
	var comm, agg, q float64
	shared := func(cpu float64, d int) float64 {
		w, left := p.sharedWall(cpu, l, d)
		l = left
		return w
	}
	for si, s := range stages {
		c := &cs[si]
		if prev := stages[max(si-1, 0)]; si > 0 && prev.fold != nil {
			f := p.rates.RowSeconds(prev.fold[r], width, prev.foldAdd, prev.foldAdd)
			agg += shared(f, 1)
			p.idealWork += f
		}
		enc := c.enc[r]
		if si == 0 {
			enc = 0 // encoded before the post (sharedEncode)
		}
		q += shared(enc, p.cfg.Threads)
		cw := shared(c.copy[r], 1)
		tr := max(c.wire[r], cw)
		l -= min(l, tr-cw) // the local product runs alone while the rows are on the wire
		if s.floor {
			tr = max(tr, c.copy[r])
		}
		comm += tr
		q += shared(c.dec[r], p.cfg.Threads)
	}
	p.idealWork += local + after
	p.comm[r] += comm
	p.quant[r] += q
	p.aggr[r] += agg + l + after
	p.local[r] += l
	p.pending[r] += comm + q + agg + l + after
}

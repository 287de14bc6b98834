package perfmodel

import (
	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/quant"
	"github.com/supergcn/supergcn/task"
)

// The link task's pair exchange (Config.Pairs, task.PairVolume): after the
// training forward pass every rank fetches the rows of its pairs' second
// endpoints from their owners, scores the pairs (a dot product: both rows
// read, 8 bytes a value) and, in the loss, sends the rows' gradients back
// (both rows' gradients written, 16 bytes a value); an evaluation fetches
// each list's rows as many times as the task does (PairList.Fetches),
// scores them and gathers the scores on rank 0 (8 bytes a pair). Each
// transfer is one flat all-to-all of rows of the model's output width, at
// the role's wire between nodes and the Intra rule's inside them, as
// exchange.Propagator.MoveRows moves them. Not timed: the pair plan's own
// all-to-all of row ids each epoch (8 bytes a fetched row) and rank 0's
// sort of the scores for ROC-AUC.

const (
	elemPairScore = 8  // a pair's two rows read, per value
	elemPairGrad  = 16 // and their gradients written
)

// pairTraining walks the training step's pair rows forward and scores
// them (backward false) or their gradients back (true); nothing without
// Config.Pairs.
func (p *predictor) pairTraining(backward bool) {
	v := p.cfg.Pairs
	if v == nil {
		return
	}
	wire, elem := p.cfg.Wire[quant.Forward], float64(elemPairScore)
	if backward {
		wire, elem = p.cfg.Wire[quant.Backward], elemPairGrad
	}
	if !backward {
		p.pairRows(&v.Train, wire, false, true)
	}
	p.pairScore(v.Train.Pairs, elem)
	if backward {
		p.pairRows(&v.Train, wire, true, true)
	}
}

// pairEval walks an evaluation's pair lists and the gather of their
// scores on rank 0.
func (p *predictor) pairEval() {
	v := p.cfg.Pairs
	if v == nil {
		return
	}
	var scores int64
	for i := range v.Eval {
		l := &v.Eval[i]
		for range l.Fetches {
			p.pairRows(l, p.cfg.Wire[quant.Eval], false, false)
			p.pairScore(l.Pairs, elemPairScore)
		}
		for r, n := range l.Pairs {
			if r != 0 {
				scores += n
			}
		}
	}
	link := p.intra
	if !p.net.Single && p.nodes > 1 {
		link = p.net.Inter
	}
	s := link.Seconds(int64(len(p.vols)-1), 8*float64(scores))
	p.comm[0] += s
	p.pending[0] += s
	p.sync()
}

// pairScore adds the scoring of every rank's pairs: bytes a value of the
// output width.
func (p *predictor) pairScore(pairs []int64, bytes float64) {
	for r, n := range pairs {
		p.addDense(r, p.rates.ElemSeconds(bytes*float64(n)*float64(p.cfg.Model.Classes)))
	}
}

// pairRows adds one all-to-all of l's rows (backward: their gradients, the
// messages reversed) at wire: the ranks meet at its start, encode, move
// and decode.
func (p *predictor) pairRows(l *task.PairList, wire quant.Wire, backward, training bool) {
	var same, other []exchange.Message
	for _, m := range l.Msgs {
		if p.net.Single || m.From/p.k == m.To/p.k {
			same = append(same, m)
		} else {
			other = append(other, m)
		}
	}
	st := stage{transfers: []transfer{{msgs: same, wire: p.cfg.Wire.IntraFor(wire)}, {msgs: other, wire: wire, inter: true}}}
	before := p.trainBytes + p.evalBytes
	c := p.stageCost(&st, p.cfg.Model.Classes, backward, training)
	if moved := p.trainBytes + p.evalBytes - before; training {
		p.pairBytes += moved
	} else {
		p.evalPairBytes += moved
	}
	p.sync()
	p.addCollective(len(p.vols))
	for r := range p.vols {
		p.addQuant(r, c.enc[r]+c.dec[r])
		t := max(c.copy[r], c.wire[r])
		p.comm[r] += t
		p.pending[r] += t
	}
	p.sync()
}

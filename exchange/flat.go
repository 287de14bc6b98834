package exchange

import (
	"fmt"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
)

// flat is the flat exchange: one all-to-all of every ordered rank pair's
// rows (the pair's own plan, SplitCut), rows to ranks of this rank's node
// at the Intra codec, the others at the pass's (peerCodecs).
//
//	Forward:  send = S·xs; all-to-all; out += H·recv
//	Backward: back = Hᵀ·g; reverse all-to-all; gx += Sᵀ·recv
type flat struct {
	c                comm.Comm
	send, halo       *aggr.Op
	sendOff, recvOff []int
	sameNode         []bool // sameNode[q]: world rank q is another rank of this rank's node
	shared           bool   // some node has several ranks
	sbuf, rbuf       *dense.Matrix
}

// newFlat plans the flat exchange of shard s (collective).
func newFlat(s *partition.Shard, c comm.Comm, e *aggr.Engine, mode Mode, nodes *comm.Nodes) (pattern, PlanStats, error) {
	pl, err := buildPlan(s, c, mode)
	if err != nil {
		return nil, PlanStats{}, err
	}
	f := &flat{c: c, send: e.Prepare(pl.send), halo: e.Prepare(pl.halo), sendOff: pl.sendOff, recvOff: pl.recvOff,
		sameNode: sameNodeRanks(nodes, c.Rank()), shared: sharedNodes(nodes)}
	return f, pl.stats, nil
}

func (f *flat) describe(plan PlanStats) string { return describeFlat(plan) }

// describeFlat is a flat plan's one-line summary: rows per layer under
// every mode.
func describeFlat(plan PlanStats) string {
	t := plan.TotalSent()
	mode, _ := ParseMode(plan.Mode)
	return fmt.Sprintf("sends %d rows/layer (pre %d, post %d, hybrid %d)", t.Of(mode), t.Pre, t.Post, t.Hybrid)
}

// resize shapes the send and receive buffers for rows of width w.
func (f *flat) resize(w int) {
	f.sbuf = dense.Reshape(f.sbuf, f.sendOff[len(f.sendOff)-1], w)
	f.rbuf = dense.Reshape(f.rbuf, f.recvOff[len(f.recvOff)-1], w)
}

func (f *flat) sendForward(xs *dense.Matrix) {
	f.resize(xs.Cols)
	f.send.Apply(xs, f.sbuf, false)
}

func (f *flat) moveForward(d *Propagator, ps nn.Pass, done <-chan struct{}) error {
	return f.move(d, ps, false, done)
}

func (f *flat) addForward(out *dense.Matrix, left []float32) {
	scaledProduct(f.halo, false, f.rbuf, out, left, true)
}

func (f *flat) sendBackward(g *dense.Matrix) {
	f.resize(g.Cols)
	f.halo.ApplyT(g, f.rbuf, false)
}

func (f *flat) moveBackward(d *Propagator, ps nn.Pass, done <-chan struct{}) error {
	return f.move(d, ps, true, done)
}

// move is the one all-to-all of a pass: forward the send buffer's rows to
// the receive buffers, backward the receive-buffer rows back to their
// senders.
func (f *flat) move(d *Propagator, ps nn.Pass, backward bool, done <-chan struct{}) error {
	codecs, stream := d.peerCodecs(ps, backward, f.sameNode)
	tr := &transfer{c: f.c, send: f.sbuf, recv: f.rbuf, sendOff: f.sendOff, recvOff: f.recvOff, codecs: codecs, intra: f.sameNode,
		shared: f.shared, layer: ps.Layer, dir: "forward"}
	if backward {
		tr.send, tr.recv, tr.sendOff, tr.recvOff, tr.dir = f.rbuf, f.sbuf, f.recvOff, f.sendOff, "backward"
	}
	return d.transferRows(tr, ps, stream, done)
}

func (f *flat) addBackward(gx *dense.Matrix, right []float32) {
	scaledProduct(f.send, true, f.sbuf, gx, right, true)
}

package exchange

import (
	"fmt"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
)

// The two-level exchange (Options.Exchange "two-level") moves the cut edges
// between nodes once per node pair (PlanNodePair) in three stages:
//
//	1 gather  (node communicator, fp32): the same-node rank pairs' rows (their
//	          own per-pair plan, as flat) and the partial sums a rank adds to a
//	          partial row that another rank of its node sends;
//	2 inter   (world, through the codec): post rows from their owners, partial
//	          rows (own sources + the gathered partial sums) to their owners;
//	3 scatter (node communicator, fp32): post rows forwarded to the other
//	          ranks of the node that need them.
//
// Per rank, with xs = R∘x:
//
//	s1 = S1·xs; s2 = S2x·xs                           (before the local product starts)
//	r1 ← s1 (stage 1); s2 += S2r·r1; r2 ← s2 (stage 2); s3 = S3·r2; r3 ← s3 (stage 3)
//	out = A_loc·xs + H1·r1 + H2·r2 + H3·r3; out = L∘out
//
// and the backward pass is the transpose, stages in reverse order:
//
//	gr_i = H_iᵀ·g; gs3 ← gr3; gr2 += S3ᵀ·gs3; gs2 ← gr2; gr1 += S2rᵀ·gs2; gs1 ← gr1
//	gx = A_locᵀ·g + S2xᵀ·gs2 + S1ᵀ·gs1; gx = R∘gx
//
// The local product runs on its own goroutine throughout; S2r and S3 (small,
// boundary rows only) run on a one-thread aggregation engine on the
// driver's goroutine between the stages, so they do not wait for the
// engine's pool, busy with the local product.

// Exchange kinds (Options.Exchange).
const (
	ExchangeFlat     = "flat"
	ExchangeTwoLevel = "two-level"
	// ExchangeTwoLevelPaired is two-level with NodePairOptions.Paired: each
	// rank sends to and receives from one rank of every other node.
	ExchangeTwoLevelPaired = "two-level-paired"
)

// ParseExchange checks an Options.Exchange value: "flat", "two-level",
// "two-level-paired", or "" (automatic: two-level when the ranks span more
// than one node and some node has more than one rank, flat otherwise).
func ParseExchange(s string) (string, error) {
	switch s {
	case "", ExchangeFlat, ExchangeTwoLevel, ExchangeTwoLevelPaired:
		return s, nil
	}
	return "", fmt.Errorf("exchange: unknown exchange %q (want flat, two-level or two-level-paired)", s)
}

// chooseExchange resolves "" on the node layout.
func chooseExchange(kind string, nodes *comm.Nodes) string {
	if kind != "" {
		return kind
	}
	big := false
	for _, rs := range nodes.Ranks {
		big = big || len(rs) > 1
	}
	if nodes.NumNodes() > 1 && big {
		return ExchangeTwoLevel
	}
	return ExchangeFlat
}

// twoLevel is the built two-level exchange of one rank.
type twoLevel struct {
	exch         string    // ExchangeTwoLevel or ExchangeTwoLevelPaired
	local        comm.Comm // node communicator
	s1, s2x      opApplier
	s2r, s3      opApplier // small (boundary rows only): on the driver goroutine, a one-thread engine
	h1, h2, h3   opApplier
	s1Off, r1Off []int // node-local peers
	s2Off, r2Off []int // world ranks
	s3Off, r3Off []int // node-local peers

	s1b, r1, s2, r2, s3b, r3 *dense.Matrix
}

// opApplier is the part of aggr.Op the exchange uses.
type opApplier interface {
	Apply(x, out *dense.Matrix, accumulate bool)
	ApplyT(x, out *dense.Matrix, accumulate bool)
}

// tlCSRs is what buildTwoLevel plans; New prepares the CSRs.
type tlCSRs struct {
	s1, s2x, s2r, s3, h1, h2, h3 *graph.CSR
	s1Off, r1Off                 []int
	s2Off, r2Off                 []int
	s3Off, r3Off                 []int
	interRows, intraRows         int64 // rows this rank sends per exchange
}

// csrBuilder appends rows to a CSR.
type csrBuilder struct{ g graph.CSR }

func newBuilder(cols int) *csrBuilder { return &csrBuilder{graph.CSR{NumCols: cols, Ptr: []int64{0}}} }

func (b *csrBuilder) row(idx ...int32) {
	b.g.Idx = append(b.g.Idx, idx...)
	b.g.NumRows++
	b.g.Ptr = append(b.g.Ptr, int64(len(b.g.Idx)))
}

// localIDs maps global ids owned by s to local ids.
func localIDs(global *globalIndex, us []int64) ([]int32, error) {
	out := make([]int32, len(us))
	for i, u := range us {
		j, err := global.localID(u)
		if err != nil {
			return nil, err
		}
		out[i] = j
	}
	return out, nil
}

// parseTwoLevelMessage decodes one two-level plan message (from a rank of
// another node) and calls row for each row this rank contributes, in
// message order: kind 0 post row (ids: the source), kind 1 partial row this
// rank reduces and sends (ids: own sources; ranks: the node peers whose
// partial sums it adds), kind 2 partial sum for another rank's partial row
// (ids: own sources; ranks[0]: the reducing rank). It returns the rows the
// message's sender receives in stage 2.
func parseTwoLevelMessage(m []int64, global *globalIndex, nodes *comm.Nodes, me int, row func(kind int, ids []int32, ranks []int64) error) (int, error) {
	if len(m) < 3 || m[0] < 0 || m[1] < 0 || m[2] < 0 {
		return 0, fmt.Errorf("short or bad message header")
	}
	nPost, nSend, nContr := int(m[0]), int(m[1]), int(m[2])
	body := m[3:]
	take := func(n int64) ([]int64, error) {
		if n < 0 || n > int64(len(body)) {
			return nil, fmt.Errorf("truncated message")
		}
		out := body[:n]
		body = body[n:]
		return out, nil
	}
	peerOK := func(q int64) error {
		if q < 0 || q >= int64(len(nodes.Node)) || nodes.Node[q] != nodes.Node[me] {
			return fmt.Errorf("rank %d is not on this rank's node", q)
		}
		return nil
	}
	post, err := take(int64(nPost))
	if err != nil {
		return 0, err
	}
	for _, u := range post {
		ids, err := localIDs(global, []int64{u})
		if err != nil {
			return 0, err
		}
		if err := row(0, ids, nil); err != nil {
			return 0, err
		}
	}
	for i := 0; i < nSend; i++ {
		hdr, err := take(3)
		if err != nil {
			return 0, err
		}
		srcs, err := take(hdr[1])
		if err != nil {
			return 0, err
		}
		others, err := take(hdr[2])
		if err != nil {
			return 0, err
		}
		ids, err := localIDs(global, srcs)
		if err != nil {
			return 0, err
		}
		for _, q := range others {
			if err := peerOK(q); err != nil {
				return 0, err
			}
		}
		if err := row(1, ids, others); err != nil {
			return 0, err
		}
	}
	for i := 0; i < nContr; i++ {
		hdr, err := take(3)
		if err != nil {
			return 0, err
		}
		srcs, err := take(hdr[2])
		if err != nil {
			return 0, err
		}
		if err := peerOK(hdr[0]); err != nil {
			return 0, err
		}
		ids, err := localIDs(global, srcs)
		if err != nil {
			return 0, err
		}
		if err := row(2, ids, hdr[:1]); err != nil {
			return 0, err
		}
	}
	if len(body) != 0 {
		return 0, fmt.Errorf("%d trailing words", len(body))
	}
	return nPost + nSend, nil
}

// allgatherI64 gives every rank of c every rank's mine (blocks by rank).
func allgatherI64(c comm.Comm, mine []int64) ([][]int64, error) {
	p := c.Size()
	msgs := make([][]int64, p)
	for q := range msgs {
		msgs[q] = mine
	}
	return exchangeMessages(c, msgs)
}

// exchangeMessages sends msgs[q] to rank q (two AlltoallvI64: sizes, then
// words) and returns the message from every rank.
func exchangeMessages(c comm.Comm, msgs [][]int64) ([][]int64, error) {
	p := c.Size()
	var send []int64
	sc, sd := make([]int, p), make([]int, p)
	for q, m := range msgs {
		sd[q] = len(send)
		send = append(send, m...)
		sc[q] = len(m)
	}
	lens := make([]int64, p)
	one, idx := make([]int, p), make([]int, p)
	sizes := make([]int64, p)
	for q := 0; q < p; q++ {
		one[q], idx[q], sizes[q] = 1, q, int64(sc[q])
	}
	if err := c.AlltoallvI64(sizes, one, idx, lens, one, idx); err != nil {
		return nil, fmt.Errorf("exchange: plan sizes: %w", err)
	}
	rc, rd := make([]int, p), make([]int, p)
	total := 0
	for q := 0; q < p; q++ {
		if lens[q] < 0 {
			return nil, fmt.Errorf("exchange: plan size %d from rank %d", lens[q], q)
		}
		rc[q], rd[q] = int(lens[q]), total
		total += rc[q]
	}
	recv := make([]int64, total)
	if err := c.AlltoallvI64(send, sc, sd, recv, rc, rd); err != nil {
		return nil, fmt.Errorf("exchange: plan: %w", err)
	}
	out := make([][]int64, p)
	for q := 0; q < p; q++ {
		out[q] = recv[rd[q] : rd[q]+rc[q]]
	}
	return out, nil
}

func (tl *twoLevel) name() string { return tl.exch }

func (tl *twoLevel) describe(plan PlanStats) string {
	return fmt.Sprintf("sends %d rows/layer between nodes, %d inside its node", plan.InterRows, plan.IntraRows)
}

func (tl *twoLevel) sendForward(xs *dense.Matrix) {
	tl.resize(xs.Cols)
	tl.s1.Apply(xs, tl.s1b, false)
	tl.s2x.Apply(xs, tl.s2, false)
}

// moveForward runs the three stages; between them the driver adds the
// gathered partial sums into the partial rows (S2r) and copies the rows
// it forwards (S3) with the serial engine, beside the local product.
func (tl *twoLevel) moveForward(d *Propagator, ps nn.Pass, done <-chan struct{}) error {
	codec, stream := d.codecFor(ps, false)
	if err := tl.intraStage(d, tl.s1b, tl.r1, tl.s1Off, tl.r1Off, ps, "forward", stream+4, done); err != nil {
		return err
	}
	t := d.c.Wtime()
	tl.s2r.Apply(tl.r1, tl.s2, true)
	d.lap(t, &d.stats.AggrSeconds)
	tr := &transfer{c: d.c, send: tl.s2, recv: tl.r2, sendOff: tl.s2Off, recvOff: tl.r2Off, codecs: uniformCodecs(codec, d.c.Size()),
		layer: ps.Layer, dir: "forward"}
	if err := d.transferRows(tr, ps, stream, done); err != nil {
		return err
	}
	t = d.c.Wtime()
	tl.s3.Apply(tl.r2, tl.s3b, false)
	d.lap(t, &d.stats.AggrSeconds)
	return tl.intraStage(d, tl.s3b, tl.r3, tl.s3Off, tl.r3Off, ps, "forward", stream+8, done)
}

func (tl *twoLevel) addForward(out *dense.Matrix) {
	tl.h1.Apply(tl.r1, out, true)
	tl.h2.Apply(tl.r2, out, true)
	tl.h3.Apply(tl.r3, out, true)
}

func (tl *twoLevel) sendBackward(g *dense.Matrix) {
	tl.resize(g.Cols)
	tl.h1.ApplyT(g, tl.r1, false)
	tl.h2.ApplyT(g, tl.r2, false)
	tl.h3.ApplyT(g, tl.r3, false)
}

// moveBackward is moveForward transposed, the stages in reverse order.
func (tl *twoLevel) moveBackward(d *Propagator, ps nn.Pass, done <-chan struct{}) error {
	codec, stream := d.codecFor(ps, true)
	if err := tl.intraStage(d, tl.r3, tl.s3b, tl.r3Off, tl.s3Off, ps, "backward", stream+8, done); err != nil {
		return err
	}
	t := d.c.Wtime()
	tl.s3.ApplyT(tl.s3b, tl.r2, true)
	d.lap(t, &d.stats.AggrSeconds)
	tr := &transfer{c: d.c, send: tl.r2, recv: tl.s2, sendOff: tl.r2Off, recvOff: tl.s2Off, codecs: uniformCodecs(codec, d.c.Size()),
		layer: ps.Layer, dir: "backward"}
	if err := d.transferRows(tr, ps, stream, done); err != nil {
		return err
	}
	t = d.c.Wtime()
	tl.s2r.ApplyT(tl.s2, tl.r1, true)
	d.lap(t, &d.stats.AggrSeconds)
	return tl.intraStage(d, tl.r1, tl.s1b, tl.r1Off, tl.s1Off, ps, "backward", stream+4, done)
}

func (tl *twoLevel) addBackward(gx *dense.Matrix) {
	tl.s2x.ApplyT(tl.s2, gx, true)
	tl.s1.ApplyT(tl.s1b, gx, true)
}

// resize shapes the stage buffers for rows of width w.
func (tl *twoLevel) resize(w int) {
	k := len(tl.s1Off) - 1
	P := len(tl.s2Off) - 1
	tl.s1b = dense.Reshape(tl.s1b, tl.s1Off[k], w)
	tl.r1 = dense.Reshape(tl.r1, tl.r1Off[k], w)
	tl.s2 = dense.Reshape(tl.s2, tl.s2Off[P], w)
	tl.r2 = dense.Reshape(tl.r2, tl.r2Off[P], w)
	tl.s3b = dense.Reshape(tl.s3b, tl.s3Off[k], w)
	tl.r3 = dense.Reshape(tl.r3, tl.r3Off[k], w)
}

// intraStage moves rows between the ranks of this node (float32, or
// through intraCodec's with random stream stream), counting the bytes in
// IntraBytes (and CommBytes).
func (tl *twoLevel) intraStage(d *Propagator, send, recv *dense.Matrix, sendOff, recvOff []int, ps nn.Pass, dir string, stream uint64, done <-chan struct{}) error {
	codec := d.intraCodec(ps, dir == "backward")
	n := tl.local.Size()
	tr := &transfer{c: tl.local, send: send, recv: recv, sendOff: sendOff, recvOff: recvOff, codecs: uniformCodecs(codec, n),
		intra: everyPeer(n), layer: ps.Layer, dir: dir}
	return d.transferRows(tr, ps, stream, done)
}

// everyPeer marks all n peers (a node communicator's transfer: every
// byte stays inside the node).
func everyPeer(n int) []bool {
	all := make([]bool, n)
	for q := range all {
		all[q] = true
	}
	return all
}

// checkNodes validates a node layout against the communicator.
func checkNodes(nodes *comm.Nodes, c comm.Comm) error {
	if len(nodes.Node) != c.Size() || nodes.Local == nil {
		return fmt.Errorf("exchange: node layout of %d ranks (local communicator %v) for a communicator of %d", len(nodes.Node), nodes.Local != nil, c.Size())
	}
	me := nodes.Node[c.Rank()]
	if nodes.Local.Size() != len(nodes.Ranks[me]) || nodes.Local.Rank() != nodes.LocalIndex(c.Rank()) {
		return fmt.Errorf("exchange: rank %d: node communicator rank %d of %d, layout says %d of %d",
			c.Rank(), nodes.Local.Rank(), nodes.Local.Size(), nodes.LocalIndex(c.Rank()), len(nodes.Ranks[me]))
	}
	return nil
}

// newTwoLevel plans the two-level exchange of shard s (collective on c and
// nodes.Local). The products between the stages run on a one-thread
// engine of e's kernel, on the driver goroutine: the engine's own pool is
// busy with the local product meanwhile.
func newTwoLevel(s *partition.Shard, c comm.Comm, e *aggr.Engine, mode Mode, nodes *comm.Nodes, exch string) (pattern, PlanStats, error) {
	cs, stats, err := buildTwoLevel(s, c, nodes, mode, NodePairOptions{Paired: exch == ExchangeTwoLevelPaired})
	if err := agree(c, err); err != nil {
		return nil, stats, err
	}
	serial, err := aggr.New(1, e.KernelName())
	if err != nil {
		return nil, stats, fmt.Errorf("exchange: %w", err)
	}
	stats.Exchange = exch
	stats.InterRows, stats.IntraRows = cs.interRows, cs.intraRows
	tl := &twoLevel{exch: exch, local: nodes.Local,
		s1: e.Prepare(cs.s1), s2x: e.Prepare(cs.s2x), s2r: serial.Prepare(cs.s2r), s3: serial.Prepare(cs.s3),
		h1: e.Prepare(cs.h1), h2: e.Prepare(cs.h2), h3: e.Prepare(cs.h3),
		s1Off: cs.s1Off, r1Off: cs.r1Off, s2Off: cs.s2Off, r2Off: cs.r2Off, s3Off: cs.s3Off, r3Off: cs.r3Off}
	return tl, stats, nil
}

// appendPlan encodes node A's plan into dst: a, the row counts, then the
// plan's slices (each need and contributor list with its length first).
func appendPlan(dst []int64, a int, pl *NodePairPlan) []int64 {
	dst = append(dst, int64(a), int64(len(pl.Post)), int64(len(pl.Pre)), int64(pl.EdgeCount))
	dst = append(dst, pl.Post...)
	for i := range pl.Post {
		dst = append(dst, int64(pl.PostFrom[i]), int64(pl.PostTo[i]), int64(len(pl.PostNeed[i])))
		for _, r := range pl.PostNeed[i] {
			dst = append(dst, int64(r))
		}
	}
	dst = append(dst, pl.Pre...)
	for i := range pl.Pre {
		dst = append(dst, int64(pl.PreTo[i]), int64(pl.PreFrom[i]), int64(len(pl.PreContr[i])))
		for _, c := range pl.PreContr[i] {
			dst = append(dst, int64(c.Rank), int64(len(c.Src)))
			dst = append(dst, c.Src...)
		}
	}
	return dst
}

// decodePlans decodes the plans appendPlan wrote into plans[a], checking
// that every rank is in [0, p).
func decodePlans(m []int64, plans []*NodePairPlan, p int) error {
	bad := fmt.Errorf("malformed plan message")
	rankOK := func(rs ...int64) bool {
		for _, r := range rs {
			if r < 0 || r >= int64(p) {
				return false
			}
		}
		return true
	}
	take := func(n int64) []int64 {
		if n < 0 || n > int64(len(m)) {
			return nil
		}
		out := m[:n]
		m = m[n:]
		return out
	}
	for len(m) > 0 {
		hdr := take(4)
		if hdr == nil || hdr[0] < 0 || hdr[0] >= int64(len(plans)) || plans[hdr[0]] != nil {
			return bad
		}
		pl := &NodePairPlan{EdgeCount: int(hdr[3])}
		if pl.Post = take(hdr[1]); pl.Post == nil && hdr[1] > 0 {
			return bad
		}
		for range pl.Post {
			h := take(3)
			if h == nil {
				return bad
			}
			need := take(h[2])
			if (need == nil && h[2] != 0) || !rankOK(h[0], h[1]) || !rankOK(need...) {
				return bad
			}
			pl.PostFrom = append(pl.PostFrom, int32(h[0]))
			pl.PostTo = append(pl.PostTo, int32(h[1]))
			n := make([]int32, len(need))
			for i, r := range need {
				n[i] = int32(r)
			}
			pl.PostNeed = append(pl.PostNeed, n)
		}
		if pl.Pre = take(hdr[2]); pl.Pre == nil && hdr[2] > 0 {
			return bad
		}
		for range pl.Pre {
			h := take(3)
			if h == nil || h[2] < 1 || !rankOK(h[0], h[1]) {
				return bad
			}
			pl.PreTo = append(pl.PreTo, int32(h[0]))
			pl.PreFrom = append(pl.PreFrom, int32(h[1]))
			cs := make([]PartialContrib, h[2])
			for i := range cs {
				ch := take(2)
				if ch == nil || !rankOK(ch[0]) {
					return bad
				}
				cs[i].Rank = int32(ch[0])
				if cs[i].Src = take(ch[1]); cs[i].Src == nil && ch[1] != 0 {
					return bad
				}
			}
			pl.PreContr = append(pl.PreContr, cs)
		}
		plans[hdr[0]] = pl
	}
	return nil
}

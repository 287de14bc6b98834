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

// twoLevel is the built two-level exchange of one rank.
type twoLevel struct {
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
	ApplyScaled(x, out *dense.Matrix, rowScale []float32, accumulate bool)
	ApplyTScaled(x, out *dense.Matrix, rowScale []float32, accumulate bool)
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

// newBuilderW is newBuilder for a CSR with values when weighted.
func newBuilderW(cols int, weighted bool) *csrBuilder {
	b := newBuilder(cols)
	if weighted {
		b.g.Val = []float32{}
	}
	return b
}

// row appends a row of the given columns, each of weight 1.
func (b *csrBuilder) row(idx ...int32) { b.rowW(idx, nil) }

// rowW appends a row of the given columns and weights (nil: all 1); a
// builder without values ignores the weights.
func (b *csrBuilder) rowW(idx []int32, w []float32) {
	b.g.Idx = append(b.g.Idx, idx...)
	if b.g.Val != nil {
		for i := range idx {
			x := float32(1)
			if w != nil {
				x = w[i]
			}
			b.g.Val = append(b.g.Val, x)
		}
	}
	b.g.NumRows++
	b.g.Ptr = append(b.g.Ptr, int64(len(b.g.Idx)))
}

// takeSources splits a message's source section of n sources: the ids,
// and on a weighted graph the n weight words after them (decoded).
func takeSources(take func(n int64) ([]int64, error), n int64, weighted bool) ([]int64, []float32, error) {
	srcs, err := take(n)
	if err != nil || !weighted {
		return srcs, nil, err
	}
	words, err := take(n)
	if err != nil {
		return nil, nil, err
	}
	w := make([]float32, len(words))
	for i, x := range words {
		if w[i], err = wordWeight(x); err != nil {
			return nil, nil, err
		}
	}
	return srcs, w, nil
}

// appendSources appends source ids and, when w is not nil, their weight
// words.
func appendSources(dst []int64, srcs []int64, w []float32) []int64 {
	dst = append(dst, srcs...)
	for _, x := range w {
		dst = append(dst, weightWord(x))
	}
	return dst
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
// (ids: own sources; ranks[0]: the reducing rank); w are the sources' edge
// weights on a weighted graph (the message then carries them after the
// ids), nil otherwise. It returns the rows the message's sender receives
// in stage 2.
func parseTwoLevelMessage(m []int64, global *globalIndex, nodes *comm.Nodes, me int, weighted bool,
	row func(kind int, ids []int32, w []float32, ranks []int64) error) (int, error) {
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
		if err := row(0, ids, nil, nil); err != nil {
			return 0, err
		}
	}
	for i := 0; i < nSend; i++ {
		hdr, err := take(3)
		if err != nil {
			return 0, err
		}
		srcs, w, err := takeSources(take, hdr[1], weighted)
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
		if err := row(1, ids, w, others); err != nil {
			return 0, err
		}
	}
	for i := 0; i < nContr; i++ {
		hdr, err := take(3)
		if err != nil {
			return 0, err
		}
		srcs, w, err := takeSources(take, hdr[2], weighted)
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
		if err := row(2, ids, w, hdr[:1]); err != nil {
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
	m := stageMover{d: d, ps: ps, dir: "forward", done: done}
	if err := m.move(tl.local, tl.s1b, tl.r1, tl.s1Off, tl.r1Off, nil, stream+4); err != nil {
		return err
	}
	m.between(func() { tl.s2r.Apply(tl.r1, tl.s2, true) })
	if err := m.move(d.c, tl.s2, tl.r2, tl.s2Off, tl.r2Off, codec, stream); err != nil {
		return err
	}
	m.between(func() { tl.s3.Apply(tl.r2, tl.s3b, false) })
	return m.move(tl.local, tl.s3b, tl.r3, tl.s3Off, tl.r3Off, nil, stream+8)
}

func (tl *twoLevel) addForward(out *dense.Matrix, left []float32) {
	scaledProduct(tl.h1, false, tl.r1, out, left, true)
	scaledProduct(tl.h2, false, tl.r2, out, left, true)
	scaledProduct(tl.h3, false, tl.r3, out, left, true)
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
	m := stageMover{d: d, ps: ps, dir: "backward", done: done}
	if err := m.move(tl.local, tl.r3, tl.s3b, tl.r3Off, tl.s3Off, nil, stream+8); err != nil {
		return err
	}
	m.between(func() { tl.s3.ApplyT(tl.s3b, tl.r2, true) })
	if err := m.move(d.c, tl.r2, tl.s2, tl.r2Off, tl.s2Off, codec, stream); err != nil {
		return err
	}
	m.between(func() { tl.s2r.ApplyT(tl.s2, tl.r1, true) })
	return m.move(tl.local, tl.r1, tl.s1b, tl.r1Off, tl.s1Off, nil, stream+4)
}

// stageMover runs one pass's stages on the driver goroutine.
type stageMover struct {
	d    *Propagator
	ps   nn.Pass
	dir  string // "forward" or "backward"
	done <-chan struct{}
}

// move is one stage's all-to-all on c: the world communicator through
// codec (every peer), or the node communicator through the pass's intra
// codec (codec nil; the bytes count as IntraBytes).
func (m stageMover) move(c comm.Comm, send, recv *dense.Matrix, sendOff, recvOff []int, codec RowCodec, stream uint64) error {
	var intra []bool
	if c != m.d.c {
		codec, intra = m.d.intraCodec(m.ps, m.dir == "backward"), everyPeer(c.Size())
	}
	tr := &transfer{c: c, send: send, recv: recv, sendOff: sendOff, recvOff: recvOff, codecs: uniformCodecs(codec, c.Size()),
		intra: intra, layer: m.ps.Layer, dir: m.dir}
	return m.d.transferRows(tr, m.ps, stream, m.done)
}

// between runs a product between two stages on the aggregation timer.
func (m stageMover) between(product func()) {
	t := m.d.c.Wtime()
	product()
	m.d.lap(t, &m.d.stats.AggrSeconds)
}

func (tl *twoLevel) addBackward(gx *dense.Matrix, right []float32) {
	scaledProduct(tl.s2x, true, tl.s2, gx, right, true)
	scaledProduct(tl.s1, true, tl.s1b, gx, right, true)
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

// newTwoLevel is the two-level exchange's plan (paired:
// NodePairOptions.Paired) of shard s (collective on c and nodes.Local).
// The products between the stages run on a one-thread engine of e's
// kernel, on the driver goroutine: the engine's own pool is busy with the
// local product meanwhile.
func newTwoLevel(paired bool) buildFunc {
	return func(s *partition.Shard, c comm.Comm, e *aggr.Engine, mode Mode, nodes *comm.Nodes) (pattern, PlanStats, error) {
		return planTwoLevel(s, c, e, mode, nodes, NodePairOptions{Paired: paired, Weighted: s.Weighted()})
	}
}

func planTwoLevel(s *partition.Shard, c comm.Comm, e *aggr.Engine, mode Mode, nodes *comm.Nodes, po NodePairOptions) (pattern, PlanStats, error) {
	cs, stats, err := buildTwoLevel(s, c, nodes, mode, po)
	if err := agree(c, err); err != nil {
		return nil, stats, err
	}
	serial, err := aggr.New(1, e.KernelName())
	if err != nil {
		return nil, stats, fmt.Errorf("exchange: %w", err)
	}
	stats.InterRows, stats.IntraRows = cs.interRows, cs.intraRows
	tl := &twoLevel{local: nodes.Local,
		s1: e.Prepare(cs.s1), s2x: e.Prepare(cs.s2x), s2r: serial.Prepare(cs.s2r), s3: serial.Prepare(cs.s3),
		h1: e.Prepare(cs.h1), h2: e.Prepare(cs.h2), h3: e.Prepare(cs.h3),
		s1Off: cs.s1Off, r1Off: cs.r1Off, s2Off: cs.s2Off, r2Off: cs.r2Off, s3Off: cs.s3Off, r3Off: cs.r3Off}
	return tl, stats, nil
}

// appendPlan encodes node A's plan into dst: a, the row counts, then the
// plan's slices (each need and contributor list with its length first; a
// contributor's weight words, as many as its sources or none, after its
// sources).
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
			dst = append(dst, int64(c.Rank), int64(len(c.Src)), int64(len(c.W)))
			dst = appendSources(dst, c.Src, c.W)
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
				ch := take(3)
				if ch == nil || !rankOK(ch[0]) || (ch[2] != 0 && ch[2] != ch[1]) {
					return bad
				}
				cs[i].Rank = int32(ch[0])
				if cs[i].Src = take(ch[1]); cs[i].Src == nil && ch[1] != 0 {
					return bad
				}
				if ch[2] > 0 {
					words := take(ch[2])
					if words == nil {
						return bad
					}
					cs[i].W = make([]float32, len(words))
					for j, x := range words {
						w, err := wordWeight(x)
						if err != nil {
							return err
						}
						cs[i].W[j] = w
					}
				}
			}
			pl.PreContr = append(pl.PreContr, cs)
		}
		plans[hdr[0]] = pl
	}
	return nil
}

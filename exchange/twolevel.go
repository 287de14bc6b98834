package exchange

import (
	"fmt"
	"slices"

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

// buildTwoLevel plans the two-level exchange of shard s (collective on c
// and nodes.Local).
func buildTwoLevel(s *partition.Shard, c comm.Comm, nodes *comm.Nodes, mode Mode, po NodePairOptions) (*tlCSRs, PlanStats, error) {
	me := c.Rank()
	P := c.Size()
	myNode := nodes.Node[me]
	peers := nodes.Ranks[myNode]
	k := len(peers)
	cuts, err := GroupCuts(s)
	if err := agree(c, err); err != nil {
		return nil, PlanStats{}, err
	}
	stats := PlanStats{Mode: mode.String(), Sent: make([]RowCounts, P), Recv: make([]RowCounts, P)}
	// Same-node pairs keep their own plan.
	splits := make([]PairSplit, P)
	for _, q := range peers {
		if q != me && len(cuts.Src[q]) > 0 {
			splits[q] = SplitCut(cuts.Src[q], cuts.Dst[q], mode)
			stats.Recv[q] = splits[q].Counts
		}
	}
	// Node pair (A, this node) is planned by the rank of this node at
	// position A mod k, from the node's cut edges out of A (sent to it in
	// rank, then edge order); the plans are then shared on the node
	// communicator, so every rank of the node knows every pair's plan.
	edgeMsgs := make([][]int64, k)
	for q := range cuts.Src {
		if nodes.Node[q] == myNode {
			continue
		}
		j := nodes.Node[q] % k
		for i, u := range cuts.Src[q] {
			edgeMsgs[j] = append(edgeMsgs[j], u, int64(q), s.Global[cuts.Dst[q][i]])
		}
	}
	got, err := exchangeMessages(nodes.Local, edgeMsgs)
	if err != nil {
		return nil, stats, err
	}
	edgeMsgs = nil
	var perr error // data errors: agreed on before the world collectives below
	pairs := make([][]CutEdge, nodes.NumNodes())
	for j, blk := range got {
		for i := 0; i+2 < len(blk) && perr == nil; i += 3 {
			q := blk[i+1]
			if q < 0 || q >= int64(P) || nodes.Node[q] == myNode || nodes.Node[q]%k != nodes.LocalIndex(me) {
				perr = fmt.Errorf("exchange: rank %d: node edge list from rank %d names owner %d", me, peers[j], q)
				break
			}
			a := nodes.Node[q]
			pairs[a] = append(pairs[a], CutEdge{Src: blk[i], SrcRank: int32(q), Dst: blk[i+2], DstRank: int32(peers[j])})
		}
	}
	got = nil
	var mineEnc []int64
	for a, edges := range pairs {
		if len(edges) > 0 {
			pl := PlanNodePairWith(edges, nodes, po)
			mineEnc = appendPlan(mineEnc, a, &pl)
		}
		pairs[a] = nil
	}
	allPlans, err := allgatherI64(nodes.Local, mineEnc)
	if err != nil {
		return nil, stats, err
	}
	mineEnc = nil
	plans := make([]*NodePairPlan, nodes.NumNodes())
	for j, blk := range allPlans {
		if perr == nil {
			if perr = decodePlans(blk, plans, P); perr != nil {
				perr = fmt.Errorf("exchange: rank %d: node-pair plans from rank %d: %w", me, peers[j], perr)
			}
		}
	}
	allPlans = nil
	if err := agree(c, perr); err != nil {
		return nil, stats, err
	}

	// Plan messages: same-node peers get the flat message of their pair;
	// ranks of other nodes what they send this rank (post rows, partial rows
	// they reduce) and the partial sums they add to others' partial rows.
	msgs := make([][]int64, P)
	for _, q := range peers {
		msgs[q] = appendMessage(nil, &splits[q])
	}
	type tlMsg struct{ post, send, contr []int64 }
	out := make([]tlMsg, P)
	nPost, nSend, nContr := make([]int, P), make([]int, P), make([]int, P)
	for _, pl := range plans {
		if pl == nil {
			continue
		}
		for i, u := range pl.Post {
			if int(pl.PostTo[i]) == me {
				x := pl.PostFrom[i]
				out[x].post = append(out[x].post, u)
				nPost[x]++
			}
		}
		for i, v := range pl.Pre {
			if int(pl.PreTo[i]) != me {
				continue
			}
			from := pl.PreFrom[i]
			var others, own []int64
			for _, ct := range pl.PreContr[i] {
				if ct.Rank != from {
					others = append(others, int64(ct.Rank))
				} else {
					own = ct.Src
				}
			}
			// The reducing rank (with its own sources, if any), then the
			// other contributors' partial sums for it.
			out[from].send = append(out[from].send, v, int64(len(own)), int64(len(others)))
			out[from].send = append(out[from].send, own...)
			out[from].send = append(out[from].send, others...)
			nSend[from]++
			for _, ct := range pl.PreContr[i] {
				if x := ct.Rank; x != from {
					out[x].contr = append(out[x].contr, int64(from), v, int64(len(ct.Src)))
					out[x].contr = append(out[x].contr, ct.Src...)
					nContr[x]++
				}
			}
		}
	}
	for x := range out {
		if nodes.Node[x] == myNode || nPost[x]+nSend[x]+nContr[x] == 0 {
			continue
		}
		m := []int64{int64(nPost[x]), int64(nSend[x]), int64(nContr[x])}
		m = append(m, out[x].post...)
		m = append(m, out[x].send...)
		msgs[x] = append(m, out[x].contr...)
	}
	out = nil
	recv, err := exchangeMessages(c, msgs)
	if err != nil {
		return nil, stats, err
	}

	// Sender side: S1 (per node peer: flat rows, then partial sums), S2x and
	// S2r (per world rank).
	n := len(s.Global)
	gidx := newGlobalIndex(s.Global)
	flatRows := make([][][]int32, k)
	contrRows := make([][][]int32, k)
	contrIn := make([]int, k) // partial sums each node peer sends this rank
	type r1ref struct{ peer, idx int }
	s2x := newBuilder(n)
	var s2rRows [][]r1ref
	s2Off := make([]int, P+1)
	for x := 0; x < P; x++ {
		s2Off[x] = s2x.g.NumRows
		m := recv[x]
		if len(m) == 0 {
			continue
		}
		if nodes.Node[x] == myNode {
			S := &graph.CSR{NumCols: n, Ptr: []int64{0}}
			if err := appendPeerRows(S, gidx, m, &stats.Sent[x]); err != nil {
				return nil, stats, fmt.Errorf("exchange: rank %d: plan from rank %d: %w", me, x, err)
			}
			j := nodes.LocalIndex(x)
			for r := 0; r < S.NumRows; r++ {
				flatRows[j] = append(flatRows[j], S.Idx[S.Ptr[r]:S.Ptr[r+1]])
			}
			continue
		}
		rows, err := parseTwoLevelMessage(m, gidx, nodes, me, func(kind int, ids []int32, ranks []int64) error {
			switch kind {
			case 0: // post row
				s2x.row(ids...)
				s2rRows = append(s2rRows, nil)
			case 1: // partial row this rank reduces
				s2x.row(ids...)
				var refs []r1ref
				for _, q := range ranks {
					j := nodes.LocalIndex(int(q))
					refs = append(refs, r1ref{j, contrIn[j]})
					contrIn[j]++
				}
				s2rRows = append(s2rRows, refs)
			case 2: // partial sum for ranks[0]
				j := nodes.LocalIndex(int(ranks[0]))
				contrRows[j] = append(contrRows[j], ids)
			}
			return nil
		})
		if err != nil {
			return nil, stats, fmt.Errorf("exchange: rank %d: two-level plan from rank %d: %w", me, x, err)
		}
		stats.Sent[x] = RowCounts{Hybrid: int64(rows)}
	}
	s2Off[P] = s2x.g.NumRows
	cs := &tlCSRs{s2x: &s2x.g, s2Off: s2Off}
	s1 := newBuilder(n)
	cs.s1Off = make([]int, k+1)
	cs.r1Off = make([]int, k+1)
	for j, q := range peers {
		cs.s1Off[j] = s1.g.NumRows
		for _, r := range flatRows[j] {
			s1.row(r...)
		}
		for _, r := range contrRows[j] {
			s1.row(r...)
		}
		cs.r1Off[j+1] = cs.r1Off[j] + splits[q].Rows() + contrIn[j]
	}
	cs.s1Off[k] = s1.g.NumRows
	cs.s1 = &s1.g
	s2r := newBuilder(cs.r1Off[k])
	for _, refs := range s2rRows {
		var idx []int32
		for _, rf := range refs {
			idx = append(idx, int32(cs.r1Off[rf.peer]+splits[peers[rf.peer]].Rows()+rf.idx))
		}
		s2r.row(idx...)
	}
	cs.s2r = &s2r.g

	// Receiver side, from the node's plans: stage-2 blocks (per sender:
	// post rows, then partial rows, each in plan order), stage-3 forwarding.
	nP, nR := make([]int, P), make([]int, P)
	for _, pl := range plans {
		if pl == nil {
			continue
		}
		for i := range pl.Post {
			if int(pl.PostTo[i]) == me {
				nP[pl.PostFrom[i]]++
			}
		}
		for i := range pl.Pre {
			if int(pl.PreTo[i]) == me {
				nR[pl.PreFrom[i]]++
			}
		}
	}
	cs.r2Off = rowOffsets(P, func(a int) int { return nP[a] + nR[a] })
	postRow2 := make([][]int32, len(plans)) // -1: not received here in stage 2
	preRow2 := make([][]int32, len(plans))
	cP, cR := make([]int, P), make([]int, P)
	type fwd struct {
		row  int32
		need []int32
	}
	var forwards []fwd
	// r3: post rows another rank of this node receives and this rank needs,
	// in that rank's stage-2 order (sender, then plan order).
	type r3key struct{ to, from, a, i int }
	var r3keys []r3key
	for a, pl := range plans {
		if pl == nil {
			continue
		}
		postRow2[a] = make([]int32, len(pl.Post))
		for i := range pl.Post {
			postRow2[a][i] = -1
			from := int(pl.PostFrom[i])
			if int(pl.PostTo[i]) == me {
				postRow2[a][i] = int32(cs.r2Off[from] + cP[from])
				cP[from]++
				if len(pl.PostNeed[i]) > 0 {
					forwards = append(forwards, fwd{postRow2[a][i], pl.PostNeed[i]})
				}
			} else if _, ok := slices.BinarySearch(pl.PostNeed[i], int32(me)); ok {
				r3keys = append(r3keys, r3key{int(pl.PostTo[i]), from, a, i})
			}
		}
		preRow2[a] = make([]int32, len(pl.Pre))
		for i := range pl.Pre {
			preRow2[a][i] = -1
			if int(pl.PreTo[i]) == me {
				from := int(pl.PreFrom[i])
				preRow2[a][i] = int32(cs.r2Off[from] + nP[from] + cR[from])
				cR[from]++
			}
		}
	}
	slices.SortFunc(forwards, func(x, y fwd) int { return int(x.row - y.row) })
	s3Rows := make([][]int32, k)
	for _, f := range forwards {
		for _, r := range f.need {
			j := nodes.LocalIndex(int(r))
			s3Rows[j] = append(s3Rows[j], f.row)
		}
	}
	s3 := newBuilder(cs.r2Off[P])
	cs.s3Off = make([]int, k+1)
	for j := range peers {
		cs.s3Off[j] = s3.g.NumRows
		for _, r := range s3Rows[j] {
			s3.row(r)
		}
	}
	cs.s3Off[k] = s3.g.NumRows
	cs.s3 = &s3.g
	slices.SortFunc(r3keys, func(x, y r3key) int {
		if x.to != y.to {
			return x.to - y.to
		}
		if x.from != y.from {
			return x.from - y.from
		}
		return x.i - y.i
	})
	postRow3 := make(map[[2]int]int32, len(r3keys))
	r3n := make([]int, k)
	for _, key := range r3keys {
		r3n[nodes.LocalIndex(key.to)]++
	}
	cs.r3Off = rowOffsets(k, func(j int) int { return r3n[j] })
	clear(r3n)
	for _, key := range r3keys {
		j := nodes.LocalIndex(key.to)
		postRow3[[2]int{key.a, key.i}] = int32(cs.r3Off[j] + r3n[j])
		r3n[j]++
	}

	// H1, H2, H3: every local destination's incoming cut edges, in edge order.
	h1, h2, h3 := newBuilder(cs.r1Off[k]), newBuilder(cs.r2Off[P]), newBuilder(cs.r3Off[k])
	r := &s.Remote
	lastPre := make([]int, P)
	lastNodePre := make([]int, len(plans))
	var e1, e2, e3 []int32
	for v := 0; v < n; v++ {
		e1, e2, e3 = e1[:0], e2[:0], e3[:0]
		if len(r.Ptr) > 0 {
			for kk := r.Ptr[v]; kk < r.Ptr[v+1]; kk++ {
				q := int(r.Owner[kk])
				u := r.Src[kk]
				if nodes.Node[q] == myNode {
					if i, ok := haloRow(&splits[q], u, v, &lastPre[q]); ok {
						e1 = append(e1, int32(cs.r1Off[nodes.LocalIndex(q)]+i))
					}
					continue
				}
				a := nodes.Node[q]
				pl := plans[a]
				if i, ok := slices.BinarySearch(pl.Post, u); ok {
					if postRow2[a][i] >= 0 {
						e2 = append(e2, postRow2[a][i])
					} else {
						row, ok := postRow3[[2]int{a, i}]
						if !ok {
							return nil, stats, fmt.Errorf("exchange: rank %d: post row %d of node %d does not reach this rank", me, u, a)
						}
						e3 = append(e3, row)
					}
					continue
				}
				if lastNodePre[a] == v+1 {
					continue
				}
				lastNodePre[a] = v + 1
				i, ok := slices.BinarySearch(pl.Pre, s.Global[v])
				if !ok || preRow2[a][i] < 0 {
					return nil, stats, fmt.Errorf("exchange: rank %d: no partial row from node %d for node %d", me, a, s.Global[v])
				}
				e2 = append(e2, preRow2[a][i])
			}
		}
		h1.row(e1...)
		h2.row(e2...)
		h3.row(e3...)
	}
	cs.h1, cs.h2, cs.h3 = &h1.g, &h2.g, &h3.g
	for a := 0; a < P; a++ {
		if a != me && nodes.Node[a] != myNode {
			stats.Recv[a] = RowCounts{Hybrid: int64(nP[a] + nR[a])}
		}
	}
	cs.interRows = int64(cs.s2Off[P])
	cs.intraRows = int64(cs.s1Off[k] - (cs.s1Off[nodes.LocalIndex(me)+1] - cs.s1Off[nodes.LocalIndex(me)]) + cs.s3Off[k])
	return cs, stats, nil
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

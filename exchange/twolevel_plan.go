package exchange

import (
	"fmt"
	"slices"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/partition"
)

// tlBuild is the state of one rank's two-level planning, stage by stage:
// planning (node-pair plans shared on the node), messages (what every
// rank of another node sends this rank, and the same-node pairs' flat
// plans), and matrices (sender side S1, S2x, S2r; receiver side, the
// stage-3 forwarding S3; the halo matrices H1, H2, H3).
type tlBuild struct {
	s      *partition.Shard
	c      comm.Comm
	nodes  *comm.Nodes
	me, P  int
	myNode int
	weight bool  // the shard is weighted: plans and messages carry edge weights
	peers  []int // ranks of this node
	k      int   // len(peers)
	stats  PlanStats
	splits []PairSplit      // same-node pairs' own plans, by sending rank
	plans  []*NodePairPlan  // node A's plan into this node, by A
	cs     *tlCSRs          // the matrices built so far
	gidx   *globalIndex     // owned global ids
	nP, nR []int            // post and partial rows each rank sends this one in stage 2
	post2  [][]int32        // postRow2[a][i]: stage-2 row of plan a's post row i (-1: not received here)
	pre2   [][]int32        // preRow2[a][i]: the same for partial rows
	post3  map[[2]int]int32 // stage-3 row of plan a's post row i, forwarded to this rank
}

// buildTwoLevel plans the two-level exchange of shard s (collective on c
// and nodes.Local).
func buildTwoLevel(s *partition.Shard, c comm.Comm, nodes *comm.Nodes, mode Mode, po NodePairOptions) (*tlCSRs, PlanStats, error) {
	me := c.Rank()
	b := &tlBuild{s: s, c: c, nodes: nodes, me: me, P: c.Size(), myNode: nodes.Node[me], peers: nodes.Ranks[nodes.Node[me]], weight: s.Weighted(),
		stats: PlanStats{Mode: mode.String(), Sent: make([]RowCounts, c.Size()), Recv: make([]RowCounts, c.Size())}}
	b.k = len(b.peers)
	if err := b.planNodePairs(mode, po); err != nil {
		return nil, b.stats, err
	}
	recv, err := exchangeMessages(c, b.messages())
	if err != nil {
		return nil, b.stats, err
	}
	if err := b.senderMatrices(recv); err != nil {
		return nil, b.stats, err
	}
	b.receiverRows()
	if err := b.haloMatrices(); err != nil {
		return nil, b.stats, err
	}
	cs := b.cs
	cs.interRows = int64(cs.s2Off[b.P])
	own := cs.s1Off[nodes.LocalIndex(me)+1] - cs.s1Off[nodes.LocalIndex(me)]
	cs.intraRows = int64(cs.s1Off[b.k] - own + cs.s3Off[b.k])
	return cs, b.stats, nil
}

// planNodePairs plans the same-node pairs (their own plans, as flat) and
// the node pairs into this node: node pair (A, this node) is planned by
// the rank of this node at position A mod k, from the node's cut edges out
// of A (sent to it in rank, then edge order); the plans are then shared
// on the node communicator, so every rank of the node knows every pair's
// plan.
func (b *tlBuild) planNodePairs(mode Mode, po NodePairOptions) error {
	s, nodes, me := b.s, b.nodes, b.me
	cuts, err := GroupCuts(s)
	if err := agree(b.c, err); err != nil {
		return err
	}
	b.splits = make([]PairSplit, b.P)
	for _, q := range b.peers {
		if q != me && len(cuts.Src[q]) > 0 {
			b.splits[q] = SplitCutWeighted(cuts.Src[q], cuts.Dst[q], cuts.weights(q), mode)
			b.stats.Recv[q] = b.splits[q].Counts
		}
	}
	edgeMsgs := make([][]int64, b.k)
	for q := range cuts.Src {
		if nodes.Node[q] == b.myNode {
			continue
		}
		j := nodes.Node[q] % b.k
		for i, u := range cuts.Src[q] {
			edgeMsgs[j] = append(edgeMsgs[j], u, int64(q), s.Global[cuts.Dst[q][i]])
			if b.weight {
				edgeMsgs[j] = append(edgeMsgs[j], weightWord(cuts.W[q][i]))
			}
		}
	}
	got, err := exchangeMessages(nodes.Local, edgeMsgs)
	if err != nil {
		return err
	}
	pairs, perr := b.nodePairEdges(got) // data errors: agreed on before the world collectives below
	var mineEnc []int64
	for a, edges := range pairs {
		if len(edges) > 0 {
			pl := PlanNodePairWith(edges, nodes, po)
			mineEnc = appendPlan(mineEnc, a, &pl)
		}
	}
	allPlans, err := allgatherI64(nodes.Local, mineEnc)
	if err != nil {
		return err
	}
	b.plans = make([]*NodePairPlan, nodes.NumNodes())
	for j, blk := range allPlans {
		if perr == nil {
			if perr = decodePlans(blk, b.plans, b.P); perr != nil {
				perr = fmt.Errorf("exchange: rank %d: node-pair plans from rank %d: %w", me, b.peers[j], perr)
			}
		}
	}
	return agree(b.c, perr)
}

// nodePairEdges turns the edge lists the node's ranks sent this rank
// (source, owner, destination and, when weighted, the weight word) into
// the cut edges of every node pair (A, this node) it plans.
func (b *tlBuild) nodePairEdges(got [][]int64) ([][]CutEdge, error) {
	nodes := b.nodes
	pairs := make([][]CutEdge, nodes.NumNodes())
	stride := 3
	if b.weight {
		stride = 4
	}
	for j, blk := range got {
		if len(blk)%stride != 0 {
			return pairs, fmt.Errorf("exchange: rank %d: node edge list from rank %d has %d words", b.me, b.peers[j], len(blk))
		}
		for i := 0; i < len(blk); i += stride {
			q := blk[i+1]
			if q < 0 || q >= int64(b.P) || nodes.Node[q] == b.myNode || nodes.Node[q]%b.k != nodes.LocalIndex(b.me) {
				return pairs, fmt.Errorf("exchange: rank %d: node edge list from rank %d names owner %d", b.me, b.peers[j], q)
			}
			e := CutEdge{Src: blk[i], SrcRank: int32(q), Dst: blk[i+2], DstRank: int32(b.peers[j])}
			if b.weight {
				w, err := wordWeight(blk[i+3])
				if err != nil {
					return pairs, fmt.Errorf("exchange: rank %d: node edge list from rank %d: %w", b.me, b.peers[j], err)
				}
				e.W = w
			}
			a := nodes.Node[q]
			pairs[a] = append(pairs[a], e)
		}
	}
	return pairs, nil
}

// messages are the plan messages: same-node peers get the flat message of
// their pair; ranks of other nodes what they send this rank (post rows,
// partial rows they reduce) and the partial sums they add to others'
// partial rows.
func (b *tlBuild) messages() [][]int64 {
	msgs := make([][]int64, b.P)
	for _, q := range b.peers {
		msgs[q] = appendMessage(nil, &b.splits[q])
	}
	type tlMsg struct{ post, send, contr []int64 }
	out := make([]tlMsg, b.P)
	nPost, nSend, nContr := make([]int, b.P), make([]int, b.P), make([]int, b.P)
	for _, pl := range b.plans {
		if pl == nil {
			continue
		}
		for i, u := range pl.Post {
			if int(pl.PostTo[i]) == b.me {
				x := pl.PostFrom[i]
				out[x].post = append(out[x].post, u)
				nPost[x]++
			}
		}
		for i, v := range pl.Pre {
			if int(pl.PreTo[i]) != b.me {
				continue
			}
			from := pl.PreFrom[i]
			var others, own []int64
			var ownW []float32
			for _, ct := range pl.PreContr[i] {
				if ct.Rank != from {
					others = append(others, int64(ct.Rank))
				} else {
					own, ownW = ct.Src, ct.W
				}
			}
			// The reducing rank (with its own sources, if any, and their
			// weights), then the other contributors' partial sums for it.
			out[from].send = append(out[from].send, v, int64(len(own)), int64(len(others)))
			out[from].send = appendSources(out[from].send, own, ownW)
			out[from].send = append(out[from].send, others...)
			nSend[from]++
			for _, ct := range pl.PreContr[i] {
				if x := ct.Rank; x != from {
					out[x].contr = append(out[x].contr, int64(from), v, int64(len(ct.Src)))
					out[x].contr = appendSources(out[x].contr, ct.Src, ct.W)
					nContr[x]++
				}
			}
		}
	}
	for x := range out {
		if b.nodes.Node[x] == b.myNode || nPost[x]+nSend[x]+nContr[x] == 0 {
			continue
		}
		m := []int64{int64(nPost[x]), int64(nSend[x]), int64(nContr[x])}
		m = append(m, out[x].post...)
		m = append(m, out[x].send...)
		msgs[x] = append(m, out[x].contr...)
	}
	return msgs
}

// senderMatrices builds the sender side from the received plan messages:
// S1 (per node peer: flat rows, then partial sums), S2x and S2r (per world
// rank).
func (b *tlBuild) senderMatrices(recv [][]int64) error {
	nodes, me, k := b.nodes, b.me, b.k
	n := len(b.s.Global)
	b.gidx = newGlobalIndex(b.s.Global)
	flatRows := make([][]weightedRow, k)
	contrRows := make([][]weightedRow, k)
	contrIn := make([]int, k) // partial sums each node peer sends this rank
	type r1ref struct{ peer, idx int }
	s2x := newBuilderW(n, b.weight)
	var s2rRows [][]r1ref
	s2Off := make([]int, b.P+1)
	for x := 0; x < b.P; x++ {
		s2Off[x] = s2x.g.NumRows
		m := recv[x]
		if len(m) == 0 {
			continue
		}
		if nodes.Node[x] == b.myNode {
			S := &newBuilderW(n, b.weight).g
			if err := appendPeerRows(S, b.gidx, m, &b.stats.Sent[x]); err != nil {
				return fmt.Errorf("exchange: rank %d: plan from rank %d: %w", me, x, err)
			}
			j := nodes.LocalIndex(x)
			for r := 0; r < S.NumRows; r++ {
				row := weightedRow{idx: S.Idx[S.Ptr[r]:S.Ptr[r+1]]}
				if S.Val != nil {
					row.w = S.Val[S.Ptr[r]:S.Ptr[r+1]]
				}
				flatRows[j] = append(flatRows[j], row)
			}
			continue
		}
		rows, err := parseTwoLevelMessage(m, b.gidx, nodes, me, b.weight, func(kind int, ids []int32, w []float32, ranks []int64) error {
			switch kind {
			case 0: // post row
				s2x.row(ids...)
				s2rRows = append(s2rRows, nil)
			case 1: // partial row this rank reduces
				s2x.rowW(ids, w)
				var refs []r1ref
				for _, q := range ranks {
					j := nodes.LocalIndex(int(q))
					refs = append(refs, r1ref{j, contrIn[j]})
					contrIn[j]++
				}
				s2rRows = append(s2rRows, refs)
			case 2: // partial sum for ranks[0]
				j := nodes.LocalIndex(int(ranks[0]))
				contrRows[j] = append(contrRows[j], weightedRow{ids, w})
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("exchange: rank %d: two-level plan from rank %d: %w", me, x, err)
		}
		b.stats.Sent[x] = RowCounts{Hybrid: int64(rows)}
	}
	s2Off[b.P] = s2x.g.NumRows
	cs := &tlCSRs{s2x: &s2x.g, s2Off: s2Off}
	s1 := newBuilderW(n, b.weight)
	cs.s1Off = make([]int, k+1)
	cs.r1Off = make([]int, k+1)
	for j, q := range b.peers {
		cs.s1Off[j] = s1.g.NumRows
		for _, r := range flatRows[j] {
			s1.rowW(r.idx, r.w)
		}
		for _, r := range contrRows[j] {
			s1.rowW(r.idx, r.w)
		}
		cs.r1Off[j+1] = cs.r1Off[j] + b.splits[q].Rows() + contrIn[j]
	}
	cs.s1Off[k] = s1.g.NumRows
	cs.s1 = &s1.g
	s2r := newBuilder(cs.r1Off[k])
	for _, refs := range s2rRows {
		var idx []int32
		for _, rf := range refs {
			idx = append(idx, int32(cs.r1Off[rf.peer]+b.splits[b.peers[rf.peer]].Rows()+rf.idx))
		}
		s2r.row(idx...)
	}
	cs.s2r = &s2r.g
	b.cs = cs
	return nil
}

// weightedRow is one row of a send CSR: local sources and their weights
// (nil: all 1).
type weightedRow struct {
	idx []int32
	w   []float32
}

// receiverRows lays out the receiver side from the node's plans: stage-2
// blocks (per sender: post rows, then partial rows, each in plan order),
// S3 (the post rows this rank forwards to the node's other ranks in stage
// 3) and the stage-3 rows it receives.
func (b *tlBuild) receiverRows() {
	P, me, cs := b.P, b.me, b.cs
	b.nP, b.nR = make([]int, P), make([]int, P)
	for _, pl := range b.plans {
		if pl == nil {
			continue
		}
		for i := range pl.Post {
			if int(pl.PostTo[i]) == me {
				b.nP[pl.PostFrom[i]]++
			}
		}
		for i := range pl.Pre {
			if int(pl.PreTo[i]) == me {
				b.nR[pl.PreFrom[i]]++
			}
		}
	}
	cs.r2Off = rowOffsets(P, func(a int) int { return b.nP[a] + b.nR[a] })
	b.post2 = make([][]int32, len(b.plans))
	b.pre2 = make([][]int32, len(b.plans))
	cP, cR := make([]int, P), make([]int, P)
	var forwards []fwdRow
	var keys []r3key // post rows another rank of this node receives and this rank needs
	for a, pl := range b.plans {
		if pl == nil {
			continue
		}
		b.post2[a] = make([]int32, len(pl.Post))
		for i := range pl.Post {
			b.post2[a][i] = -1
			from := int(pl.PostFrom[i])
			if int(pl.PostTo[i]) == me {
				b.post2[a][i] = int32(cs.r2Off[from] + cP[from])
				cP[from]++
				if len(pl.PostNeed[i]) > 0 {
					forwards = append(forwards, fwdRow{b.post2[a][i], pl.PostNeed[i]})
				}
			} else if _, ok := slices.BinarySearch(pl.PostNeed[i], int32(me)); ok {
				keys = append(keys, r3key{int(pl.PostTo[i]), from, a, i})
			}
		}
		b.pre2[a] = make([]int32, len(pl.Pre))
		for i := range pl.Pre {
			b.pre2[a][i] = -1
			if int(pl.PreTo[i]) == me {
				from := int(pl.PreFrom[i])
				b.pre2[a][i] = int32(cs.r2Off[from] + b.nP[from] + cR[from])
				cR[from]++
			}
		}
	}
	b.forwarding(forwards)
	b.stage3Rows(keys)
}

// fwdRow is a stage-2 row this rank forwards to the ranks of its node in
// need.
type fwdRow struct {
	row  int32
	need []int32
}

// r3key is a post row of plan a (index i) that rank to receives from rank
// from in stage 2 and forwards to this rank in stage 3.
type r3key struct{ to, from, a, i int }

// forwarding builds S3: per node peer, the stage-2 rows it needs, in
// stage-2 row order.
func (b *tlBuild) forwarding(forwards []fwdRow) {
	cs := b.cs
	slices.SortFunc(forwards, func(x, y fwdRow) int { return int(x.row - y.row) })
	s3Rows := make([][]int32, b.k)
	for _, f := range forwards {
		for _, r := range f.need {
			j := b.nodes.LocalIndex(int(r))
			s3Rows[j] = append(s3Rows[j], f.row)
		}
	}
	s3 := newBuilder(cs.r2Off[b.P])
	cs.s3Off = make([]int, b.k+1)
	for j := range b.peers {
		cs.s3Off[j] = s3.g.NumRows
		for _, r := range s3Rows[j] {
			s3.row(r)
		}
	}
	cs.s3Off[b.k] = s3.g.NumRows
	cs.s3 = &s3.g
}

// stage3Rows numbers the rows this rank receives in stage 3: per
// forwarding rank, in that rank's stage-2 order (sender, then plan order).
func (b *tlBuild) stage3Rows(keys []r3key) {
	slices.SortFunc(keys, func(x, y r3key) int {
		if x.to != y.to {
			return x.to - y.to
		}
		if x.from != y.from {
			return x.from - y.from
		}
		return x.i - y.i
	})
	b.post3 = make(map[[2]int]int32, len(keys))
	r3n := make([]int, b.k)
	for _, key := range keys {
		r3n[b.nodes.LocalIndex(key.to)]++
	}
	b.cs.r3Off = rowOffsets(b.k, func(j int) int { return r3n[j] })
	clear(r3n)
	for _, key := range keys {
		j := b.nodes.LocalIndex(key.to)
		b.post3[[2]int{key.a, key.i}] = int32(b.cs.r3Off[j] + r3n[j])
		r3n[j]++
	}
}

// haloMatrices builds H1, H2 and H3: every local destination's incoming
// cut edges, in edge order, as rows of the three receive buffers.
func (b *tlBuild) haloMatrices() error {
	s, nodes, me, cs := b.s, b.nodes, b.me, b.cs
	h1, h2, h3 := newBuilderW(cs.r1Off[b.k], b.weight), newBuilderW(cs.r2Off[b.P], b.weight), newBuilderW(cs.r3Off[b.k], b.weight)
	r := &s.Remote
	lastPre := make([]int, b.P)
	lastNodePre := make([]int, len(b.plans))
	var e1, e2, e3 weightedRow
	put := func(e *weightedRow, col int32, w float32) {
		e.idx = append(e.idx, col)
		e.w = append(e.w, w)
	}
	for v := range s.Global {
		e1, e2, e3 = weightedRow{e1.idx[:0], e1.w[:0]}, weightedRow{e2.idx[:0], e2.w[:0]}, weightedRow{e3.idx[:0], e3.w[:0]}
		if len(r.Ptr) > 0 {
			for kk := r.Ptr[v]; kk < r.Ptr[v+1]; kk++ {
				q := int(r.Owner[kk])
				u := r.Src[kk]
				w := float32(1)
				if b.weight {
					w = r.Val[kk]
				}
				if nodes.Node[q] == b.myNode {
					if i, ok := haloRow(&b.splits[q], u, v, &lastPre[q]); ok {
						put(&e1, int32(cs.r1Off[nodes.LocalIndex(q)]+i), haloWeight(&b.splits[q], i, w))
					}
					continue
				}
				a := nodes.Node[q]
				pl := b.plans[a]
				if i, ok := slices.BinarySearch(pl.Post, u); ok {
					if b.post2[a][i] >= 0 {
						put(&e2, b.post2[a][i], w)
					} else {
						row, ok := b.post3[[2]int{a, i}]
						if !ok {
							return fmt.Errorf("exchange: rank %d: post row %d of node %d does not reach this rank", me, u, a)
						}
						put(&e3, row, w)
					}
					continue
				}
				if lastNodePre[a] == v+1 {
					continue
				}
				lastNodePre[a] = v + 1
				i, ok := slices.BinarySearch(pl.Pre, s.Global[v])
				if !ok || b.pre2[a][i] < 0 {
					return fmt.Errorf("exchange: rank %d: no partial row from node %d for node %d", me, a, s.Global[v])
				}
				put(&e2, b.pre2[a][i], 1)
			}
		}
		h1.rowW(e1.idx, e1.w)
		h2.rowW(e2.idx, e2.w)
		h3.rowW(e3.idx, e3.w)
	}
	cs.h1, cs.h2, cs.h3 = &h1.g, &h2.g, &h3.g
	for a := 0; a < b.P; a++ {
		if a != me && nodes.Node[a] != b.myNode {
			b.stats.Recv[a] = RowCounts{Hybrid: int64(b.nP[a] + b.nR[a])}
		}
	}
	return nil
}

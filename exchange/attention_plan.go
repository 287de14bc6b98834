package exchange

import (
	"fmt"
	"slices"

	"github.com/supergcn/supergcn/attn"
	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/partition"
)

// attnPlan is the exchange plan of the attention operator on one rank,
// from the same per-pair split as the other operators (SplitCut: post,
// pre or the Kőnig cover of hybrid). Per peer the rows travel as one block,
// post rows first, then pre rows, in the pair's order.
//
// Receiver side: the owned graph (columns: owned nodes) and the halo graph
// (columns: received rows; received post rows are the sources of the cut
// edges they stand for, pre-row columns are never read), whose states
// merge. Sender side: the pre graph has one row per partial state this
// rank computes for another rank's node, its columns the owned nodes.
type attnPlan struct {
	n                int
	own, halo        *attn.Graph // n × n, n × received rows
	ownIDs, haloIDs  attn.Ids    // global ids of their rows and columns
	pre              *attn.Graph // pre rows this rank sends × n
	preIDs           attn.Ids
	sendOff, recvOff []int   // row blocks per peer (post rows, then pre rows)
	sendSrc          []int32 // per send row: the owned source of a post row, -1 for a pre row
	recvDst          []int32 // per received row: the owned destination of a pre row, -1 for a post row
	sendPreOff       []int   // pre rows sent to each peer: pre graph rows [sendPreOff[q], sendPreOff[q+1])
	recvPreOff       []int   // pre rows received from each peer (in receive order)
	recvPre          []int32 // received-row index of every received pre row, in order
	stats            PlanStats
}

// buildAttnPlan plans the attention exchange of shard s (collective), its
// pairs split by split (SplitShard, or GATv2's splitShardV2).
func buildAttnPlan(s *partition.Shard, c comm.Comm, mode Mode, split func(*partition.Shard, Mode) ([]PairSplit, error)) (*attnPlan, error) {
	t0 := c.Wtime()
	splits, err := split(s, mode)
	if err := agree(c, err); err != nil {
		return nil, err
	}
	pl := &attnPlan{n: len(s.Global)}
	pl.stats = PlanStats{Mode: mode.String(), Exchange: ExchangeFlat, Sent: make([]RowCounts, s.Ranks), Recv: make([]RowCounts, s.Ranks)}
	msgs := make([][]int64, s.Ranks)
	for q := range splits {
		pl.stats.Recv[q] = splits[q].Counts
		msgs[q] = appendAttnMessage(nil, &splits[q], s.Global)
	}
	pl.planReceive(s, splits)
	recv, err := exchangeMessages(c, msgs)
	if err != nil {
		return nil, err
	}
	err = pl.planSend(s, recv)
	if err := agree(c, err); err != nil {
		return nil, err
	}
	pl.stats.Seconds = c.Wtime() - t0
	return pl, nil
}

// appendAttnMessage encodes what one sender must send: [nPost, nPre, rows
// pre, rows post, rows hybrid], the post sources, then per pre row its
// destination's global id, its length and its sources (global ids).
func appendAttnMessage(dst []int64, sp *PairSplit, global []int64) []int64 {
	if sp.Rows() == 0 {
		return dst
	}
	dst = append(dst, int64(len(sp.Post)), int64(len(sp.Pre)), sp.Counts.Pre, sp.Counts.Post, sp.Counts.Hybrid)
	dst = append(dst, sp.Post...)
	for i, v := range sp.Pre {
		dst = append(dst, global[v], sp.PrePtr[i+1]-sp.PrePtr[i])
		dst = append(dst, sp.PreSrc[sp.PrePtr[i]:sp.PrePtr[i+1]]...)
	}
	return dst
}

// planReceive builds the owned graph (owned in-edges with one self-loop
// per node) and the halo graph (every cut edge whose source arrives as a
// post row, its column the received row).
func (pl *attnPlan) planReceive(s *partition.Shard, splits []PairSplit) {
	n := pl.n
	pl.recvOff = rowOffsets(len(splits), func(q int) int { return splits[q].Rows() })
	nRecv := pl.recvOff[len(splits)]
	pl.recvDst = make([]int32, nRecv)
	pl.recvPreOff = make([]int, len(splits)+1)
	col := make([]int64, nRecv)
	for q := range splits {
		sp := &splits[q]
		for i, u := range sp.Post {
			col[pl.recvOff[q]+i] = u
			pl.recvDst[pl.recvOff[q]+i] = -1
		}
		for i, v := range sp.Pre {
			r := pl.recvOff[q] + len(sp.Post) + i
			pl.recvDst[r], col[r] = v, -1
			pl.recvPre = append(pl.recvPre, int32(r))
		}
		pl.recvPreOff[q+1] = len(pl.recvPre)
	}
	loops := graph.AddSelfLoops(s.Local, graph.LoopSorted)
	pl.own, _ = attn.NewGraph(n, n, loops.Ptr, loops.Idx) // well-formed by construction
	pl.ownIDs = attn.Ids{Row: s.Global, Col: s.Global}
	ptr, idx := make([]int64, n+1), []int32(nil)
	r := &s.Remote
	for v := range n {
		if len(r.Ptr) > 0 {
			for k := r.Ptr[v]; k < r.Ptr[v+1]; k++ {
				q := int(r.Owner[k])
				if i, ok := slices.BinarySearch(splits[q].Post, r.Src[k]); ok {
					idx = append(idx, int32(pl.recvOff[q]+i))
				}
			}
		}
		ptr[v+1] = int64(len(idx))
	}
	pl.halo, _ = attn.NewGraph(n, nRecv, ptr, idx)
	pl.haloIDs = attn.Ids{Row: s.Global, Col: col}
}

// planSend decodes the messages of the receivers (recv[q] from rank q)
// into the send rows and the pre graph.
func (pl *attnPlan) planSend(s *partition.Shard, recv [][]int64) error {
	global := newGlobalIndex(s.Global)
	pl.sendOff = make([]int, len(recv)+1)
	pl.sendPreOff = make([]int, len(recv)+1)
	ptr, idx := []int64{0}, []int32(nil)
	var dstIDs []int64
	for q, m := range recv {
		pl.sendOff[q] = len(pl.sendSrc)
		pl.sendPreOff[q] = len(dstIDs)
		if len(m) == 0 {
			continue
		}
		if len(m) < msgHeader || m[0] < 0 || m[1] < 0 || int64(len(m)-msgHeader) < m[0] {
			return fmt.Errorf("exchange: rank %d: attention plan from rank %d: bad header", s.Rank, q)
		}
		pl.stats.Sent[q] = RowCounts{Pre: m[2], Post: m[3], Hybrid: m[4]}
		body := m[msgHeader:]
		for _, u := range body[:m[0]] {
			i, err := global.localID(u)
			if err != nil {
				return fmt.Errorf("exchange: rank %d: attention plan from rank %d: %w", s.Rank, q, err)
			}
			pl.sendSrc = append(pl.sendSrc, i)
		}
		body = body[m[0]:]
		for range m[1] {
			if len(body) < 2 || body[1] <= 0 || int64(len(body)-2) < body[1] {
				return fmt.Errorf("exchange: rank %d: attention plan from rank %d: bad pre row", s.Rank, q)
			}
			dstIDs = append(dstIDs, body[0])
			for _, u := range body[2 : 2+body[1]] {
				i, err := global.localID(u)
				if err != nil {
					return fmt.Errorf("exchange: rank %d: attention plan from rank %d: %w", s.Rank, q, err)
				}
				idx = append(idx, i)
			}
			ptr = append(ptr, int64(len(idx)))
			pl.sendSrc = append(pl.sendSrc, -1)
			body = body[2+body[1]:]
		}
		if len(body) != 0 {
			return fmt.Errorf("exchange: rank %d: attention plan from rank %d: %d trailing words", s.Rank, q, len(body))
		}
	}
	pl.sendOff[len(recv)] = len(pl.sendSrc)
	pl.sendPreOff[len(recv)] = len(dstIDs)
	var err error
	pl.pre, err = attn.NewGraph(len(dstIDs), pl.n, ptr, idx)
	pl.preIDs = attn.Ids{Row: dstIDs, Col: s.Global}
	return err
}

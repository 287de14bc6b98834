package exchange

import (
	"fmt"
	"math"
	"slices"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/partition"
)

// PlanStats describes the exchange plan of one rank: rows per peer and
// layer in one direction under every mode (whatever mode runs), and the
// plan's build time.
type PlanStats struct {
	Mode     string `json:"mode"`
	Exchange string `json:"exchange"` // the pattern: one of Exchanges
	// Two-level only: rows this rank sends per exchange between nodes
	// (stage 2) and inside its node (stages 1 and 3). Sent and Recv then
	// hold the rows of every rank pair in Hybrid (inter-node pairs: the
	// stage-2 rows; same-node pairs: their own plan's counts).
	InterRows int64       `json:"inter_rows,omitempty"`
	IntraRows int64       `json:"intra_rows,omitempty"`
	Sent      []RowCounts `json:"sent"` // rows this rank sends to each peer
	Recv      []RowCounts `json:"recv"` // rows this rank receives from each peer
	Seconds   float64     `json:"plan_s"`
}

// TotalSent sums Sent over peers.
func (p PlanStats) TotalSent() RowCounts { return sumCounts(p.Sent) }

// TotalRecv sums Recv over peers.
func (p PlanStats) TotalRecv() RowCounts { return sumCounts(p.Recv) }

func sumCounts(a []RowCounts) RowCounts {
	var t RowCounts
	for _, c := range a {
		t = t.Add(c)
	}
	return t
}

// plan is the built exchange of one rank.
type plan struct {
	send    *graph.CSR // rows = send-buffer rows (peers in order), cols = local nodes
	halo    *graph.CSR // rows = local nodes, cols = receive-buffer rows (peers in order)
	sendOff []int      // send rows of peer q: [sendOff[q], sendOff[q+1])
	recvOff []int      // receive rows of peer q: [recvOff[q], recvOff[q+1])
	stats   PlanStats
}

// Header of the plan message a receiver sends each sender:
// [nPost, nPre, rows pre, rows post, rows hybrid], then the nPost source ids,
// the nPre partial-row lengths, and the partial rows' source ids; on a
// weighted graph then the partial rows' edge weights (weightWord), one per
// source id.
const msgHeader = 5

// buildPlan splits this rank's incoming cut edges per sender, tells every
// sender what to send (one AlltoallvI64 of global ids) and builds S and H.
// Every rank of c must call it together.
func buildPlan(s *partition.Shard, c comm.Comm, mode Mode) (*plan, error) {
	t0 := c.Wtime()
	splits, err := SplitShard(s, mode)
	if err := agree(c, err); err != nil {
		return nil, err
	}
	pl := &plan{}
	pl.recvOff = rowOffsets(len(splits), func(q int) int { return splits[q].Rows() })
	pl.halo = haloCSR(s, splits, pl.recvOff)

	msgs, err := exchangeRequests(c, splits)
	if err != nil {
		return nil, err
	}
	pl.stats = PlanStats{Mode: mode.String(), Sent: make([]RowCounts, s.Ranks), Recv: make([]RowCounts, s.Ranks)}
	for q := range splits {
		pl.stats.Recv[q] = splits[q].Counts
	}
	pl.send, pl.sendOff, err = sendCSR(s, msgs, pl.stats.Sent, s.Weighted())
	if err := agree(c, err); err != nil {
		return nil, err
	}
	pl.stats.Seconds = c.Wtime() - t0
	return pl, nil
}

// inDegrees returns every local node's in-edge count and the sum of its
// in-edge weights (each edge weighing 1 on an unweighted shard), local
// and cut edges together.
func inDegrees(s *partition.Shard) (count []int64, weight []float64) {
	n := len(s.Global)
	count, weight = make([]int64, n), make([]float64, n)
	add := func(v int, lo, hi int64, val []float32) {
		count[v] += hi - lo
		if val == nil {
			weight[v] += float64(hi - lo)
			return
		}
		for _, w := range val[lo:hi] {
			weight[v] += float64(w)
		}
	}
	for v := range n {
		add(v, s.Local.Ptr[v], s.Local.Ptr[v+1], s.Local.Val)
		if len(s.Remote.Ptr) > 0 {
			add(v, s.Remote.Ptr[v], s.Remote.Ptr[v+1], s.Remote.Val)
		}
	}
	return count, weight
}

// weightWord is an edge weight as a plan message word (its float32 bits).
func weightWord(w float32) int64 { return int64(math.Float32bits(w)) }

// wordWeight decodes weightWord, refusing a word that is not a finite,
// non-negative float32.
func wordWeight(x int64) (float32, error) {
	w := math.Float32frombits(uint32(x))
	if x < 0 || x > math.MaxUint32 || w-w != 0 || w < 0 {
		return 0, fmt.Errorf("bad edge weight word %#x", x)
	}
	return w, nil
}

// rowOffsets returns the prefix sums of rows(q) for q < p.
func rowOffsets(p int, rows func(q int) int) []int {
	off := make([]int, p+1)
	for q := 0; q < p; q++ {
		off[q+1] = off[q] + rows(q)
	}
	return off
}

// haloCSR builds H: row v (a local node) lists the receive-buffer rows that
// feed it: a post row once per cut edge from its source (with the edge's
// weight on a weighted shard), a pre row once (weight 1: the sender
// weighted its sum), in the row of its destination. Columns are in edge
// order of s.Remote.
func haloCSR(s *partition.Shard, splits []PairSplit, recvOff []int) *graph.CSR {
	n := len(s.Global)
	h := &graph.CSR{NumRows: n, NumCols: recvOff[len(recvOff)-1], Ptr: make([]int64, n+1)}
	r := &s.Remote
	if s.Weighted() {
		h.Val = []float32{}
	}
	if len(r.Ptr) == 0 {
		return h
	}
	lastPre := make([]int, s.Ranks) // local node whose pre row of peer q was last added, +1
	for v := 0; v < n; v++ {
		for k := r.Ptr[v]; k < r.Ptr[v+1]; k++ {
			q := int(r.Owner[k])
			if i, ok := haloRow(&splits[q], r.Src[k], v, &lastPre[q]); ok {
				h.Idx = append(h.Idx, int32(recvOff[q]+i))
				if h.Val != nil {
					h.Val = append(h.Val, haloWeight(&splits[q], i, r.Val[k]))
				}
			}
		}
		h.Ptr[v+1] = int64(len(h.Idx))
	}
	return h
}

// haloRow returns the row, within pair split sp's block of the receive
// buffer, that cut edge u → v (v a local node) reads: u's post row, or v's
// pre row, which only v's first such edge reads (false for the others;
// *lastPre is the local node whose pre row was last added, +1).
func haloRow(sp *PairSplit, u int64, v int, lastPre *int) (int, bool) {
	if i, ok := slices.BinarySearch(sp.Post, u); ok {
		return i, true
	}
	if *lastPre == v+1 {
		return 0, false
	}
	*lastPre = v + 1
	i, _ := slices.BinarySearch(sp.Pre, int32(v))
	return len(sp.Post) + i, true
}

// haloWeight is the weight of halo entry i of a pair's block: the edge's
// weight w for a post row, 1 for a partial row.
func haloWeight(sp *PairSplit, i int, w float32) float32 {
	if i < len(sp.Post) {
		return w
	}
	return 1
}

// exchangeRequests sends every sender the plan message of its pair and
// returns the messages this rank receives as a sender, one per receiver.
func exchangeRequests(c comm.Comm, splits []PairSplit) ([][]int64, error) {
	msgs := make([][]int64, len(splits))
	for q := range splits {
		msgs[q] = appendMessage(nil, &splits[q])
	}
	return exchangeMessages(c, msgs)
}

// appendMessage encodes the plan message of one pair (empty for no edges).
func appendMessage(dst []int64, sp *PairSplit) []int64 {
	if sp.Rows() == 0 {
		return dst
	}
	dst = append(dst, int64(len(sp.Post)), int64(len(sp.Pre)), sp.Counts.Pre, sp.Counts.Post, sp.Counts.Hybrid)
	dst = append(dst, sp.Post...)
	for i := range sp.Pre {
		dst = append(dst, sp.PrePtr[i+1]-sp.PrePtr[i])
	}
	dst = append(dst, sp.PreSrc...)
	for _, w := range sp.PreW {
		dst = append(dst, weightWord(w))
	}
	return dst
}

// sendCSR decodes the plan messages (msgs[q] from receiver q) into S, rows
// of peer q at [off[q], off[q+1]): post rows (one source each), then partial
// rows (the sources they sum, with their edge weights when weighted),
// sources mapped to local ids. It records the row counts of each pair in
// sent.
func sendCSR(s *partition.Shard, msgs [][]int64, sent []RowCounts, weighted bool) (*graph.CSR, []int, error) {
	p := len(msgs)
	S := &graph.CSR{NumCols: len(s.Global), Ptr: []int64{0}}
	if weighted {
		S.Val = []float32{}
	}
	off := make([]int, p+1)
	idx := newGlobalIndex(s.Global)
	for q, m := range msgs {
		off[q] = S.NumRows
		if len(m) == 0 {
			continue
		}
		if err := appendPeerRows(S, idx, m, &sent[q]); err != nil {
			return nil, nil, fmt.Errorf("exchange: rank %d: plan from rank %d: %w", s.Rank, q, err)
		}
	}
	off[p] = S.NumRows
	return S, off, nil
}

// appendPeerRows appends the rows one plan message asks for to S; S.Val
// set means the message carries weights (post rows weigh 1).
func appendPeerRows(S *graph.CSR, global *globalIndex, m []int64, counts *RowCounts) error {
	if len(m) < msgHeader {
		return fmt.Errorf("short message (%d words)", len(m))
	}
	nPost, nPre := int(m[0]), int(m[1])
	*counts = RowCounts{Pre: m[2], Post: m[3], Hybrid: m[4]}
	body := m[msgHeader:]
	if nPost < 0 || nPre < 0 || len(body) < nPost+nPre {
		return fmt.Errorf("bad message header %v", m[:msgHeader])
	}
	post, lens, srcs := body[:nPost], body[nPost:nPost+nPre], body[nPost+nPre:]
	var ws []int64
	if S.Val != nil {
		if len(srcs)%2 != 0 {
			return fmt.Errorf("%d words of partial sources and weights", len(srcs))
		}
		srcs, ws = srcs[:len(srcs)/2], srcs[len(srcs)/2:]
	}
	for _, u := range post {
		if err := appendSource(S, global, u, 1); err != nil {
			return err
		}
		S.NumRows++
		S.Ptr = append(S.Ptr, int64(len(S.Idx)))
	}
	for _, l := range lens {
		if l <= 0 || l > int64(len(srcs)) {
			return fmt.Errorf("bad partial row length %d", l)
		}
		for i, u := range srcs[:l] {
			w := float32(1)
			if ws != nil {
				var err error
				if w, err = wordWeight(ws[i]); err != nil {
					return err
				}
			}
			if err := appendSource(S, global, u, w); err != nil {
				return err
			}
		}
		srcs = srcs[l:]
		if ws != nil {
			ws = ws[l:]
		}
		S.NumRows++
		S.Ptr = append(S.Ptr, int64(len(S.Idx)))
	}
	if len(srcs) != 0 {
		return fmt.Errorf("%d trailing words", len(srcs))
	}
	return nil
}

// appendSource adds the local id of global node u to S's current row,
// with weight w when S is weighted.
func appendSource(S *graph.CSR, global *globalIndex, u int64, w float32) error {
	i, err := global.localID(u)
	if err != nil {
		return err
	}
	S.Idx = append(S.Idx, i)
	if S.Val != nil {
		S.Val = append(S.Val, w)
	}
	return nil
}

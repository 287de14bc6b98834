package task

import (
	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/nn"
)

// RowMover moves row blocks between the ranks: the graph operator's
// exchange (exchange.Propagator.MoveRows: through the codecs of its roles,
// counted in its statistics), or float32 over a communicator (f32Rows).
type RowMover interface {
	MoveRows(m exchange.RowMove) error
}

// Exchanging is a task that moves rows between the ranks beyond the
// model's (link: the scored pairs' endpoint rows and their gradients).
// The trainer hands it the graph operator's exchange once planned, so
// those rows travel through the same codecs as the boundary rows; until
// then they travel as float32.
type Exchanging interface {
	UseRows(m RowMover)
}

// f32Rows moves rows as float32 over c, whatever the move's pass.
type f32Rows struct{ c comm.Comm }

func (f f32Rows) MoveRows(m exchange.RowMove) error {
	p := f.c.Size()
	counts := func(off []int) []int {
		n := make([]int, p)
		for r := range n {
			n[r] = off[r+1] - off[r]
		}
		return n
	}
	return alltoallRows(f.c, m.Send.Data, counts(m.SendOff), m.Recv.Data, counts(m.RecvOff), m.Send.Cols)
}

// pairRows is how a task's pair plans move rows: the mover, the seed
// their codecs' random streams are keyed by, and the epoch of the last
// training step (an evaluation after it draws that epoch's streams).
type pairRows struct {
	mv    RowMover
	seed  uint64
	epoch int
}

// move moves the plan's rows: forward the endpoint rows to the scoring
// ranks, backward their gradients to the owners. Every block's random
// stream is keyed by the task seed, the plan's split and pass kind, the
// epoch, both ranks and the direction (exchange.RowMove.Stream).
func (pl *pairPlan) move(backward bool, send *dense.Matrix, sendCounts []int, recv *dense.Matrix, recvCounts []int) error {
	return pl.rows.mv.MoveRows(exchange.RowMove{Pass: nn.Pass{Train: pl.train, Epoch: pl.rows.epoch}, Backward: backward,
		Stream: mix64(pl.rows.seed ^ uint64(pl.split+1)*0x9e3779b97f4a7c15), What: "pair rows",
		Send: send, SendOff: rowOffsets(sendCounts), Recv: recv, RecvOff: rowOffsets(recvCounts)})
}

// mix64 is the splitmix64 finaliser.
func mix64(h uint64) uint64 {
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9
	h = (h ^ (h >> 27)) * 0x94d049bb133111eb
	return h ^ (h >> 31)
}

// rowOffsets are the len(counts)+1 row offsets of blocks of counts rows.
func rowOffsets(counts []int) []int {
	off := make([]int, len(counts)+1)
	for r, n := range counts {
		off[r+1] = off[r] + n
	}
	return off
}

// pairPlan is one rank's share of a list of scored pairs (u, v): the pairs
// whose u it owns, and the exchange that brings the rows of their remote
// endpoints v from the ranks that own them (and takes their gradients
// back) through rows: in a training pass (train) or an evaluation one,
// with the random streams of split (0 train, 1 validation, 2 test).
type pairPlan struct {
	c      comm.Comm
	rows   *pairRows
	train  bool
	split  int
	pairs  [][2]int32 // (local row of u, row of v in the extended table: local rows, then the remote rows)
	y      []float64  // each pair's target
	nLocal int
	// serve lists the local rows each rank asked for, rank by rank
	// (serveCounts); recvCounts the remote rows received from each rank.
	serve                   []int32
	serveCounts, recvCounts []int
}

// newPairPlan builds the plan of the pairs (global ids) with targets y
// whose first endpoint this rank owns (owner: every node's rank; local:
// this rank's global id → local row), moving its rows through rows in a
// training pass (train) or an evaluation one of split. Collective.
func newPairPlan(c comm.Comm, rows *pairRows, train bool, split int, pairs [][2]int32, y []float64, owner []int32, local map[int64]int32, nLocal int) (*pairPlan, error) {
	p, rank := c.Size(), int32(c.Rank())
	pl := &pairPlan{c: c, rows: rows, train: train, split: split, nLocal: nLocal, serveCounts: make([]int, p), recvCounts: make([]int, p)}
	slot := map[int32]int32{} // remote global id → index among the remote rows, per owner then order of request
	byOwner := make([][]int64, p)
	for k, pr := range pairs {
		if owner[pr[0]] != rank {
			continue
		}
		if _, seen := slot[pr[1]]; owner[pr[1]] != rank && !seen {
			slot[pr[1]] = -1
			byOwner[owner[pr[1]]] = append(byOwner[owner[pr[1]]], int64(pr[1]))
		}
		pl.pairs = append(pl.pairs, pr)
		pl.y = append(pl.y, y[k])
	}
	var req []int64
	for r, ids := range byOwner {
		for _, g := range ids {
			slot[int32(g)] = int32(nLocal + len(req))
			req = append(req, g)
		}
		pl.recvCounts[r] = len(ids)
	}
	for i, pr := range pl.pairs {
		v := local[int64(pr[1])]
		if owner[pr[1]] != rank {
			v = slot[pr[1]]
		}
		pl.pairs[i] = [2]int32{local[int64(pr[0])], v}
	}
	// Tell every owner how many rows we want, then which.
	counts := make([]int64, p)
	for r := range p {
		counts[r] = int64(pl.recvCounts[r])
	}
	got := make([]int64, p)
	ones := make([]int, p)
	displ := make([]int, p)
	for r := range p {
		ones[r], displ[r] = 1, r
	}
	if err := c.AlltoallvI64(counts, ones, displ, got, ones, displ); err != nil {
		return nil, err
	}
	total := 0
	for r := range p {
		pl.serveCounts[r] = int(got[r])
		total += int(got[r])
	}
	ids := make([]int64, total)
	if err := c.AlltoallvI64(req, pl.recvCounts, offsets(pl.recvCounts, 1), ids, pl.serveCounts, offsets(pl.serveCounts, 1)); err != nil {
		return nil, err
	}
	pl.serve = make([]int32, total)
	for i, g := range ids {
		pl.serve[i] = local[g]
	}
	return pl, nil
}

// offsets are the displacements of counts×width blocks.
func offsets(counts []int, width int) []int {
	d := make([]int, len(counts))
	off := 0
	for r, n := range counts {
		d[r] = off
		off += n * width
	}
	return d
}

func scaled(counts []int, width int) []int {
	s := make([]int, len(counts))
	for r, n := range counts {
		s[r] = n * width
	}
	return s
}

// alltoall moves rows of width cols over the plan's communicator as
// float32: send's blocks by sendCounts (rows) to each rank, recv's by
// recvCounts.
func (pl *pairPlan) alltoall(send []float32, sendCounts []int, recv []float32, recvCounts []int, cols int) error {
	return alltoallRows(pl.c, send, sendCounts, recv, recvCounts, cols)
}

// alltoallRows is one float32 all-to-all of row blocks over c: send's
// blocks of sendCounts rows of width cols to each rank, recv's by
// recvCounts.
func alltoallRows(c comm.Comm, send []float32, sendCounts []int, recv []float32, recvCounts []int, cols int) error {
	req, err := c.IalltoallvF32(send, scaled(sendCounts, cols), offsets(sendCounts, cols), recv, scaled(recvCounts, cols), offsets(recvCounts, cols))
	if err == nil {
		err = req.Wait()
	}
	return err
}

// remoteRows is the number of rows the plan fetches.
func (pl *pairPlan) remoteRows() int {
	n := 0
	for _, c := range pl.recvCounts {
		n += c
	}
	return n
}

// fetch returns the extended table: h's rows, then the remote rows.
func (pl *pairPlan) fetch(h *dense.Matrix) (*dense.Matrix, error) {
	cols, remote := h.Cols, pl.remoteRows()
	send := &dense.Matrix{Rows: len(pl.serve), Cols: cols, Data: make([]float32, len(pl.serve)*cols)}
	for i, r := range pl.serve {
		copy(send.Row(i), h.Row(int(r)))
	}
	ext := &dense.Matrix{Rows: pl.nLocal + remote, Cols: cols, Data: make([]float32, (pl.nLocal+remote)*cols)}
	copy(ext.Data, h.Data[:pl.nLocal*cols])
	recv := &dense.Matrix{Rows: remote, Cols: cols, Data: ext.Data[pl.nLocal*cols:]}
	return ext, pl.move(false, send, pl.serveCounts, recv, pl.recvCounts)
}

// returnGrads sends the gradients of the remote rows of ext (rows nLocal
// on) back to their owners, who add them into grad's rows.
func (pl *pairPlan) returnGrads(gext, grad *dense.Matrix) error {
	cols := grad.Cols
	back := &dense.Matrix{Rows: len(pl.serve), Cols: cols, Data: make([]float32, len(pl.serve)*cols)}
	remote := &dense.Matrix{Rows: pl.remoteRows(), Cols: cols, Data: gext.Data[pl.nLocal*cols:]}
	if err := pl.move(true, remote, pl.recvCounts, back, pl.serveCounts); err != nil {
		return err
	}
	for i, r := range pl.serve {
		g := grad.Row(int(r))
		for j, x := range back.Row(i) {
			g[j] += x
		}
	}
	return nil
}

// loss is the BCE sum of the plan's pairs on the extended table ext and,
// with gext, its gradient/denom (pairs scored by the dot product).
func (pl *pairPlan) loss(ext, gext *dense.Matrix, denom float64) float64 {
	var l float64
	for k, p := range pl.pairs {
		hu, hv := ext.Row(int(p[0])), ext.Row(int(p[1]))
		v, g := bce(dot(hu, hv), pl.y[k])
		l += v
		if gext != nil {
			gu, gv := gext.Row(int(p[0])), gext.Row(int(p[1]))
			for j := range hu {
				gu[j] += float32(g / denom * float64(hv[j]))
				gv[j] += float32(g / denom * float64(hu[j]))
			}
		}
	}
	return l
}

package task

import (
	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
)

// pairPlan is one rank's share of a list of scored pairs (u, v): the pairs
// whose u it owns, and the exchange that brings the rows of their remote
// endpoints v from the ranks that own them (and takes their gradients
// back).
type pairPlan struct {
	c      comm.Comm
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
// this rank's global id → local row). Collective.
func newPairPlan(c comm.Comm, pairs [][2]int32, y []float64, owner []int32, local map[int64]int32, nLocal int) (*pairPlan, error) {
	p, rank := c.Size(), int32(c.Rank())
	pl := &pairPlan{c: c, nLocal: nLocal, serveCounts: make([]int, p), recvCounts: make([]int, p)}
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

// alltoall moves rows of width cols: send's blocks by sendCounts (rows)
// to each rank, recv's by recvCounts.
func (pl *pairPlan) alltoall(send []float32, sendCounts []int, recv []float32, recvCounts []int, cols int) error {
	req, err := pl.c.IalltoallvF32(send, scaled(sendCounts, cols), offsets(sendCounts, cols), recv, scaled(recvCounts, cols), offsets(recvCounts, cols))
	if err == nil {
		err = req.Wait()
	}
	return err
}

// fetch returns the extended table: h's rows, then the remote rows.
func (pl *pairPlan) fetch(h *dense.Matrix) (*dense.Matrix, error) {
	cols := h.Cols
	send := make([]float32, len(pl.serve)*cols)
	for i, r := range pl.serve {
		copy(send[i*cols:(i+1)*cols], h.Row(int(r)))
	}
	remote := 0
	for _, n := range pl.recvCounts {
		remote += n
	}
	ext := &dense.Matrix{Rows: pl.nLocal + remote, Cols: cols, Data: make([]float32, (pl.nLocal+remote)*cols)}
	copy(ext.Data, h.Data[:pl.nLocal*cols])
	return ext, pl.alltoall(send, pl.serveCounts, ext.Data[pl.nLocal*cols:], pl.recvCounts, cols)
}

// returnGrads sends the gradients of the remote rows of ext (rows nLocal
// on) back to their owners, who add them into grad's rows.
func (pl *pairPlan) returnGrads(gext, grad *dense.Matrix) error {
	cols := grad.Cols
	back := make([]float32, len(pl.serve)*cols)
	if err := pl.alltoall(gext.Data[pl.nLocal*cols:], pl.recvCounts, back, pl.serveCounts, cols); err != nil {
		return err
	}
	for i, r := range pl.serve {
		g := grad.Row(int(r))
		for j, x := range back[i*cols : (i+1)*cols] {
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

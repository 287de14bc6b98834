package task

import (
	"fmt"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/par"
)

// blockRows: rows per block of a loss sum. The blocks' sums add in block
// order, so the sum is the same whatever the thread count.
const blockRows = 2048

// entryLoss sums the per-entry loss f(logit, target) over the labelled
// (non-NaN) entries of rows and, with denom > 0, writes f's gradient
// divided by denom into grad (zero elsewhere; reused when its storage
// suffices). Rows must be distinct.
func entryLoss(grad, logits, y *dense.Matrix, rows []int32, denom float64, f func(x, y float64) (float64, float64)) (float64, *dense.Matrix, error) {
	if logits.Cols != y.Cols || logits.Rows > y.Rows {
		return 0, nil, fmt.Errorf("task: %d×%d outputs for %d×%d targets", logits.Rows, logits.Cols, y.Rows, y.Cols)
	}
	for _, r := range rows {
		if r < 0 || int(r) >= logits.Rows {
			return 0, nil, fmt.Errorf("task: row %d out of range [0, %d)", r, logits.Rows)
		}
	}
	if denom > 0 {
		grad = dense.Reshape(grad, logits.Rows, logits.Cols)
		clear(grad.Data)
	}
	blocks := (len(rows) + blockRows - 1) / blockRows
	parts := make([]float64, blocks)
	par.Blocks(blocks, 0, func(b int) {
		var l float64
		for _, r := range rows[b*blockRows : min(len(rows), (b+1)*blockRows)] {
			yr, xr := y.Row(int(r)), logits.Row(int(r))
			for j, t := range yr {
				if t != t {
					continue
				}
				v, g := f(float64(xr[j]), float64(t))
				l += v
				if denom > 0 {
					grad.Row(int(r))[j] = float32(g / denom)
				}
			}
		}
		parts[b] = l
	})
	var sum float64
	for _, p := range parts {
		sum += p
	}
	return sum, grad, nil
}

// gatherScored collects on rank 0 every rank's outputs and targets of the
// rows of each split: per split, a row's logits.Cols scores followed by its
// targets, rows of rank 0 first, then rank 1, .... nil on other ranks.
func gatherScored(c comm.Comm, logits, y *dense.Matrix, rows [3][]int32) ([3][]float32, error) {
	var out [3][]float32
	p, rank, cols := c.Size(), c.Rank(), logits.Cols
	counts := make([]int64, 3*p)
	var send []float32
	for i := range rows {
		counts[3*rank+i] = int64(len(rows[i]))
		for _, r := range rows[i] {
			send = append(send, logits.Row(int(r))...)
			send = append(send, y.Row(int(r))...)
		}
	}
	if err := c.AllreduceSumI64(counts); err != nil {
		return out, err
	}
	sc, sd, rc, rd := make([]int, p), make([]int, p), make([]int, p), make([]int, p)
	sc[0] = len(send)
	var recv []float32
	if rank == 0 {
		off := 0
		for r := range p {
			rc[r], rd[r] = int(counts[3*r]+counts[3*r+1]+counts[3*r+2])*2*cols, off
			off += rc[r]
		}
		recv = make([]float32, off)
	}
	req, err := c.IalltoallvF32(send, sc, sd, recv, rc, rd)
	if err == nil {
		err = req.Wait()
	}
	if err != nil || rank != 0 {
		return out, err
	}
	off := 0
	for r := range p {
		for i := range rows {
			n := int(counts[3*r+i]) * 2 * cols
			out[i] = append(out[i], recv[off:off+n]...)
			off += n
		}
	}
	return out, nil
}

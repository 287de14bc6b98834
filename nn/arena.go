package nn

import (
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/sysmem"
)

// Scratch lends activation-sized buffers for the length of one use: a
// Propagator given one in Pass.Scratch takes its temporary copies from it
// and gives them back before Forward or Backward returns, so that the
// storage serves the model's other buffers at other times.
type Scratch interface {
	// Take returns a rows×cols matrix whose contents are unspecified.
	Take(rows, cols int) *dense.Matrix
	// Give returns m (from Take) for reuse; m must not be used afterwards.
	Give(m *dense.Matrix)
}

// arena is the Model's buffer pool: every activation-sized buffer of the
// layers, the hidden stages, the input dropout and the Propagator's
// temporaries is taken from it when its value starts to live and given
// back when its last reader is done (the Model knows the order of a
// training step: forward saves what backward needs, backward frees it
// layer by layer). The same storage thus holds different tensors at
// different times, and the model's peak is that of the buffers live at
// once, not the sum of all of them. Sizes repeat from one step to the
// next, so after the first training step and evaluation pass nothing new
// is allocated. A nil *arena lends nothing: helpers then reshape the
// caller's own buffer, kept across calls (layers used on their own).
type arena struct {
	free  [][]float32 // buffers not lent, at full capacity
	bytes int64       // bytes allocated so far
	lent  int         // buffers lent and not given back
	work  dense.Work  // Gemm's scratch for the weight gradients
	// input is the model's input: gemm of its Matrix is its kind's
	// product (input.go).
	input *Input
}

// Take returns a rows×cols matrix: the smallest free buffer that holds
// it, or a new one.
func (a *arena) Take(rows, cols int) *dense.Matrix {
	n := rows * cols
	best := -1
	for i, b := range a.free {
		if cap(b) >= n && (best < 0 || cap(b) < cap(a.free[best])) {
			best = i
		}
	}
	a.lent++
	if best < 0 {
		a.bytes += 4 * int64(n)
		m := dense.New(rows, cols)
		// The aggregation gathers rows of these buffers at random: huge
		// pages spare it most TLB misses (10 % faster at 256 wide on the
		// lent Xeon, docs/RESULTS.md).
		sysmem.AdviseHugeFresh(m.Data)
		return m
	}
	d := a.free[best][:n]
	a.free[best] = a.free[len(a.free)-1]
	a.free = a.free[:len(a.free)-1]
	return &dense.Matrix{Rows: rows, Cols: cols, Data: d}
}

// Give returns m's storage to the free list.
func (a *arena) Give(m *dense.Matrix) {
	a.free = append(a.free, m.Data[:cap(m.Data)])
	a.lent--
}

// lend points *own at a rows×cols buffer: with an arena, one taken from it
// (what *own held is given back first); without, *own reshaped (the
// caller's own buffer, kept across calls).
func (a *arena) lend(own **dense.Matrix, rows, cols int) *dense.Matrix {
	if a == nil {
		*own = dense.Reshape(*own, rows, cols)
		return *own
	}
	a.reclaim(own)
	*own = a.Take(rows, cols)
	return *own
}

// reclaim gives *own back to the arena and clears it; without an arena
// the buffer stays with its owner.
func (a *arena) reclaim(own **dense.Matrix) {
	if a == nil || *own == nil {
		return
	}
	a.Give(*own)
	*own = nil
}

// gemm is every dense product of the layers: dense.Gemm with the pool's
// reusable scratch (the weight gradients' partial products, otherwise
// allocated anew by every call) and the model's precision; without an
// arena, dense.Gemm (float32). In float32 the result is dense.Gemm's bit
// for bit.
func (a *arena) gemm(tA, tB bool, alpha float32, x, y *dense.Matrix, beta float32, c *dense.Matrix) {
	if a == nil {
		dense.Gemm(tA, tB, alpha, x, y, beta, c)
		return
	}
	if a.input.isInput(x) {
		a.input.k.product(&a.work, tA, tB, alpha, y, beta, c)
		return
	}
	a.work.Gemm(tA, tB, alpha, x, y, beta, c)
}

// inputGrad is a transform-first layer's input gradient dL/dx = p1·w1ᵀ
// (+ p2·w2ᵀ when p2 is set), lent into *own: every row of x, the layer's
// input; but when x is the model's input and its kind computes the
// gradient of a dense term's rows only (label propagation on sparse
// features, inputKind.termRows), those rows, as a len(rows)×x.Cols matrix
// (row i for input row rows[i]): the gradient of the other rows is never
// read, and the whole of it would be as wide as the sparse columns.
func (a *arena) inputGrad(own **dense.Matrix, x, p1, w1, p2, w2 *dense.Matrix) *dense.Matrix {
	var rows []int32
	if a != nil && a.input.isInput(x) {
		rows = a.input.k.termRows()
	}
	if rows == nil {
		gx := a.lend(own, x.Rows, x.Cols)
		if p2 == nil {
			a.gemm(false, true, 1, p1, w1, 0, gx)
		} else {
			a.gemm2(true, p1, w1, p2, w2, 0, gx)
		}
		return gx
	}
	gx := a.lend(own, len(rows), x.Cols)
	r1 := a.gatherRows(p1, rows)
	defer a.Give(r1)
	if p2 == nil {
		a.gemm(false, true, 1, r1, w1, 0, gx)
		return gx
	}
	r2 := a.gatherRows(p2, rows)
	defer a.Give(r2)
	a.gemm2(true, r1, w1, r2, w2, 0, gx)
	return gx
}

// gatherRows returns the rows of m listed in rows, in a buffer of the pool.
func (a *arena) gatherRows(m *dense.Matrix, rows []int32) *dense.Matrix {
	out := a.Take(len(rows), m.Cols)
	for i, r := range rows {
		copy(out.Row(i), m.Row(int(r)))
	}
	return out
}

// gemm2 is c = x1·op(y1) + x2·op(y2) + beta·c (op: transposed when tB),
// dense.Work.Gemm2 with the model's precision: in float32 the two gemm
// calls bit for bit; without an arena, those two calls.
func (a *arena) gemm2(tB bool, x1, y1, x2, y2 *dense.Matrix, beta float32, c *dense.Matrix) {
	if a == nil {
		dense.Gemm(false, tB, 1, x1, y1, beta, c)
		dense.Gemm(false, tB, 1, x2, y2, 1, c)
		return
	}
	a.work.Gemm2(tB, x1, y1, x2, y2, beta, c)
}

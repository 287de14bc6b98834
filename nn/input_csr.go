package nn

import (
	"fmt"
	"math"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/par"
)

// csrInput is the compute of features stored as CSR rows
// (graph.SparseStore): bag-of-words and one-hot features at the cost of
// their non-zeros. The first layer never sees X itself: its two products
// with X, X·W forward and Xᵀ·G for the weight gradient, are sparse times
// dense (aggr's kernels, on X and on Xᵀ built once), and every model's
// first layer transforms before it aggregates, so X never crosses the
// network. Input dropout is drawn on the non-zeros only, with the very
// decisions the dense input dropout takes for those elements (a dense run
// and a sparse run of the same data and seed are the same run).
//
// An optional dense term D on some rows (label propagation's embedded
// labels, Input.SetTerm) makes the input X + D; its product is added after
// the sparse one. Model.Backward's input gradient then holds those rows
// only (row i for the term's row i), never the dense N×F gradient.
//
// Its matrix is a shape without data, which only its product reads.
type csrInput struct {
	x      *graph.CSR    // the features, read only
	handle *dense.Matrix // Rows×Cols without data: the input Model.Forward is given
	cur    *graph.CSR    // x's structure with the values of this pass (dropout): x's own values until a pass drops some
	xt     *graph.CSR    // Xᵀ with the values of this pass, built at the first pass that needs it
	toT    []int64       // entry k of x is entry toT[k] of xt
	tBase  []float32     // xt's values without dropout
	eng    *aggr.Engine
	op     *aggr.Op // X·W on cur
	opT    *aggr.Op // Xᵀ·G on xt
	jumps  *pcgJumps
	active bool // this pass dropped values
	owned  bool // cur has values of its own (a pass dropped some)

	rows    []int32       // rows of the dense term
	add     *dense.Matrix // the dense term, len(rows)×Cols
	addCur  *dense.Matrix // add after this pass's dropout: add itself when the pass drops nothing, else addOwn
	addOwn  *dense.Matrix // the dropped copy of add
	addKeep *dense.Matrix // its dropout scale per element (0 or 1/(1-P)), when active
}

// newCSRInput prepares sparse features (a canonical sparse feature matrix,
// graph.CheckSparseFeatures) for a model on engine eng (the products run
// on its threads and kernel).
func newCSRInput(st graph.FeatureStore, eng *aggr.Engine) (inputKind, error) {
	x := st.(*graph.SparseStore).X
	if err := graph.CheckSparseFeatures(x); err != nil {
		return nil, err
	}
	s := &csrInput{x: x, handle: &dense.Matrix{Rows: x.NumRows, Cols: x.NumCols}, jumps: newPCGJumps(), eng: eng}
	s.cur = &graph.CSR{NumRows: x.NumRows, NumCols: x.NumCols, Ptr: x.Ptr, Idx: x.Idx, Val: x.Val}
	s.op = eng.Prepare(s.cur)
	return s, nil
}

// transposed builds Xᵀ, its entries' positions and its values without
// dropout, once: the weight gradient and input dropout need them, an
// evaluation pass does not.
func (s *csrInput) transposed() {
	if s.xt != nil {
		return
	}
	s.xt = s.x.Transpose()
	s.toT = transposePositions(s.x, s.xt)
	s.tBase = s.xt.Val
	s.xt.Val = make([]float32, len(s.tBase))
	copy(s.xt.Val, s.tBase)
	s.opT = s.eng.Prepare(s.xt)
}

// transposePositions maps every entry of x to its place in xt =
// x.Transpose(): Transpose lists column u's entries by increasing row, so
// entry k of row r sits in row x.Idx[k] of xt at the next free slot.
func transposePositions(x, xt *graph.CSR) []int64 {
	next := make([]int64, xt.NumRows)
	copy(next, xt.Ptr[:xt.NumRows])
	pos := make([]int64, len(x.Idx))
	for r := range x.NumRows {
		for k := x.Ptr[r]; k < x.Ptr[r+1]; k++ {
			u := x.Idx[k]
			pos[k] = next[u]
			next[u]++
		}
	}
	return pos
}

// csrInputBytes is what a csrInput adds to the features: the values of
// the pass, Xᵀ (offsets, ids, values and those without dropout) and the
// entries' positions in Xᵀ.
func csrInputBytes(st graph.FeatureStore) int64 {
	nnz := st.NNZ()
	return 4*nnz + graph.SparseFeatureBytes(st.Cols(), nnz) + 4*nnz + 8*nnz
}

func (s *csrInput) matrix() *dense.Matrix { return s.handle }

func (s *csrInput) setTerm(rows []int32, add *dense.Matrix) { s.rows, s.add = rows, add }

// termRows are the term's rows: the first layer computes their input
// gradient only.
func (s *csrInput) termRows() []int32 {
	switch {
	case s.add == nil:
		return nil
	case s.rows == nil:
		return []int32{}
	}
	return s.rows
}

// dropout draws this pass's input dropout of drop's rate on the non-zeros
// and on the dense term's rows (none when !train or the rate is 0), with
// the decisions drop.Forward takes with seed for those elements of the
// dense input; the first layer reads the handle (product).
func (s *csrInput) dropout(drop *Dropout, train bool, seed uint64) *dense.Matrix {
	s.drop(train, drop.P, seed)
	return s.handle
}

// drop is dropout of rate p.
func (s *csrInput) drop(train bool, p float64, seed uint64) {
	wasActive := s.active
	s.active = train && p > 0
	if s.add != nil {
		s.addCur = s.add
		if s.active {
			s.addOwn = dense.Reshape(s.addOwn, s.add.Rows, s.add.Cols)
			copy(s.addOwn.Data, s.add.Data)
			s.addCur = s.addOwn
		}
	}
	if !s.active {
		if wasActive {
			copy(s.cur.Val, s.x.Val)
			copy(s.xt.Val, s.tBase)
		}
		return
	}
	s.transposed()
	if !s.owned {
		s.cur.Val, s.owned = make([]float32, len(s.x.Val)), true
	}
	scale := float32(1 / (1 - p))
	thresh := int32(math.Ceil(p * (1 << 16)))
	cols := int64(s.x.NumCols)
	x := s.x
	par.For(x.NumRows, 256, func(lo, hi int) {
		d := dropStream{jumps: s.jumps, seed: seed, thresh: thresh, block: -1}
		for r := lo; r < hi; r++ {
			for k := x.Ptr[r]; k < x.Ptr[r+1]; k++ {
				v := float32(0)
				if d.kept(int64(r)*cols + int64(x.Idx[k])) {
					v = x.Val[k] * scale
				}
				s.cur.Val[k] = v
				s.xt.Val[s.toT[k]] = v
			}
		}
	})
	if s.add == nil {
		return
	}
	s.addKeep = dense.Reshape(s.addKeep, s.add.Rows, s.add.Cols)
	par.For(len(s.rows), 1, func(lo, hi int) {
		d := dropStream{jumps: s.jumps, seed: seed, thresh: thresh, block: -1}
		for i := lo; i < hi; i++ {
			base := int64(s.rows[i]) * cols
			keep, row := s.addKeep.Row(i), s.addCur.Row(i)
			for j := range row {
				keep[j] = 0
				if d.kept(base + int64(j)) {
					keep[j] = scale
				}
				row[j] *= keep[j]
			}
		}
	})
}

// product is the first layer's gemm with the input: c = beta·c + X·y
// (tA false) or c = beta·c + Xᵀ·y (tA true), beta 0 or 1, plus the dense
// term's share.
func (s *csrInput) product(_ *dense.Work, tA, tB bool, alpha float32, y *dense.Matrix, beta float32, c *dense.Matrix) {
	if tB || alpha != 1 || (beta != 0 && beta != 1) {
		panic(fmt.Sprintf("nn: sparse input: product with tB=%v alpha=%g beta=%g: the layers ask for none", tB, alpha, beta))
	}
	if tA {
		s.transposed()
		s.opT.Apply(y, c, beta == 1)
	} else {
		s.op.Apply(y, c, beta == 1)
	}
	if s.add == nil || len(s.rows) == 0 {
		return
	}
	if tA { // c += Dᵀ·y[rows]
		yr := dense.New(len(s.rows), y.Cols)
		for i, r := range s.rows {
			copy(yr.Row(i), y.Row(int(r)))
		}
		dense.Gemm(true, false, 1, s.addCur, yr, 1, c)
		return
	}
	dy := dense.New(len(s.rows), y.Cols) // c[rows] += D·y
	dense.Gemm(false, false, 1, s.addCur, y, 0, dy)
	for i, r := range s.rows {
		out := c.Row(int(r))
		for j, v := range dy.Row(i) {
			out[j] += v
		}
	}
}

// inputGrad maps the gradient of the dropped input to that of the input.
// With a dense term g holds the term's rows only (row i for input row
// rows[i], what label propagation reads; the first layer computes no
// other: arena.inputGrad); without, g is every row's gradient of the
// dropped input.
func (s *csrInput) inputGrad(_ *Dropout, g *dense.Matrix) *dense.Matrix {
	if !s.active || s.add == nil {
		return g
	}
	for i := range s.rows {
		row := g.Row(i)
		for j, k := range s.addKeep.Row(i) {
			row[j] *= k
		}
	}
	return g
}

// csrTermValues: the term on the training rows, its dropped copy, its
// dropout scales and its gradient.
func csrTermValues(_, trainRows, cols int64) int64 { return 4 * trainRows * cols }

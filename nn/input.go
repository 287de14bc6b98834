package nn

import (
	"errors"
	"fmt"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
)

// Input is a model's input features: graph.Features of some storage kind,
// mapped through inputKinds to the compute of that kind. The first layer
// asks it for its two products with the features, X·W forward and Xᵀ·G for
// the weight gradient (arena.gemm), never which kind they are; input
// dropout and label propagation's dense term (SetTerm) are the kind's too.
// Give Model.Forward the matrix Matrix returns after Model.SetInput.
type Input struct {
	k              inputKind
	rows, cols     int
	transformFirst bool // inputKindRow.transformFirst
}

// inputKind is the compute of one storage kind of features (its file:
// input_dense.go, input_csr.go).
type inputKind interface {
	// matrix is what Model.Forward is given: the features (with the term)
	// as a dense matrix, or a shape without data that only the kind's
	// product reads.
	matrix() *dense.Matrix
	// setTerm sets the dense term: row i of add is added to input row
	// rows[i] (add nil: none); rows and add are checked.
	setTerm(rows []int32, add *dense.Matrix)
	// dropout is the input dropout of a pass (d: the model's input
	// Dropout, with its rate and seed): the input the first layer reads.
	dropout(d *Dropout, train bool, seed uint64) *dense.Matrix
	// product is the first layer's gemm with the input:
	// c = beta·c + alpha·op(X)·op(y) (w: the arena's scratch).
	product(w *dense.Work, tA, tB bool, alpha float32, y *dense.Matrix, beta float32, c *dense.Matrix)
	// inputGrad maps the gradient of the dropped input to that of the
	// input (d as in dropout).
	inputGrad(d *Dropout, g *dense.Matrix) *dense.Matrix
	// termRows are the rows whose input gradient the first layer computes
	// (as a len(rows)×Cols matrix) when the others are never read; nil:
	// every row.
	termRows() []int32
}

// inputKindRow is one row of inputKinds.
type inputKindRow struct {
	new func(st graph.FeatureStore, eng *aggr.Engine) (inputKind, error)
	// bytes is the memory the compute adds to the store's own.
	bytes func(st graph.FeatureStore) int64
	// transformFirst: the first layer must transform the input before it
	// aggregates it (the kind has no dense rows to aggregate).
	transformFirst bool
	// termValues is the float32 values label propagation's term costs on
	// an input of rows × cols with trainRows training rows.
	termValues func(rows, trainRows, cols int64) int64
}

// inputKinds maps each storage kind (graph.FeatureStore.Kind) to its
// compute: a new kind is its file and a row here.
var inputKinds = map[string]inputKindRow{
	"dense": {new: newDenseInput, bytes: func(graph.FeatureStore) int64 { return 0 }, termValues: denseTermValues},
	"csr":   {new: newCSRInput, bytes: csrInputBytes, transformFirst: true, termValues: csrTermValues},
}

// NewInput prepares features f for a model on engine eng (the products of
// kinds that run their own kernels run on its threads).
func NewInput(f graph.Features, eng *aggr.Engine) (*Input, error) {
	if !f.Present() {
		return nil, errors.New("nn: input: no features")
	}
	row, ok := inputKinds[f.Kind()]
	if !ok {
		return nil, fmt.Errorf("nn: input: no compute for %s features", f.Kind())
	}
	k, err := row.new(f.Store(), eng)
	if err != nil {
		return nil, fmt.Errorf("nn: %s input: %w", f.Kind(), err)
	}
	return &Input{k: k, rows: f.Rows(), cols: f.Cols(), transformFirst: row.transformFirst}, nil
}

// InputBytes is the memory NewInput adds to the features' own.
func InputBytes(f graph.Features) int64 {
	if row, ok := inputKinds[f.Kind()]; ok {
		return row.bytes(f.Store())
	}
	return 0
}

// TermValues is the float32 values label propagation's term adds to an
// input of features f's kind with trainRows training rows (cols columns).
func TermValues(f graph.Features, trainRows int64) int64 {
	if row, ok := inputKinds[f.Kind()]; ok {
		return row.termValues(int64(f.Rows()), trainRows, int64(f.Cols()))
	}
	return 0
}

// TransformsFirst reports whether features of f's kind need a model whose
// first layer transforms them before it aggregates (Model.TakesSparseInput).
func TransformsFirst(f graph.Features) bool { return inputKinds[f.Kind()].transformFirst }

// Matrix is the input to give Model.Forward.
func (in *Input) Matrix() *dense.Matrix { return in.k.matrix() }

// SetTerm sets a dense term added to the input: row i of add to input row
// rows[i] (add nil: none), label propagation's embedded labels. add must
// stay unmodified until the Backward of the next Forward. With a term,
// Model.Backward's input gradient holds the term's rows only (row i for
// rows[i]) when TermGradRows says so, else every row.
func (in *Input) SetTerm(rows []int32, add *dense.Matrix) error {
	if add == nil {
		in.k.setTerm(nil, nil)
		return nil
	}
	if add.Rows != len(rows) || add.Cols != in.cols {
		return fmt.Errorf("nn: input: dense term is %d×%d, want %d×%d", add.Rows, add.Cols, len(rows), in.cols)
	}
	for _, r := range rows {
		if r < 0 || int(r) >= in.rows {
			return fmt.Errorf("nn: input: dense term row %d outside [0,%d)", r, in.rows)
		}
	}
	in.k.setTerm(rows, add)
	return nil
}

// TermGradRows reports whether Model.Backward's input gradient holds the
// term's rows only (see SetTerm).
func (in *Input) TermGradRows() bool { return in.k.termRows() != nil }

// errSparseFirst: the model would read the input other than by X·W.
var errSparseFirst = errors.New("the first layer aggregates its input before transforming it (the input is narrower than the layer's output), or the model's body reads a dense input: give the features dense")

// TakesSparseInput reports whether the model's first layer transforms its
// input before it aggregates (every layer does when the input is wider
// than the layer's output), which an input of a kind without dense rows
// (TransformsFirst) needs; a model with a body (gcnii, jumping knowledge)
// reads its input densely.
func (m *Model) TakesSparseInput() bool {
	if m.body != nil { // a body reads its input as a dense matrix
		return false
	}
	ia, ok := m.convs[0].(inputAggregator)
	return !ok || !ia.aggregatesInput()
}

// SetInput makes Forward, given in.Matrix(), run on the input in (nil:
// none).
func (m *Model) SetInput(in *Input) error {
	if in != nil {
		if in.rows != m.op.Rows() || in.cols != m.cfg.In {
			return fmt.Errorf("nn: input is %d×%d, want %d×%d", in.rows, in.cols, m.op.Rows(), m.cfg.In)
		}
		if in.transformFirst && !m.TakesSparseInput() {
			return fmt.Errorf("nn: input: %w", errSparseFirst)
		}
	}
	m.input, m.pool.input = in, in
	return nil
}

// isInput reports whether x is the matrix of the model's input.
func (in *Input) isInput(x *dense.Matrix) bool { return in != nil && x == in.k.matrix() }

// dropInput is the input dropout of Forward: the input's kind's, else
// Dropout.
func (m *Model) dropInput(x *dense.Matrix, train bool) *dense.Matrix {
	if m.input.isInput(x) {
		return m.input.k.dropout(m.drops[0], train, m.dropSeedFor(0))
	}
	return m.drops[0].Forward(x, train, false, m.dropSeedFor(0))
}

// inputGrad is the last step of Backward: dL/dx from dL/d(dropped x).
func (m *Model) inputGrad(gx *dense.Matrix) *dense.Matrix {
	if m.input.isInput(m.x) {
		return m.input.k.inputGrad(m.drops[0], gx)
	}
	return m.drops[0].Backward(gx)
}

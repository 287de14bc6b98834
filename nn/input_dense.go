package nn

import (
	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
)

// denseInput is the compute of dense features (graph.DenseStore): the
// model reads them as a dense matrix, input dropout is Dropout's, the
// products are dense.Gemm's, and a dense term is added to a copy of the
// features before them (the rows it held last time put back first).
type denseInput struct {
	x    *dense.Matrix // the features
	own  *dense.Matrix // x with the term, once a term was set
	cur  *dense.Matrix // x, or own while a term is set
	rows []int32       // the rows the term was added to in own
}

func newDenseInput(st graph.FeatureStore, _ *aggr.Engine) (inputKind, error) {
	d := st.(*graph.DenseStore)
	x := &dense.Matrix{Rows: d.Rows(), Cols: d.Cols(), Data: d.Data}
	return &denseInput{x: x, cur: x}, nil
}

func (d *denseInput) matrix() *dense.Matrix { return d.cur }

// setTerm adds add to rows of own, a copy of x made once: the rows of
// the previous term are copied back from x first.
func (d *denseInput) setTerm(rows []int32, add *dense.Matrix) {
	if add == nil {
		d.cur = d.x
		return
	}
	if d.own == nil {
		d.own = dense.New(d.x.Rows, d.x.Cols)
		copy(d.own.Data, d.x.Data)
	} else {
		for _, v := range d.rows {
			copy(d.own.Row(int(v)), d.x.Row(int(v)))
		}
	}
	for i, v := range rows {
		dst := d.own.Row(int(v))
		for j, a := range add.Row(i) {
			dst[j] += a
		}
	}
	d.rows = append(d.rows[:0], rows...)
	d.cur = d.own
}

func (d *denseInput) dropout(drop *Dropout, train bool, seed uint64) *dense.Matrix {
	return drop.Forward(d.cur, train, false, seed)
}

func (d *denseInput) product(w *dense.Work, tA, tB bool, alpha float32, y *dense.Matrix, beta float32, c *dense.Matrix) {
	w.Gemm(tA, tB, alpha, d.cur, y, beta, c)
}

func (d *denseInput) inputGrad(drop *Dropout, g *dense.Matrix) *dense.Matrix { return drop.Backward(g) }

func (d *denseInput) termRows() []int32 { return nil }

// denseTermValues: the input copied with the term added to its rows.
func denseTermValues(rows, _, cols int64) int64 { return rows * cols }

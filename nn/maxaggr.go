package nn

import (
	"fmt"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
)

// MaxAggregator is the graph operator of max-aggregating layers (OpMax,
// PyG's aggr="max"): for every owned node v,
//
//	out[v, j] = max_{u ∈ N(v)} x[u, j]   (0 when v has no in-neighbour)
//
// Its backward pass routes every gradient element to the one source that
// gave the maximum (the arg max, which the forward pass records per
// element): gx[u, j] = Σ_{v: arg[v, j] = u} gout[v, j]. Among sources of
// equal value the first one the operator meets wins (LocalMax: the
// in-edge order); a tie between different sources at a value other than 0
// is measure-zero for trained activations, and the ties at 0 of ReLU and
// dropout outputs route a gradient that the ReLU's mask zeroes anyway.
// LocalMax is the single-process operator; in a distributed run (package
// exchange) partial maxima and raw rows come over the network and the
// gradient of a remote winner goes back to its rank.
type MaxAggregator interface {
	Operator
	// MaxForward sets out (Rows × w) from x (Rows × w) as above and keeps
	// the arg max of layer p.Layer for MaxBackward.
	MaxForward(p Pass, x, out *dense.Matrix) error
	// MaxBackward sets gx (overwritten; Rows × w) to the gradient of the
	// last MaxForward of p.Layer's input given gout, that of its output.
	MaxBackward(p Pass, gout, gx *dense.Matrix) error
}

// LocalMax is the single-process MaxAggregator over one graph whose row v
// lists v's in-neighbours.
type LocalMax struct {
	op   *aggr.Op
	rows int
	args map[int][]int32 // per layer, the arg max of its last MaxForward (source row per element)
	w    map[int]int     // per layer, the width of that MaxForward
}

// NewLocalMax returns the operator of graph a (square: row v lists the
// in-neighbours of v; values unused) on engine e.
func NewLocalMax(a *graph.CSR, e *aggr.Engine) (*LocalMax, error) {
	if a.NumRows != a.NumCols {
		return nil, fmt.Errorf("nn: max operator of a %d×%d graph, want a square one", a.NumRows, a.NumCols)
	}
	if err := a.Validate(); err != nil {
		return nil, fmt.Errorf("nn: %w", err)
	}
	return &LocalMax{op: e.Prepare(a), rows: a.NumRows, args: map[int][]int32{}, w: map[int]int{}}, nil
}

// Rows returns the number of nodes.
func (l *LocalMax) Rows() int { return l.rows }

// MaxForward implements MaxAggregator.
func (l *LocalMax) MaxForward(p Pass, x, out *dense.Matrix) error {
	if err := CheckMax(l.rows, x, out); err != nil {
		return err
	}
	arg := ResizeArgs(l.args[p.Layer], len(out.Data))
	l.op.ApplyMax(x, out, arg, 0, false)
	l.args[p.Layer], l.w[p.Layer] = arg, x.Cols
	return nil
}

// MaxBackward implements MaxAggregator.
func (l *LocalMax) MaxBackward(p Pass, gout, gx *dense.Matrix) error {
	if err := CheckMaxGrad(l.rows, l.w[p.Layer], l.args[p.Layer] != nil, p.Layer, gout, gx); err != nil {
		return err
	}
	l.op.ScatterMax(gout, l.args[p.Layer], 0, gx, false)
	return nil
}

// CheckMax validates MaxForward's operands for rows nodes.
func CheckMax(rows int, x, out *dense.Matrix) error {
	if x.Rows != rows || out.Rows != rows || x.Cols != out.Cols || len(x.Data) != x.Rows*x.Cols || len(out.Data) != out.Rows*out.Cols {
		return fmt.Errorf("nn: max aggregation on %d rows: x %d×%d, out %d×%d", rows, x.Rows, x.Cols, out.Rows, out.Cols)
	}
	return nil
}

// CheckMaxGrad validates MaxBackward's operands against the forward pass
// of layer (width w; seen: it ran).
func CheckMaxGrad(rows, w int, seen bool, layer int, gout, gx *dense.Matrix) error {
	if !seen {
		return fmt.Errorf("nn: max aggregation backward of layer %d without its forward", layer)
	}
	if gout.Rows != rows || gx.Rows != rows || gout.Cols != w || gx.Cols != w {
		return fmt.Errorf("nn: max aggregation backward: gout %d×%d, gx %d×%d, want %d×%d", gout.Rows, gout.Cols, gx.Rows, gx.Cols, rows, w)
	}
	return nil
}

// ResizeArgs returns a of length n, reallocated when too short.
func ResizeArgs(a []int32, n int) []int32 {
	if cap(a) < n {
		return make([]int32, n)
	}
	return a[:n]
}

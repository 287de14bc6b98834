package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/supergcn/supergcn/dense"
)

// TestBatchNormModelGradients: GCN and SAGE with batch normalisation
// against finite differences (training passes: batch statistics), 2 and 3
// layers.
func TestBatchNormModelGradients(t *testing.T) {
	for _, model := range []string{"gcn", "sage"} {
		for _, layers := range []int{2, 3} {
			t.Run(fmt.Sprintf("%s_%d", model, layers), func(t *testing.T) { checkModelGradients(t, model, "batch", layers) })
		}
	}
}

// TestBatchNormStatistics: a training pass normalises every feature to
// mean 0 and biased variance 1 over the rows, updates the running
// statistics as torch.nn.BatchNorm1d (momentum 0.1, unbiased variance),
// and an evaluation pass normalises with those.
func TestBatchNormStatistics(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	x := randMat(r, 9, 3)
	b := NewBatchNorm("bn", 3, nil)
	y, err := b.Forward(true, x)
	if err != nil {
		t.Fatal(err)
	}
	for j := range 3 {
		var m, v, xm, xv float64
		for i := range 9 {
			m += float64(y.Data[i*3+j]) / 9
			xm += float64(x.Data[i*3+j]) / 9
		}
		for i := range 9 {
			v += math.Pow(float64(y.Data[i*3+j])-m, 2) / 9
			xv += math.Pow(float64(x.Data[i*3+j])-xm, 2) / 8
		}
		if math.Abs(m) > 1e-6 || math.Abs(v-1) > 1e-3 {
			t.Fatalf("feature %d: mean %g, variance %g", j, m, v)
		}
		if math.Abs(float64(b.Mean.W[j])-0.1*xm) > 1e-6 || math.Abs(float64(b.Var.W[j])-(0.9+0.1*xv)) > 1e-6 {
			t.Fatalf("feature %d: running %g %g, want %g %g", j, b.Mean.W[j], b.Var.W[j], 0.1*xm, 0.9+0.1*xv)
		}
	}
	y, _ = b.Forward(false, x)
	want := float32((float64(x.Data[4]) - float64(b.Mean.W[1])) / math.Sqrt(float64(b.Var.W[1])+1e-5))
	if math.Abs(float64(y.Data[4]-want)) > 1e-6 {
		t.Fatalf("evaluation: %g, want %g", y.Data[4], want)
	}
}

// rowsOf is rows [lo, hi) of x (sharing its storage).
func rowsOf(x *dense.Matrix, lo, hi int) *dense.Matrix {
	return &dense.Matrix{Rows: hi - lo, Cols: x.Cols, Data: x.Data[lo*x.Cols : hi*x.Cols]}
}

// TestBatchNormSplitRows: rows 0–5 of a graph on this rank, whose Reducer
// adds the other rank's sums (rows 6–9, the same three sums in the same
// order), normalise and back-propagate as one BatchNorm over all rows.
func TestBatchNormSplitRows(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	x, g := randMat(r, 10, 4), randMat(r, 10, 4)
	whole := NewBatchNorm("bn", 4, nil)
	y, _ := whole.Forward(true, x)
	gx, _ := whole.Backward(g)
	bot := rowsOf(x, 6, 10)
	all := featureSums(x, func(v float32, _ int) float64 { return float64(v) })
	var others [][]float64
	others = append(others, featureSums(bot, func(v float32, _ int) float64 { return float64(v) }))
	others = append(others, featureSums(bot, func(v float32, j int) float64 { d := float64(v) - all[j]/all[4]; return d * d }))
	back := make([]float64, 8) // the backward's: the other rank's Σg·x̂ and Σg
	for i := 6; i < 10; i++ {
		for j := range 4 {
			back[j] += float64(g.Data[i*4+j] * whole.xhat.Data[i*4+j])
			back[4+j] += float64(g.Data[i*4+j])
		}
	}
	others = append(others, back)
	calls := 0
	part := NewBatchNorm("bn", 4, reducerFunc(func(v []float64) error {
		for i := range v {
			v[i] += others[calls][i]
		}
		calls++
		return nil
	}))
	py, err := part.Forward(true, rowsOf(x, 0, 6))
	if err != nil {
		t.Fatal(err)
	}
	pgx, err := part.Backward(rowsOf(g, 0, 6))
	if err != nil {
		t.Fatal(err)
	}
	for i := range py.Data {
		if math.Abs(float64(py.Data[i]-y.Data[i])) > 1e-5 || math.Abs(float64(pgx.Data[i]-gx.Data[i])) > 1e-5 {
			t.Fatalf("element %d: %g/%g, whole %g/%g", i, py.Data[i], pgx.Data[i], y.Data[i], gx.Data[i])
		}
	}
	if calls != 3 {
		t.Fatalf("%d sums over the ranks, want 3", calls)
	}
}

type reducerFunc func([]float64) error

func (f reducerFunc) SumFloat64(x []float64) error { return f(x) }

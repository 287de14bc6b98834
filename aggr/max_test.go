package aggr

import (
	"testing"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
)

// TestApplyMaxMerge: a second product with merge set combines with the
// first (strictly greater wins, a row without a value takes any), rows
// without entries stay 0 with NoArg, and ScatterMax routes each gradient
// value to the product its argument names.
func TestApplyMaxMerge(t *testing.T) {
	e, err := New(2, "generic")
	if err != nil {
		t.Fatal(err)
	}
	// local: row 0 ← {0, 1}, row 1 ← {}, row 2 ← {}; halo: row 0 ← {0}, row 1 ← {1}, row 2 ← {}
	local := e.Prepare(graph.FromCOO(3, 2, []int32{0, 1}, []int32{0, 0}, nil))
	halo := e.Prepare(graph.FromCOO(3, 2, []int32{0, 1}, []int32{0, 1}, nil))
	x := &dense.Matrix{Rows: 2, Cols: 2, Data: []float32{1, 5, 3, 2}}
	recv := &dense.Matrix{Rows: 2, Cols: 2, Data: []float32{3, 7, -4, -6}}
	out := dense.New(3, 2)
	arg := make([]int32, 6)
	local.ApplyMax(x, out, arg, 0, false)
	halo.ApplyMax(recv, out, arg, 10, true)
	wantOut := []float32{3, 7, -4, -6, 0, 0}
	wantArg := []int32{1, 10, 11, 11, NoArg, NoArg} // column 0 of row 0: a tie at 3, the local one came first
	for i := range wantOut {
		if out.Data[i] != wantOut[i] || arg[i] != wantArg[i] {
			t.Fatalf("element %d: %g (arg %d), want %g (arg %d)", i, out.Data[i], arg[i], wantOut[i], wantArg[i])
		}
	}
	g := &dense.Matrix{Rows: 3, Cols: 2, Data: []float32{1, 2, 3, 4, 5, 6}}
	gx, back := dense.New(2, 2), dense.New(2, 2)
	ScatterMax(g, arg, 0, gx, false)
	ScatterMax(g, arg, 10, back, false)
	if want := []float32{0, 0, 1, 0}; !equal(gx.Data, want) {
		t.Fatalf("local gradient %v, want %v", gx.Data, want)
	}
	if want := []float32{0, 2, 3, 4}; !equal(back.Data, want) {
		t.Fatalf("received rows' gradient %v, want %v", back.Data, want)
	}
}

func equal(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

package attn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/supergcn/supergcn/aggr"
)

// degGraph is rows × cols with the given in-degrees (random, repeated
// columns): hubs of hundreds of edges included.
func degGraph(t *testing.T, r *rand.Rand, cols int, degs []int) *Graph {
	t.Helper()
	ptr := []int64{0}
	var idx []int32
	for _, d := range degs {
		for range d {
			idx = append(idx, int32(r.IntN(cols)))
		}
		ptr = append(ptr, int64(len(idx)))
	}
	g, err := NewGraph(len(degs), cols, ptr, idx)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Rows of many edges (hubs) give the definition's
// output and its gradients, with every kernel.
func TestHighDegreeRows(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	degs := []int{0, 1, 63, 64, 65, 3, 200, 129, 2}
	const cols = 90
	sp := Spec{Heads: 2, Width: 5, Slope: 0.2, Drop: 0.3, Seed: 4}
	g := degGraph(t, r, cols, degs)
	h, hf, rows := sp.Heads, sp.Heads*sp.Width, len(degs)
	z, src, dst := randVec(r, cols*hf), randVec(r, cols*h), randVec(r, rows*h)
	gout := randVec(r, rows*hf)
	kernels := []RowsW{GenericRowsW}
	for _, name := range aggr.Kernels() {
		e, err := aggr.New(1, name)
		if err != nil {
			t.Fatal(err)
		}
		kernels = append(kernels, e.RowsW())
	}
	for k, kern := range kernels {
		var st State
		if err := Forward(g, sp, z, src, dst, Ids{}, kern, &st); err != nil {
			t.Fatal(err)
		}
		o, want := output(sp, &st), reference(g, sp, z, src, dst)
		for i := range want {
			if math.Abs(float64(o[i])-want[i]) > 1e-4*(1+math.Abs(want[i])) {
				t.Fatalf("kernel %d: out[%d] = %g, want %g", k, i, o[i], want[i])
			}
		}
		checkBackwardFD(t, g, sp, kern, z, src, dst, gout, 3e-3)
	}
}

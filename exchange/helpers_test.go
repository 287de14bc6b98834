package exchange

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/nn"
)

// randomDataset builds a directed multigraph of n nodes with about deg
// in-edges per node (self-loops and parallel edges possible, some nodes
// without in-edges) and featDim random features. The last iso nodes have no
// edges at all.
// testEngine is a one-thread aggregation engine with the default kernel
// ($SUPERGCN_KERNEL or the best); tests run with a valid environment.
func testEngine() *aggr.Engine {
	e, err := aggr.New(1, "")
	if err != nil {
		panic(err)
	}
	return e
}

func randomDataset(rng *rand.Rand, n, deg, featDim int, iso ...int) *graph.Dataset {
	m := n
	if len(iso) > 0 {
		m = n - iso[0]
	}
	var src, dst []int32
	for v := 0; v < m; v++ {
		if rng.IntN(5) == 0 {
			continue // no in-edges
		}
		k := rng.IntN(2*deg + 1)
		for i := 0; i < k; i++ {
			src = append(src, int32(rng.IntN(m)))
			dst = append(dst, int32(v))
		}
	}
	ds := &graph.Dataset{Name: "random", Graph: graph.FromCOO(n, n, src, dst, nil), FeatDim: featDim}
	ds.Features = graph.DenseX(make([]float32, n*featDim), n, featDim)
	for i := range graph.DenseData(ds.Features) {
		graph.DenseData(ds.Features)[i] = rng.Float32()*2 - 1
	}
	return ds
}

// refOperator applies Â of kind to x with the whole graph (float64), the
// definition the exchange must match: on a weighted graph entry (v,u) is
// the edge's weight, the GCN degree the sum of the in-edge weights + 1 and
// the mean's divisor the in-edge count.
func refOperator(g *graph.CSR, kind nn.OpKind, x *dense.Matrix, transpose bool) *dense.Matrix {
	n, w := g.NumRows, x.Cols
	deg, wdeg := make([]float64, n), make([]float64, n)
	weight := func(k int64) float64 {
		if g.Val == nil {
			return 1
		}
		return float64(g.Val[k])
	}
	for v := 0; v < n; v++ {
		deg[v] = float64(g.Degree(v))
		for k := g.Ptr[v]; k < g.Ptr[v+1]; k++ {
			wdeg[v] += weight(k)
		}
	}
	left, right := make([]float64, n), make([]float64, n)
	for v := 0; v < n; v++ {
		switch kind {
		case nn.OpGCN:
			left[v] = 1 / math.Sqrt(wdeg[v]+1)
			right[v] = left[v]
		case nn.OpMean:
			if deg[v] > 0 {
				left[v] = 1 / deg[v]
			}
			right[v] = 1
		default:
			left[v], right[v] = 1, 1
		}
	}
	acc := make([]float64, n*w)
	add := func(v, u int, wt float64) { // Â[v][u] contribution
		a, b := v, u
		if transpose {
			a, b = u, v
		}
		s := left[v] * wt * right[u]
		for j := 0; j < w; j++ {
			acc[a*w+j] += s * float64(x.Data[b*w+j])
		}
	}
	for v := 0; v < n; v++ {
		for k := g.Ptr[v]; k < g.Ptr[v+1]; k++ {
			add(v, int(g.Idx[k]), weight(k))
		}
		if kind == nn.OpGCN {
			add(v, v, 1)
		}
	}
	out := dense.New(n, w)
	for i, f := range acc {
		out.Data[i] = float32(f)
	}
	return out
}

func randomMatrix(rng *rand.Rand, rows, cols int) *dense.Matrix {
	m := dense.New(rows, cols)
	for i := range m.Data {
		m.Data[i] = rng.Float32()*2 - 1
	}
	return m
}

// assertClose fails unless got and want agree to tol relative to the
// largest magnitude of want (plus a tiny absolute floor).
func assertClose(t *testing.T, what string, got, want *dense.Matrix, tol float64) {
	t.Helper()
	if !dense.SameShape(got, want) {
		t.Fatalf("%s: shape %d×%d, want %d×%d", what, got.Rows, got.Cols, want.Rows, want.Cols)
	}
	scale := 1e-6
	for _, v := range want.Data {
		scale = math.Max(scale, math.Abs(float64(v)))
	}
	for i := range got.Data {
		if d := math.Abs(float64(got.Data[i] - want.Data[i])); d > tol*scale {
			t.Fatalf("%s: element %d (row %d) = %g, want %g (|diff| %g > %g)", what, i, i/max(1, got.Cols),
				got.Data[i], want.Data[i], d, tol*scale)
		}
	}
}

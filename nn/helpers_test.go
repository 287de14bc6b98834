package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/supergcn/supergcn/dense"
)

// denseProp is a test Propagator applying a small dense operator A:
// Forward out = A·x, Backward gx = Aᵀ·gout. It counts its calls.
type denseProp struct {
	a              *dense.Matrix
	fwdN, bwdN     int
	exactN         int // Forwards with Pass.Exact
	lastFwdLayer   int
	failOnBackward bool
}

func (d *denseProp) Rows() int { return d.a.Rows }

func (d *denseProp) Forward(p Pass, x, out *dense.Matrix) error {
	d.fwdN++
	if p.Exact {
		d.exactN++
	}
	d.lastFwdLayer = p.Layer
	dense.Gemm(false, false, 1, d.a, x, 0, out)
	return nil
}

func (d *denseProp) Backward(p Pass, gout, gx *dense.Matrix) error {
	d.bwdN++
	dense.Gemm(true, false, 1, d.a, gout, 0, gx)
	return nil
}

// gcnAdj returns D^-1/2 (A+I) D^-1/2 for the undirected edge list on n nodes.
func gcnAdj(n int, edges [][2]int) *dense.Matrix {
	a := dense.New(n, n)
	for i := range n {
		a.Data[i*n+i] = 1
	}
	for _, e := range edges {
		a.Data[e[0]*n+e[1]] = 1
		a.Data[e[1]*n+e[0]] = 1
	}
	deg := make([]float64, n)
	for i := range n {
		for j := range n {
			deg[i] += float64(a.Data[i*n+j])
		}
	}
	for i := range n {
		for j := range n {
			a.Data[i*n+j] *= float32(1 / math.Sqrt(deg[i]*deg[j]))
		}
	}
	return a
}

// skewed returns diag(L)·a·diag(R) with distinct L and R, an asymmetric
// operator, so that tests catch Â and Âᵀ mixed up.
func skewed(a *dense.Matrix) *dense.Matrix {
	s := dense.New(a.Rows, a.Cols)
	for i := range a.Rows {
		for j := range a.Cols {
			s.Data[i*a.Cols+j] = a.Data[i*a.Cols+j] * (1 + 0.1*float32(i)) / (1 + 0.2*float32(j))
		}
	}
	return s
}

// meanAdj returns the in-neighbour mean operator for directed edges u→v
// (row v averages the rows of its in-neighbours; no in-edges → zero row).
func meanAdj(n int, edges [][2]int) *dense.Matrix {
	a := dense.New(n, n)
	deg := make([]float32, n)
	for _, e := range edges {
		a.Data[e[1]*n+e[0]]++
		deg[e[1]]++
	}
	for v := range n {
		for u := range n {
			if deg[v] > 0 {
				a.Data[v*n+u] /= deg[v]
			}
		}
	}
	return a
}

// smallEdges is a fixed irregular graph on 7 nodes; node 6 has no in-edges.
var smallEdges = [][2]int{{0, 1}, {1, 2}, {2, 0}, {3, 1}, {4, 3}, {5, 4}, {0, 5}, {6, 2}, {2, 3}, {1, 4}}

func randMat(r *rand.Rand, rows, cols int) *dense.Matrix {
	m := dense.New(rows, cols)
	for i := range m.Data {
		m.Data[i] = 2*r.Float32() - 1
	}
	return m
}

func randF64(r *rand.Rand, n int) []float64 {
	c := make([]float64, n)
	for i := range c {
		c[i] = 2*r.Float64() - 1
	}
	return c
}

// dot is Σ c[i]·m[i] in float64: a linear loss whose gradient w.r.t. m is c.
func dot(c []float64, m *dense.Matrix) float64 {
	var s float64
	for i, v := range m.Data {
		s += c[i] * float64(v)
	}
	return s
}

// f32 converts c to float32 (a gradient matrix of the given shape).
func f32(c []float64, rows, cols int) *dense.Matrix {
	m := dense.New(rows, cols)
	for i, v := range c {
		m.Data[i] = float32(v)
	}
	return m
}

// checkFD compares the analytic gradient of loss w.r.t. w with central
// differences of step h. It requires the relative error of the whole vector
// to be below tol and every element to agree within tol·max|g| + tol·|g_i|.
func checkFD(t *testing.T, name string, w, analytic []float32, loss func() float64, h, tol float64) {
	t.Helper()
	if len(w) != len(analytic) {
		t.Fatalf("%s: %d values, %d gradients", name, len(w), len(analytic))
	}
	an := append([]float32(nil), analytic...) // loss() may overwrite analytic
	num := make([]float64, len(w))
	for i := range w {
		orig := w[i]
		w[i] = orig + float32(h)
		lp := loss()
		w[i] = orig - float32(h)
		lm := loss()
		w[i] = orig
		// Use the step actually taken in float32.
		num[i] = (lp - lm) / (float64(orig+float32(h)) - float64(orig-float32(h)))
	}
	var diff, norm, gmax float64
	for i, g := range an {
		d := float64(g) - num[i]
		diff += d * d
		norm += num[i] * num[i]
		gmax = math.Max(gmax, math.Abs(num[i]))
	}
	if norm == 0 {
		t.Fatalf("%s: numerical gradient is identically zero; the check would be vacuous", name)
	}
	if rel := math.Sqrt(diff / norm); rel > tol {
		t.Errorf("%s: relative error %.3g > %g\nanalytic %v\nnumeric  %v", name, rel, tol, an, num)
		return
	}
	for i, g := range an {
		if d := math.Abs(float64(g) - num[i]); d > tol*gmax+tol*math.Abs(num[i]) {
			t.Errorf("%s[%d]: analytic %g, numeric %g", name, i, g, num[i])
		}
	}
}

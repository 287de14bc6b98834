package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/supergcn/supergcn/dense"
)

// naiveLinear returns A·X·W (+ X·WR when wr != nil) + b in float64.
func naiveLayer(a, x, w, wr *dense.Matrix, b []float32) []float64 {
	n, in, out := x.Rows, x.Cols, w.Cols
	ax := make([]float64, n*in)
	for v := range n {
		for u := range n {
			for j := range in {
				ax[v*in+j] += float64(a.Data[v*n+u]) * float64(x.Data[u*in+j])
			}
		}
	}
	res := make([]float64, n*out)
	for v := range n {
		for o := range out {
			s := float64(b[o])
			for j := range in {
				s += ax[v*in+j] * float64(w.Data[j*out+o])
				if wr != nil {
					s += float64(x.Data[v*in+j]) * float64(wr.Data[j*out+o])
				}
			}
			res[v*out+o] = s
		}
	}
	return res
}

func assertClose(t *testing.T, name string, got *dense.Matrix, want []float64, tol float64) {
	t.Helper()
	for i, w := range want {
		if d := math.Abs(float64(got.Data[i]) - w); d > tol*(1+math.Abs(w)) {
			t.Fatalf("%s[%d] = %g, want %g", name, i, got.Data[i], w)
		}
	}
}

// layerUnderTest abstracts GCN and SAGE layers for the shared checks.
type layerUnderTest interface {
	Conv
	width() (in, out int)
}

func (l *GCNLayer) width() (int, int)  { return l.In, l.Out }
func (l *SAGELayer) width() (int, int) { return l.In, l.Out }

// checkConvGradients checks every parameter's and the input's gradient of
// the linear loss Σ c⊙out against finite differences, and the forward
// against the float64 reference.
func checkConvGradients(t *testing.T, l layerUnderTest, prop *denseProp, ref func(x *dense.Matrix) []float64) {
	r := rand.New(rand.NewPCG(11, 12))
	in, out := l.width()
	n := prop.Rows()
	x := randMat(r, n, in)
	// Non-zero biases so their role in the forward is checked.
	for _, p := range l.Params() {
		if p.Rows == 1 {
			for i := range p.W {
				p.W[i] = 0.1 * float32(i+1)
			}
		}
	}
	c := randF64(r, n*out)
	p := Pass{Train: true}
	y, err := l.Forward(p, prop, x)
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "forward", y, ref(x), 1e-5)
	gx, err := l.Backward(p, prop, f32(c, n, out), true)
	if err != nil {
		t.Fatal(err)
	}
	loss := func() float64 {
		y, err := l.Forward(p, prop, x)
		if err != nil {
			t.Fatal(err)
		}
		return dot(c, y)
	}
	for _, prm := range l.Params() {
		checkFD(t, prm.Name, prm.W, prm.G, loss, 1e-2, 1e-3)
	}
	checkFD(t, "input", x.Data, gx.Data, loss, 1e-2, 1e-3)

	// Without the input gradient the parameter gradients are unchanged.
	want := map[string][]float32{}
	for _, prm := range l.Params() {
		want[prm.Name] = append([]float32(nil), prm.G...)
	}
	if _, err := l.Forward(p, prop, x); err != nil {
		t.Fatal(err)
	}
	gx, err = l.Backward(p, prop, f32(c, n, out), false)
	if err != nil || gx != nil {
		t.Fatalf("Backward(wantInputGrad=false) = %v, %v; want nil, nil", gx, err)
	}
	for _, prm := range l.Params() {
		for i, g := range prm.G {
			if g != want[prm.Name][i] {
				t.Fatalf("%s: gradient differs without input gradient: %g vs %g", prm.Name, g, want[prm.Name][i])
			}
		}
	}
}

func TestGCNLayerGradients(t *testing.T) {
	for _, dims := range [][2]int{{5, 3}, {3, 5}, {4, 4}} {
		t.Run(fmt.Sprintf("%dto%d", dims[0], dims[1]), func(t *testing.T) {
			prop := &denseProp{a: skewed(gcnAdj(7, smallEdges))}
			l := NewGCNLayer("conv0", dims[0], dims[1], rand.New(rand.NewPCG(1, 1)))
			checkConvGradients(t, l, prop, func(x *dense.Matrix) []float64 {
				return naiveLayer(prop.a, x, l.W.values(), nil, l.B.W)
			})
		})
	}
}

func TestSAGELayerGradients(t *testing.T) {
	for _, dims := range [][2]int{{5, 3}, {3, 5}} {
		t.Run(fmt.Sprintf("%dto%d", dims[0], dims[1]), func(t *testing.T) {
			prop := &denseProp{a: meanAdj(7, smallEdges)}
			l := NewSAGELayer("conv0", dims[0], dims[1], rand.New(rand.NewPCG(2, 2)))
			checkConvGradients(t, l, prop, func(x *dense.Matrix) []float64 {
				return naiveLayer(prop.a, x, l.WL.values(), l.WR.values(), l.B.W)
			})
		})
	}
}

func TestPropagateFirstSkipsBackwardPropagation(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	prop := &denseProp{a: gcnAdj(7, smallEdges)}
	l := NewGCNLayer("conv0", 3, 6, r) // Out > In: propagate first
	if _, err := l.Forward(Pass{}, prop, randMat(r, 7, 3)); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Backward(Pass{}, prop, randMat(r, 7, 6), false); err != nil {
		t.Fatal(err)
	}
	if prop.bwdN != 0 {
		t.Fatalf("propagate-first layer without input gradient ran %d backward propagations", prop.bwdN)
	}
}

func TestLayerErrors(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	prop := &denseProp{a: gcnAdj(7, smallEdges)}
	l := NewGCNLayer("conv0", 3, 2, r)
	if _, err := l.Backward(Pass{}, prop, dense.New(7, 2), false); err == nil {
		t.Fatal("Backward before Forward: no error")
	}
	if _, err := l.Forward(Pass{}, prop, dense.New(6, 3)); err == nil {
		t.Fatal("Forward with wrong row count: no error")
	}
	s := NewSAGELayer("conv0", 3, 2, r)
	if _, err := s.Forward(Pass{}, prop, dense.New(7, 4)); err == nil {
		t.Fatal("Forward with wrong width: no error")
	}
}

func TestLayerNorm(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	ln := NewLayerNorm("norm0", 6)
	x := randMat(r, 4, 6)
	y := ln.Forward(x)
	for i := range y.Rows {
		var mean, sq float64
		for _, v := range y.Row(i) {
			mean += float64(v)
		}
		mean /= 6
		for _, v := range y.Row(i) {
			sq += (float64(v) - mean) * (float64(v) - mean)
		}
		if math.Abs(mean) > 1e-6 || math.Abs(sq/6-1) > 1e-4 {
			t.Fatalf("row %d: mean %g var %g with gamma=1, beta=0", i, mean, sq/6)
		}
	}
	for j := range 6 {
		ln.Gamma.W[j] = 0.5 + 0.2*float32(j)
		ln.Beta.W[j] = 0.1 * float32(j)
	}
	c := randF64(r, 4*6)
	ln.Forward(x)
	gx := ln.Backward(f32(c, 4, 6))
	loss := func() float64 { return dot(c, ln.Forward(x)) }
	checkFD(t, "gamma", ln.Gamma.W, ln.Gamma.G, loss, 1e-2, 1e-3)
	checkFD(t, "beta", ln.Beta.W, ln.Beta.G, loss, 1e-2, 1e-3)
	checkFD(t, "input", x.Data, gx.Data, loss, 1e-2, 5e-3)
}

func TestReLU(t *testing.T) {
	m := &dense.Matrix{Rows: 2, Cols: 3, Data: []float32{-1, 0, 2, 3, -0.5, 0.25}}
	ReLU(m)
	want := []float32{0, 0, 2, 3, 0, 0.25}
	g := &dense.Matrix{Rows: 2, Cols: 3, Data: []float32{1, 2, 3, 4, 5, 6}}
	ReLUBackward(g, m)
	wantG := []float32{0, 0, 3, 4, 0, 6}
	for i := range want {
		if m.Data[i] != want[i] || g.Data[i] != wantG[i] {
			t.Fatalf("ReLU: %v grad %v; want %v grad %v", m.Data, g.Data, want, wantG)
		}
	}
}

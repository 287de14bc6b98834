package labelprop

import (
	"math"
	"testing"

	"github.com/supergcn/supergcn/dense"
)

func setup(t *testing.T) (*Embedding, *dense.Matrix, []int32) {
	t.Helper()
	n, dim, classes := 200, 6, 3
	labels := make([]int32, n)
	var train []int32
	for v := range labels {
		labels[v] = int32(v % classes)
		if v%2 == 0 {
			train = append(train, int32(v))
		}
	}
	e, err := New(0.3, classes, dim, labels, train, 11, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := range e.Param().W {
		e.Param().W[i] = float32(i) * 0.1
	}
	x := dense.New(n, dim)
	for i := range x.Data {
		x.Data[i] = float32(i % 7)
	}
	return e, x, train
}

func TestDrawIsAPartitionOfTheTrainingRows(t *testing.T) {
	e, _, train := setup(t)
	emb, sup := e.Draw(5)
	if len(emb)+len(sup) != len(train) {
		t.Fatalf("%d embedded + %d supervised != %d training rows", len(emb), len(sup), len(train))
	}
	seen := map[int32]bool{}
	for _, v := range append(append([]int32{}, emb...), sup...) {
		if seen[v] {
			t.Fatalf("row %d drawn twice", v)
		}
		seen[v] = true
	}
	frac := float64(len(emb)) / float64(len(train))
	if math.Abs(frac-0.3) > 0.15 {
		t.Fatalf("embedded fraction %.2f, rate 0.3", frac)
	}
	emb1 := append([]int32{}, emb...)
	again, _ := e.Draw(5)
	again = append([]int32{}, again...) // Draw reuses its slices
	other, _ := e.Draw(6)
	if !equal(emb1, again) {
		t.Fatal("same epoch, different draw")
	}
	if equal(emb1, other) {
		t.Fatal("different epochs, same draw")
	}
}

func TestEmbedAndGradient(t *testing.T) {
	e, x, train := setup(t)
	// check asserts in = x + scale·W[label] on the embedded rows, x elsewhere.
	check := func(in *dense.Matrix, emb []int32) {
		t.Helper()
		isEmb := map[int32]bool{}
		for _, v := range emb {
			isEmb[v] = true
		}
		for v := 0; v < x.Rows; v++ {
			for j := 0; j < x.Cols; j++ {
				want := x.Data[v*x.Cols+j]
				if isEmb[int32(v)] {
					want += float32(e.scale * e.Param().W[int(e.labels[v])*x.Cols+j]) // rounded as the term is (no fused multiply-add)
				}
				if in.Data[v*x.Cols+j] != want {
					t.Fatalf("row %d col %d: %g, want %g", v, j, in.Data[v*x.Cols+j], want)
				}
			}
		}
	}
	rows, term, _ := e.TrainTerm(3)
	in := withTerm(x, rows, term)
	emb := append([]int32{}, rows...)
	check(in, emb)
	// L = Σ in ⊙ g  ⇒  dL/dW[c] = scale · Σ_{embedded v with label c} g[v].
	g := dense.New(x.Rows, x.Cols)
	for i := range g.Data {
		g.Data[i] = float32(i%5) - 2
	}
	e.Backward(g)
	for c := 0; c < e.classes; c++ {
		for j := 0; j < e.dim; j++ {
			var want float32
			for _, v := range emb {
				if int(e.labels[v]) == c {
					want += e.scale * g.Data[int(v)*x.Cols+j]
				}
			}
			if got := e.Param().G[c*e.dim+j]; math.Abs(float64(got-want)) > 1e-5 {
				t.Fatalf("grad[%d][%d] = %g, want %g", c, j, got, want)
			}
		}
	}
	// Evaluation embeds every training row and no other.
	rows, term = e.EvalTerm()
	ev := withTerm(x, rows, term)
	isTrain := map[int32]bool{}
	for _, v := range train {
		isTrain[v] = true
	}
	for v := 0; v < x.Rows; v++ {
		changed := ev.Data[v*x.Cols+1] != x.Data[v*x.Cols+1]
		if changed != isTrain[int32(v)] {
			t.Fatalf("eval row %d: embedded %v, training row %v", v, changed, isTrain[int32(v)])
		}
	}
	check(ev, train)
	// A later draw on the same x carries nothing over from earlier calls.
	rows, term, _ = e.TrainTerm(4)
	check(withTerm(x, rows, term), rows)
}

func TestNewRejectsBadInput(t *testing.T) {
	labels := []int32{0, 1, 5}
	if _, err := New(0, 2, 4, labels, []int32{0}, 1, 0); err == nil {
		t.Fatal("rate 0 accepted")
	}
	if _, err := New(1, 2, 4, labels, []int32{0}, 1, 0); err == nil {
		t.Fatal("rate 1 accepted")
	}
	if _, err := New(0.5, 2, 4, labels, []int32{2}, 1, 0); err == nil {
		t.Fatal("label outside the classes accepted")
	}
}

func equal(a, b []int32) bool {
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

// withTerm returns a copy of x with term's row i added to row rows[i], as
// the first layer adds the embedding to its input.
func withTerm(x *dense.Matrix, rows []int32, term *dense.Matrix) *dense.Matrix {
	in := dense.New(x.Rows, x.Cols)
	copy(in.Data, x.Data)
	for i, v := range rows {
		dst := in.Row(int(v))
		for j, w := range term.Row(i) {
			dst[j] += w
		}
	}
	return in
}

package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
)

// inputPair is the same rows×cols data (every third row empty) as the
// dense and the CSR kind of nn.Input.
func inputPair(t *testing.T, r *rand.Rand, rows, cols int) (dn, sp *Input) {
	t.Helper()
	x := make([]float32, rows*cols)
	for i := range rows {
		for j := range cols {
			if i%3 != 1 && r.Float64() < 0.3 {
				x[i*cols+j] = float32(r.NormFloat64())
			}
		}
	}
	eng, err := aggr.New(2, "")
	if err != nil {
		t.Fatal(err)
	}
	if dn, err = NewInput(graph.DenseX(x, rows, cols), eng); err != nil {
		t.Fatal(err)
	}
	if sp, err = NewInput(graph.SparseX(graph.SparseFeaturesOf(x, rows, cols)), eng); err != nil {
		t.Fatal(err)
	}
	return dn, sp
}

func randMatrix(r *rand.Rand, rows, cols int) *dense.Matrix {
	m := dense.New(rows, cols)
	for i := range m.Data {
		m.Data[i] = float32(r.NormFloat64())
	}
	return m
}

// products runs both of the first layer's products with in after its
// dropout: X·W and Xᵀ·G.
func products(in *Input, d *Dropout, train bool, w, g *dense.Matrix) (xw, xtg *dense.Matrix) {
	var work dense.Work
	x := in.k.dropout(d, train, 77)
	xw, xtg = dense.New(x.Rows, w.Cols), dense.New(x.Cols, g.Cols)
	for _, p := range []struct {
		tA   bool
		y, c *dense.Matrix
	}{{false, w, xw}, {true, g, xtg}} {
		if in.isInput(x) {
			in.k.product(&work, p.tA, false, 1, p.y, 0, p.c)
		} else { // the dense kind's dropped copy: what arena.gemm computes for it
			work.Gemm(p.tA, false, 1, x, p.y, 0, p.c)
		}
	}
	return xw, xtg
}

// TestInputKindsAgree checks that the CSR kind computes the first layer's
// X·W and Xᵀ·G as the dense kind does on the same data (within 1e-5), on
// odd widths and with empty rows: plain, with input dropout (the same
// decisions on the non-zeros), and with a dense term on some rows.
func TestInputKindsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for _, cols := range []int{1, 7, 33} {
		for _, c := range []struct {
			name  string
			train bool
			term  bool
		}{{"plain", false, false}, {"dropout", true, false}, {"term", false, true}, {"term+dropout", true, true}} {
			rows, h := 13, 5
			dn, sp := inputPair(t, r, rows, cols)
			if dn.TermGradRows() || sp.TermGradRows() {
				t.Fatal("input gradient by rows without a term")
			}
			if c.term {
				termRows, add := []int32{0, 1, 7, 12}, randMatrix(r, 4, cols)
				for _, in := range []*Input{dn, sp} {
					if err := in.SetTerm(termRows, add); err != nil {
						t.Fatal(err)
					}
				}
				if dn.TermGradRows() || !sp.TermGradRows() {
					t.Fatal("dense: every row's input gradient; csr: the term's rows")
				}
			}
			w, g := randMatrix(r, cols, h), randMatrix(r, rows, h)
			dw, dg := products(dn, &Dropout{P: 0.4}, c.train, w, g)
			sw, sg := products(sp, &Dropout{P: 0.4}, c.train, w, g)
			near(t, c.name+" X·W", cols, dw, sw)
			near(t, c.name+" Xᵀ·G", cols, dg, sg)
		}
	}
}

func near(t *testing.T, what string, cols int, a, b *dense.Matrix) {
	t.Helper()
	if a.Rows != b.Rows || a.Cols != b.Cols {
		t.Fatalf("%d cols, %s: %d×%d vs %d×%d", cols, what, a.Rows, a.Cols, b.Rows, b.Cols)
	}
	for i, v := range a.Data {
		if d := math.Abs(float64(v - b.Data[i])); d > 1e-5*math.Max(1, math.Abs(float64(v))) {
			t.Fatalf("%d cols, %s: element %d: dense %v, csr %v", cols, what, i, v, b.Data[i])
		}
	}
}

// TestInputRefuses checks NewInput and SetTerm on bad arguments.
func TestInputRefuses(t *testing.T) {
	eng, err := aggr.New(1, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewInput(graph.Features{}, eng); err == nil {
		t.Fatal("an input without features")
	}
	bad := &graph.CSR{NumRows: 1, NumCols: 3, Ptr: []int64{0, 2}, Idx: []int32{2, 1}, Val: []float32{1, 2}}
	if _, err := NewInput(graph.SparseX(bad), eng); err == nil {
		t.Fatal("a non-canonical CSR input")
	}
	dn, _ := inputPair(t, rand.New(rand.NewPCG(1, 1)), 4, 3)
	if dn.SetTerm([]int32{4}, dense.New(1, 3)) == nil || dn.SetTerm([]int32{0}, dense.New(1, 2)) == nil {
		t.Fatal("a term outside the input")
	}
	if InputBytes(graph.DenseX(make([]float32, 6), 2, 3)) != 0 || !TransformsFirst(graph.SparseX(bad)) || TransformsFirst(graph.DenseX(make([]float32, 6), 2, 3)) {
		t.Fatal("table rows")
	}
}

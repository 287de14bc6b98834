package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
)

// TestPCGJump: the jump-ahead stream is math/rand/v2's PCG draw for draw.
func TestPCGJump(t *testing.T) {
	j := newPCGJumps()
	for _, seed := range [][2]uint64{{1, 2}, {0xdeadbeef, mix64(7)}, {^uint64(0), 0}} {
		r := rand.NewPCG(seed[0], seed[1])
		for k := uint64(0); k < 1<<20+4; k++ {
			want := r.Uint64()
			if (k >= 5000 || k%7 != 0) && k != 4999 && k != 1<<16-2 && k != 1<<16-1 && k != 70001 && k != 1<<20+3 {
				continue
			}
			got := j.advance(pcgState{seed[0], seed[1]}, k+1).output()
			if got != want {
				t.Fatalf("seed %v draw %d: jump gives %#x, PCG %#x", seed, k, got, want)
			}
		}
	}
}

// sparseRand is a rows×cols matrix with about density of its entries set
// (at least one per row), dense and as sparse features.
func sparseRand(r *rand.Rand, rows, cols int, density float64) (*dense.Matrix, *graph.CSR) {
	x := dense.New(rows, cols)
	for i := range rows {
		x.Row(i)[r.IntN(cols)] = float32(r.Float64() + 0.1)
		for j := range cols {
			if r.Float64() < density {
				x.Row(i)[j] = float32(r.NormFloat64())
			}
		}
	}
	return x, graph.SparseFeaturesOf(x.Data, rows, cols)
}

// TestSparseInputModels: every model on sparse features computes what it
// computes on the same features dense, with input dropout (the same
// decisions) and with a dense term on some rows: logits, every parameter
// gradient and the input gradient on the dense term's rows, over three
// training steps and an evaluation.
func TestSparseInputModels(t *testing.T) {
	eng, err := aggr.New(2, "")
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	const in = 40000 // a row spans three dropout blocks: the stream crosses blocks inside rows
	addRows := []int32{1, 4}
	for _, c := range []Config{
		{Model: "gcn", Layers: 2, Hidden: 8},
		{Model: "sage", Layers: 2, Hidden: 8},
		{Model: "gin", Layers: 2, Hidden: 8, Hyper: map[string]float64{"train-eps": 1}},
		{Model: "sgc", Layers: 1, Hyper: map[string]float64{"k": 2}},
		{Model: "appnp", Layers: 2, Hidden: 8, Hyper: map[string]float64{"k": 3}},
		{Model: "gat", Layers: 2, Hidden: 8, Heads: 2},
		{Model: "gcn", Layers: 3, Hidden: 8, Norm: "layer"},
	} {
		c.In, c.Out, c.Dropout, c.Seed = in, 3, 0.4, 11
		for _, withAdd := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s_%d_add%v", c.Model, c.Layers, withAdd), func(t *testing.T) {
				n := 7
				var op, opS Operator = &denseProp{a: gcnAdj(n, smallEdges)}, &denseProp{a: gcnAdj(n, smallEdges)}
				if c.Model == "gat" {
					n, op, opS = 6, testAttention(t), testAttention(t)
				}
				r := rand.New(rand.NewPCG(5, 6))
				xd, xs := sparseRand(r, n, in, 0.001)
				add := randMat(r, len(addRows), in)
				md, err := NewModel(c, op)
				if err != nil {
					t.Fatal(err)
				}
				ms, err := NewModel(c, opS)
				if err != nil {
					t.Fatal(err)
				}
				si, err := NewInput(graph.SparseX(xs), eng)
				if err != nil {
					t.Fatal(err)
				}
				if err := ms.SetInput(si); err != nil {
					t.Fatal(err)
				}
				x := xd
				if withAdd {
					x = dense.New(n, in)
					copy(x.Data, xd.Data)
					for i, v := range addRows {
						for j, a := range add.Row(i) {
							x.Row(int(v))[j] += a
						}
					}
					if err := si.SetTerm(addRows, add); err != nil {
						t.Fatal(err)
					}
				}
				for step := range 4 {
					p := Pass{Train: step < 3}
					ld, err := md.Forward(p, x)
					if err != nil {
						t.Fatal(err)
					}
					ls, err := ms.Forward(p, si.Matrix())
					if err != nil {
						t.Fatal(err)
					}
					closeMat(t, fmt.Sprintf("step %d logits", step), ls.Data, ld.Data, 1e-4)
					if !p.Train {
						break
					}
					g := randMat(rand.New(rand.NewPCG(uint64(step), 1)), n, c.Out)
					g2 := dense.New(n, c.Out)
					copy(g2.Data, g.Data)
					gd, err := md.Backward(p, g, withAdd)
					if err != nil {
						t.Fatal(err)
					}
					gs, err := ms.Backward(p, g2, withAdd)
					if err != nil {
						t.Fatal(err)
					}
					for i, pd := range md.Params() {
						closeMat(t, fmt.Sprintf("step %d %s.G", step, pd.Name), ms.Params()[i].G, pd.G, 1e-4)
					}
					if withAdd && gs.Rows != len(addRows) {
						t.Fatalf("step %d: the sparse input's gradient has %d rows, want the dense term's %d", step, gs.Rows, len(addRows))
					}
					for i, v := range addRows {
						if withAdd { // row i of the sparse input's gradient is input row addRows[i]
							closeMat(t, fmt.Sprintf("step %d input gradient row %d", step, v), gs.Row(i), gd.Row(int(v)), 1e-4)
						}
					}
				}
			})
		}
	}
}

// closeMat fails unless got and want agree within tol relative to want's
// largest magnitude (at least 10⁻²: gradients that are all float32 noise
// around 0 compare absolutely).
func closeMat(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	scale := 1e-2
	for _, w := range want {
		scale = math.Max(scale, math.Abs(float64(w)))
	}
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); d > tol*scale {
			t.Fatalf("%s: entry %d is %g, dense gives %g", what, i, got[i], want[i])
		}
	}
}

// TestSparseInputNarrow: a first layer that would aggregate its sparse
// input (narrower than the layer) is refused.
func TestSparseInputNarrow(t *testing.T) {
	eng, err := aggr.New(1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	_, xs := sparseRand(rand.New(rand.NewPCG(1, 2)), 7, 4, 0.3)
	m, err := NewModel(Config{Model: "gcn", Layers: 2, In: 4, Hidden: 16, Out: 3}, &denseProp{a: gcnAdj(7, smallEdges)})
	if err != nil {
		t.Fatal(err)
	}
	si, err := NewInput(graph.SparseX(xs), eng)
	if err != nil {
		t.Fatal(err)
	}
	if m.TakesSparseInput() || m.SetInput(si) == nil {
		t.Fatal("a propagate-first GCN layer took a sparse input")
	}
}

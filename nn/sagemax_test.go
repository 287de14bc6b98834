package nn

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
)

// localMax returns the LocalMax of the directed edges u→v on n nodes (row
// v lists its in-neighbours).
func localMax(t *testing.T, n int, edges [][2]int) *LocalMax {
	t.Helper()
	src, dst := make([]int32, len(edges)), make([]int32, len(edges))
	for i, e := range edges {
		src[i], dst[i] = int32(e[0]), int32(e[1])
	}
	e, err := aggr.New(2, "generic")
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLocalMax(graph.FromCOO(n, n, src, dst, nil), e)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestLocalMax checks the maximum, the zero rows of nodes without
// in-neighbours, the first-in-order rule among equal values and the
// gradient routed to the arg max, against a direct computation.
func TestLocalMax(t *testing.T) {
	edges := append([][2]int{{3, 1}, {3, 1}, {5, 0}}, smallEdges...) // a parallel edge, node 6 has no in-edge
	l := localMax(t, 7, edges)
	r := rand.New(rand.NewPCG(1, 2))
	x := randMat(r, 7, 19)
	for v := range 7 { // ties: column 3 equal on every node
		x.Data[v*19+3] = 0.5
	}
	out, gx := dense.New(7, 19), dense.New(7, 19)
	if err := l.MaxForward(Pass{Layer: 2}, x, out); err != nil {
		t.Fatal(err)
	}
	g := randMat(r, 7, 19)
	if err := l.MaxBackward(Pass{Layer: 2}, g, gx); err != nil {
		t.Fatal(err)
	}
	want, wantG := dense.New(7, 19), dense.New(7, 19)
	for v := range 7 {
		for j := range 19 {
			best := -1
			for _, e := range edges { // edge order within a row: the CSR's (FromCOO keeps it)
				if e[1] == v && (best < 0 || x.Data[e[0]*19+j] > x.Data[best*19+j]) {
					best = e[0]
				}
			}
			if best >= 0 {
				want.Data[v*19+j] = x.Data[best*19+j]
				wantG.Data[best*19+j] += g.Data[v*19+j]
			}
		}
	}
	for i := range want.Data {
		if out.Data[i] != want.Data[i] || gx.Data[i] != wantG.Data[i] {
			t.Fatalf("element %d: max %g want %g, gradient %g want %g", i, out.Data[i], want.Data[i], gx.Data[i], wantG.Data[i])
		}
	}
	if err := l.MaxBackward(Pass{Layer: 1}, g, gx); err == nil {
		t.Fatal("backward of a layer without forward accepted")
	}
}

// TestSAGEMaxGradients checks SAGE-max and SAGE-pool models (1 to 3
// layers, with each normalisation and jumping knowledge) against finite
// differences.
func TestSAGEMaxGradients(t *testing.T) {
	for _, model := range []string{"sage-max", "sage-pool"} {
		for _, norm := range []string{"none", "layer", "batch"} {
			for _, layers := range []int{1, 2, 3} {
				cfg := Config{Model: model, Layers: layers, In: 5, Hidden: 6, Out: 3, Dropout: 0.2, Norm: norm, Seed: 3}
				t.Run(fmt.Sprintf("%s_%s_%d", model, norm, layers), func(t *testing.T) {
					checkOpGradients(t, cfg, localMax(t, 7, smallEdges), 1e-3, 5e-2)
				})
			}
		}
		cfg := Config{Model: model, Layers: 3, In: 5, Hidden: 6, Out: 3, Dropout: 0.2, Seed: 3, JK: "cat"}
		t.Run(model+"_jk", func(t *testing.T) { checkOpGradients(t, cfg, localMax(t, 7, smallEdges), 1e-3, 5e-2) })
	}
}

// TestSAGEMaxForward checks a SAGE-max and a SAGE-pool layer's output
// against the formula, computed on its own.
func TestSAGEMaxForward(t *testing.T) {
	l := localMax(t, 7, smallEdges)
	r := rand.New(rand.NewPCG(5, 6))
	x := randMat(r, 7, 5)
	for _, model := range []string{"sage-max", "sage-pool"} {
		s := LayerShape{Name: "conv0", In: 5, Out: 4, Layers: 1, Op: OpMax}
		c := buildTestLayer(t, model, s, 9).(*SAGEMaxLayer)
		out, err := c.Forward(Pass{}, l, x)
		if err != nil {
			t.Fatal(err)
		}
		src := x
		if c.Pool {
			src = dense.New(7, 5)
			dense.Gemm(false, false, 1, x, c.WP.values(), 0, src)
			dense.AddBias(src, c.BP.W)
			ReLU(src)
		}
		agg := dense.New(7, 5)
		for v := range 7 {
			seen := false
			for _, e := range smallEdges {
				if e[1] != v {
					continue
				}
				for j := range 5 {
					if u := src.Data[e[0]*5+j]; !seen || u > agg.Data[v*5+j] {
						agg.Data[v*5+j] = u
					}
				}
				seen = true
			}
		}
		want := dense.New(7, 4)
		dense.Gemm(false, false, 1, agg, c.WL.values(), 0, want)
		dense.Gemm(false, false, 1, x, c.WR.values(), 1, want)
		dense.AddBias(want, c.B.W)
		for i := range want.Data {
			if d := out.Data[i] - want.Data[i]; d > 1e-5 || d < -1e-5 {
				t.Fatalf("%s: element %d is %g, want %g", model, i, out.Data[i], want.Data[i])
			}
		}
	}
}

// TestSAGEMaxEvalCacheAndSparse: a SAGE-max model's evaluation reuses the
// exact maximum of its features (SetEvalInput) with the outputs of a model
// without it, and takes its features dense (it aggregates them first);
// SAGE-pool transforms first and takes sparse features with the dense
// run's outputs and gradients.
func TestSAGEMaxEvalCacheAndSparse(t *testing.T) {
	eng, err := aggr.New(2, "")
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	r := rand.New(rand.NewPCG(3, 4))
	xd, xs := sparseRand(r, 7, 60, 0.05)
	for _, model := range []string{"sage-max", "sage-pool"} {
		cfg := Config{Model: model, Layers: 2, In: 60, Hidden: 8, Out: 3, Dropout: 0.3, Seed: 2}
		ref, err := NewModel(cfg, localMax(t, 7, smallEdges))
		if err != nil {
			t.Fatal(err)
		}
		got, err := NewModel(cfg, localMax(t, 7, smallEdges))
		if err != nil {
			t.Fatal(err)
		}
		x := xd
		if model == "sage-max" {
			if got.TakesSparseInput() {
				t.Fatal("sage-max takes sparse features")
			}
			got.SetEvalInput(x)
		} else {
			si, err := NewInput(graph.SparseX(xs), eng)
			if err != nil {
				t.Fatal(err)
			}
			if err := got.SetInput(si); err != nil {
				t.Fatal(err)
			}
			x = si.Matrix()
		}
		for step := range 6 {
			p := Pass{Train: step%2 == 0}
			lr, err := ref.Forward(p, xd)
			if err != nil {
				t.Fatal(err)
			}
			lg, err := got.Forward(p, x)
			if err != nil {
				t.Fatal(err)
			}
			closeMat(t, fmt.Sprintf("%s step %d logits", model, step), lg.Data, lr.Data, 1e-5)
			if !p.Train {
				continue
			}
			g := randMat(rand.New(rand.NewPCG(uint64(step), 1)), 7, 3)
			g2 := dense.New(7, 3)
			copy(g2.Data, g.Data)
			if _, err := ref.Backward(p, g, false); err != nil {
				t.Fatal(err)
			}
			if _, err := got.Backward(p, g2, false); err != nil {
				t.Fatal(err)
			}
			for i, pr := range ref.Params() {
				pg := got.Params()[i]
				closeMat(t, fmt.Sprintf("%s step %d %s.G", model, step, pr.Name), pg.G, pr.G, 1e-5)
				for k := range pr.W { // an SGD step on both
					pr.W[k] -= 0.1 * pr.G[k]
					pg.W[k] -= 0.1 * pg.G[k]
				}
			}
		}
		if model == "sage-max" && got.evalAX == nil {
			t.Fatal("sage-max: no evaluation aggregate kept")
		}
	}
}

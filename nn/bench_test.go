package nn

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/par"
)

// csrProp is a benchmark Propagator: a sparse operator in CSR form (row v
// lists its in-neighbours) applied by a plain parallel Go loop, with the
// transpose stored for Backward.
type csrProp struct {
	n          int
	ptr, idx   []int
	val        []float32
	tptr, tidx []int
	tval       []float32
}

// randomGCNProp returns the GCN-normalised operator of a random undirected
// graph on n nodes with about deg neighbours per node, plus self-loops.
func randomGCNProp(n, deg int, r *rand.Rand) *csrProp {
	adj := make([][]int, n)
	for v := range n {
		adj[v] = append(adj[v], v)
		for range deg / 2 {
			u := r.IntN(n)
			adj[v] = append(adj[v], u)
			adj[u] = append(adj[u], v)
		}
	}
	p := &csrProp{n: n, ptr: make([]int, n+1)}
	for v, nb := range adj {
		p.ptr[v+1] = p.ptr[v] + len(nb)
		p.idx = append(p.idx, nb...)
	}
	p.val = make([]float32, len(p.idx))
	for v := range n {
		for k := p.ptr[v]; k < p.ptr[v+1]; k++ {
			u := p.idx[k]
			p.val[k] = float32(1 / math.Sqrt(float64(len(adj[v])*len(adj[u]))))
		}
	}
	// The graph is symmetric but the benchmark still runs a separate
	// transpose, as a real propagator would.
	p.tptr, p.tidx, p.tval = p.ptr, p.idx, p.val
	return p
}

func (c *csrProp) Rows() int { return c.n }

func (c *csrProp) Forward(_ Pass, x, out *dense.Matrix) error {
	spmm(c.ptr, c.idx, c.val, x, out)
	return nil
}

func (c *csrProp) Backward(_ Pass, gout, gx *dense.Matrix) error {
	spmm(c.tptr, c.tidx, c.tval, gout, gx)
	return nil
}

func spmm(ptr, idx []int, val []float32, x, out *dense.Matrix) {
	par.For(out.Rows, 256, func(lo, hi int) {
		for v := lo; v < hi; v++ {
			o := out.Row(v)
			clear(o)
			for k := ptr[v]; k < ptr[v+1]; k++ {
				dense.Axpy(val[k], x.Row(idx[k]), o)
			}
		}
	})
}

// BenchmarkGCNLayer times one GCN layer, 100k nodes, 128 → 128 features,
// about 10 neighbours per node: forward, and forward plus backward with and
// without the input gradient.
//
//	go test -run '^$' -bench GCNLayer -benchtime 3x ./nn/
func BenchmarkGCNLayer(b *testing.B) {
	const n, in, out = 100_000, 128, 128
	r := rand.New(rand.NewPCG(1, 2))
	prop := randomGCNProp(n, 10, r)
	l := NewGCNLayer("conv0", in, out, r)
	x := randMat(r, n, in)
	g := randMat(r, n, out)
	p := Pass{Train: true}
	b.Run("forward", func(b *testing.B) {
		for b.Loop() {
			if _, err := l.Forward(p, prop, x); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, tc := range []struct {
		name    string
		inputGr bool
	}{{"fwd+bwd", true}, {"fwd+bwd_noinputgrad", false}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := l.Forward(p, prop, x); err != nil {
					b.Fatal(err)
				}
				if _, err := l.Backward(p, prop, g, tc.inputGr); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLoss times the softmax cross-entropy (loss and gradient) and the
// correct count of 200 000 labelled rows of 47 classes, as a rank of a
// products-like graph runs them every epoch, on GOMAXPROCS threads
// (GOMAXPROCS=P go test -bench Loss ./nn).
func BenchmarkLoss(b *testing.B) {
	defer par.SetThreads(par.Threads())
	r := rand.New(rand.NewPCG(1, 2))
	n, classes := 200_000, 47
	logits := dense.New(n, classes)
	for i := range logits.Data {
		logits.Data[i] = float32(r.NormFloat64())
	}
	labels, rows := make([]int32, n), make([]int32, n)
	for i := range labels {
		labels[i], rows[i] = int32(r.IntN(classes)), int32(i)
	}
	grad := dense.New(n, classes)
	b.Run("softmax", func(b *testing.B) {
		par.SetThreads(runtime.GOMAXPROCS(0))
		b.SetBytes(int64(4 * n * classes))
		for b.Loop() {
			if _, _, err := SoftmaxCrossEntropyInto(grad, logits, labels, rows, float64(n)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("correct", func(b *testing.B) {
		par.SetThreads(runtime.GOMAXPROCS(0))
		b.SetBytes(int64(4 * n * classes))
		for b.Loop() {
			CountCorrect(logits, labels, rows)
		}
	})
}

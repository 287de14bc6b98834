package task

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/nn"
)

// Decoders lists the link task's pair scorers (Table.Decoder; "" = dot):
// dot, the dot product of the endpoints' embeddings, and mlp, their
// Hadamard product through Linear(H, H), ReLU, Linear(H, 1) (PyG's
// link_pred and OGB's LinkPredictor with two layers).
var Decoders = []string{"dot", "mlp"}

// CheckDecoder checks a Table.Decoder name.
func CheckDecoder(name string) error {
	if name == "" || name == "dot" || name == "mlp" {
		return nil
	}
	return fmt.Errorf("%q is not one of %s", name, strings.Join(Decoders, ", "))
}

// DecoderParams is the number of trained values of decoder name on
// embeddings of width columns.
func DecoderParams(name string, width int) int64 {
	if name != "mlp" {
		return 0
	}
	h := int64(width)
	return h*h + h + h + 1
}

// Parametric is a task with trained parameters of its own (the link
// task's mlp decoder), made for model outputs of width columns on the
// first call; the trainer optimises them with the model's and sums their
// gradients over the ranks.
type Parametric interface {
	Params(width int) []*nn.Param
}

// mlp is the mlp decoder: s = relu((hu ⊙ hv)·W1 + b1)·W2 + b2.
type mlp struct {
	h              int
	w1, b1, w2, b2 *nn.Param
}

// newMLP initialises the decoder for width h as torch.nn.Linear does
// (weights and biases uniform in ±1/√fan-in), from seed: the same on
// every rank.
func newMLP(h int, seed uint64) *mlp {
	rng := rand.New(rand.NewPCG(seed, 0xdec0de))
	p := func(name string, rows, cols, fanIn int) *nn.Param {
		w := make([]float32, rows*cols)
		b := 1 / math.Sqrt(float64(fanIn))
		for i := range w {
			w[i] = float32((2*rng.Float64() - 1) * b)
		}
		return &nn.Param{Name: name, W: w, G: make([]float32, rows*cols), Rows: rows, Cols: cols}
	}
	return &mlp{h: h, w1: p("decoder.lin0.weight", h, h, h), b1: p("decoder.lin0.bias", 1, h, h),
		w2: p("decoder.lin1.weight", h, 1, h), b2: p("decoder.lin1.bias", 1, 1, h)}
}

func (d *mlp) params() []*nn.Param { return []*nn.Param{d.w1, d.b1, d.w2, d.b2} }

func asMatrix(p *nn.Param) *dense.Matrix {
	return &dense.Matrix{Rows: p.Rows, Cols: p.Cols, Data: p.W}
}

// forward scores pairs on the extended table ext: z = hu ⊙ hv, the
// hidden pre-activations a = z·W1 + b1, and the scores.
func (d *mlp) forward(ext *dense.Matrix, pairs [][2]int32) (z, a *dense.Matrix, s []float64) {
	n := len(pairs)
	z = &dense.Matrix{Rows: n, Cols: d.h, Data: make([]float32, n*d.h)}
	for k, p := range pairs {
		zr, hu, hv := z.Row(k), ext.Row(int(p[0])), ext.Row(int(p[1]))
		for j := range zr {
			zr[j] = hu[j] * hv[j]
		}
	}
	a = &dense.Matrix{Rows: n, Cols: d.h, Data: make([]float32, n*d.h)}
	if n > 0 {
		dense.Gemm(false, false, 1, z, asMatrix(d.w1), 0, a)
	}
	s = make([]float64, n)
	for k := range n {
		ar := a.Row(k)
		v := float64(d.b2.W[0])
		for j, x := range ar {
			x += d.b1.W[j]
			ar[j] = x
			if x > 0 {
				v += float64(x) * float64(d.w2.W[j])
			}
		}
		s[k] = v
	}
	return z, a, s
}

// backward adds to the decoder's gradients and to gext's rows of the
// pairs the gradient of Σ gs[k]·s_k (forward's z and a).
func (d *mlp) backward(ext, gext *dense.Matrix, pairs [][2]int32, z, a *dense.Matrix, gs []float64) {
	n := len(pairs)
	if n == 0 {
		return
	}
	ga := &dense.Matrix{Rows: n, Cols: d.h, Data: make([]float32, n*d.h)}
	gw2, gb1 := make([]float64, d.h), make([]float64, d.h)
	var gb2 float64
	for k, g := range gs {
		gb2 += g
		ar, gr := a.Row(k), ga.Row(k)
		for j, x := range ar {
			if x > 0 {
				gw2[j] += g * float64(x)
				gr[j] = float32(g * float64(d.w2.W[j]))
				gb1[j] += float64(gr[j])
			}
		}
	}
	d.b2.G[0] += float32(gb2)
	for j := range d.h {
		d.w2.G[j] += float32(gw2[j])
		d.b1.G[j] += float32(gb1[j])
	}
	dense.Gemm(true, false, 1, z, ga, 1, &dense.Matrix{Rows: d.h, Cols: d.h, Data: d.w1.G})
	gz := &dense.Matrix{Rows: n, Cols: d.h, Data: make([]float32, n*d.h)}
	dense.Gemm(false, true, 1, ga, asMatrix(d.w1), 0, gz)
	for k, p := range pairs {
		gzr, hu, hv := gz.Row(k), ext.Row(int(p[0])), ext.Row(int(p[1]))
		gu, gv := gext.Row(int(p[0])), gext.Row(int(p[1]))
		for j, g := range gzr {
			gu[j] += g * hv[j]
			gv[j] += g * hu[j]
		}
	}
}

package task

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/supergcn/supergcn/dense"
)

// The mlp decoder's gradients (its weights and the endpoints' rows) match
// finite differences of the BCE loss of its scores.
func TestMLPDecoderGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const h = 5
	ext := &dense.Matrix{Rows: 4, Cols: h, Data: make([]float32, 4*h)}
	for i := range ext.Data {
		ext.Data[i] = float32(rng.NormFloat64())
	}
	pairs := [][2]int32{{0, 1}, {0, 2}, {3, 1}, {2, 2}}
	y := []float64{1, 0, 1, 0}
	d := newMLP(h, 3)
	loss := func() float64 {
		_, _, s := d.forward(ext, pairs)
		var l float64
		for k, x := range s {
			v, _ := bce(x, y[k])
			l += v
		}
		return l
	}
	_, a, s := d.forward(ext, pairs)
	z, _, _ := d.forward(ext, pairs)
	for k, x := range s {
		_, s[k] = bce(x, y[k])
	}
	gext := &dense.Matrix{Rows: ext.Rows, Cols: h, Data: make([]float32, len(ext.Data))}
	d.backward(ext, gext, pairs, z, a, s)
	check := func(name string, w, g []float32) {
		for i := range w {
			old := w[i]
			w[i] = old + 1e-3
			up := loss()
			w[i] = old - 1e-3
			down := loss()
			w[i] = old
			if fd := (up - down) / 2e-3; math.Abs(fd-float64(g[i])) > 2e-3*math.Max(1, math.Abs(fd)) {
				t.Errorf("%s[%d]: gradient %g, finite difference %g", name, i, g[i], fd)
			}
		}
	}
	for _, p := range d.params() {
		check(p.Name, p.W, p.G)
	}
	check("rows", ext.Data, gext.Data)
}

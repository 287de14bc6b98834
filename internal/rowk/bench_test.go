package rowk

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkKernels runs every kernel of every set this CPU has (the
// assembly next to its generic twin) over 512 rows of 256 features, which
// stay in cache; MB/s counts one float32 per element.
func BenchmarkKernels(b *testing.B) {
	const rows, dim = 512, 256
	r := rand.New(rand.NewPCG(3, 4))
	mk := func() []float32 {
		x := make([]float32, rows*dim)
		fill(r, x, false)
		return x
	}
	o, bias, gamma, beta, h, g0 := mk(), mk()[:dim], mk()[:dim], mk()[:dim], mk(), mk()
	for i, v := range h {
		h[i] = max(v, 0)
	}
	x := make([]float64, dim)
	xh := make([]float32, rows*dim)
	out := make([]float32, rows*dim)
	g := make([]float32, rows*dim)
	ag, ab := make([]float64, dim), make([]float64, dim)
	u := make([]uint16, dim)
	for i := range u {
		u[i] = uint16(r.Uint32())
	}
	row := func(s []float32, i int) []float32 { return s[i*dim : (i+1)*dim] }
	for _, k := range Sets() {
		run := func(name string, f func(i int)) {
			b.Run(name+"/"+k.Name(), func(b *testing.B) {
				b.SetBytes(4 * rows * dim)
				for b.Loop() {
					for i := range rows {
						f(i)
					}
				}
			})
		}
		run("BiasStats", func(i int) { k.BiasStats(x, row(o, i), bias, 1e-5) })
		run("Norm", func(i int) { k.Norm(row(out, i), x, gamma, beta, 0.1, 2) })
		run("NormDrop", func(i int) { k.NormDrop(row(out, i), x, gamma, beta, u, 0.1, 2, 32768, 2) })
		copy(g, g0)
		run("NormGrad", func(i int) {
			k.NormGrad(row(g, i), row(h, i), row(o, i), bias, gamma, row(xh, i), ag, ab, 0.1, 2, 2, true)
		})
		run("NormGradOut", func(i int) { k.NormGradOut(row(out, i), row(g0, i), gamma, row(xh, i), 2, 0.1, 0.2) })
		run("ReluBiasDrop", func(i int) { k.ReluBiasDrop(row(out, i), row(o, i), bias, u, 32768, 2) })
		run("Gate", func(i int) { k.Gate(row(g, i), row(h, i), 2, true) })
	}
}

package attn

import "github.com/supergcn/supergcn/internal/dispatch"

// headKernels is one implementation of the kernels for heads of width 8
// (the contracts of accumHeads8Generic and dotRows8Generic, their pure-Go
// twins): the weighted aggregation of 8 heads × 8 with one weight per
// edge and head, and its adjoint's dot products of 8 groups of 8 columns
// per edge; the exponentials of a row's scores (expAll); and a hint that
// rows will be read soon (prefetchRows).
type headKernels struct {
	name     string
	accum    func(out, x []float32, stride int, idx []int32, w []float32, wstride int)
	dots     func(d []float32, dstride int, x []float32, stride int, idx []int32, b []float32)
	prefetch func(x []float32, stride int, idx []int32, bytes int)
	exp      func(x []float32)
	native   bool // SIMD assembly (false for the pure-Go twins)
}

var genericHeads = headKernels{name: dispatch.Generic, accum: accumHeads8Generic, dots: dotRows8Generic, prefetch: prefetchRowsGeneric, exp: expAll}

// headFamily is the head kernels this CPU runs (platformHeads lives in
// heads_<arch>.go, or heads_other.go); SVE CPUs run the NEON kernels.
// Read-only after init.
var headFamily = newHeadFamily()

func newHeadFamily() *dispatch.Family[headKernels] {
	var impls []dispatch.Impl[headKernels]
	for _, k := range append(platformHeads(), genericHeads) {
		impls = append(impls, dispatch.Impl[headKernels]{Name: k.name, Impl: k})
	}
	return dispatch.NewFamily(impls, map[string]string{"sve": "neon"})
}

// heads is the head kernels Forward and Backward use, chosen once: the one
// SUPERGCN_KERNEL names when this CPU runs it, else the best.
var heads = pickHeads()

func pickHeads() headKernels {
	im, err := headFamily.Lookup("")
	if err != nil {
		return headFamily.Best().Impl
	}
	return im.Impl
}

// accumHeads8Generic is the pure-Go twin of accumHeads8:
//
//	for k := range idx {
//		r := x[int(idx[k])*stride:]
//		for j := range 64 {
//			out[j] += w[k*wstride+j/8] * r[j]
//		}
//	}
//
// len(out) ≥ 64, stride ≥ 64, len(w) ≥ (len(idx)−1)·wstride + 8.
func accumHeads8Generic(out, x []float32, stride int, idx []int32, w []float32, wstride int) {
	fusedRows(out[:64], x, stride, idx, w, wstride, 8)
}

// dotRows8Generic is the pure-Go twin of dotRows8:
//
//	for k := range idx {
//		r := x[int(idx[k])*stride:]
//		for i := range 8 {
//			var s float32
//			for j := range 8 {
//				s += r[8*i+j] * b[8*i+j]
//			}
//			d[k*dstride+i] = s
//		}
//	}
func dotRows8Generic(d []float32, dstride int, x []float32, stride int, idx []int32, b []float32) {
	for k, u := range idx {
		r, dk := x[int(u)*stride:int(u)*stride+64], d[k*dstride:k*dstride+8]
		for i := range dk {
			dk[i] = dot(r[8*i:8*i+8], b[8*i:8*i+8])
		}
	}
}

// prefetchRowsGeneric is the pure-Go twin of prefetchRows, a hint that the
// first bytes bytes of the rows idx[k] of x (x[int(idx[k])*stride:]) will
// be read soon: Go has no prefetch, so it does nothing.
func prefetchRowsGeneric(x []float32, stride int, idx []int32, bytes int) {}

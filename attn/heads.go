package attn

import (
	"math"

	"github.com/supergcn/supergcn/internal/dispatch"
	"github.com/supergcn/supergcn/internal/mix"
	"github.com/supergcn/supergcn/internal/rowk"
)

// headKernels is one implementation of the attention kernels (each field
// the contract of its pure-Go twin, fieldGeneric below): the weighted
// aggregation of 8 heads × 8 with one weight per edge and head (accum),
// the dot products of the edges' rows with a fixed one (dots, any width),
// the scores and softmax of 8 heads of a row (softmax8), the backward's
// score gradients of 8 heads of 8 (grad8), the dropout masks of a row's
// or column's edges (keepEdges), the exponentials of a row's scores (exp,
// expAll), and a hint that rows will be read soon (prefetch).
type headKernels struct {
	name      string
	accum     func(out, x []float32, stride int, idx []int32, w []float32, wstride int)
	dots      func(d []float32, dstride int, x []float32, stride int, idx []int32, b []float32)
	prefetch  func(x []float32, stride int, idx []int32, bytes int)
	softmax8  func(p []float32, pstride int, src []float32, sstride int, idx []int32, d []float32, slope float32, m, s []float32, keep []uint8, kstride int, scale float32)
	grad8     func(w []float32, wstride int, x []float32, stride int, idx []int32, b, a []float32, astride int, t []float32, tstride, toff int, keep []uint8, kstride int, slope, scale float32, sum []float32)
	keepEdges func(keep []uint8, idx []int32, ids []int64, mul, c, seed uint64, heads int, thr int64)
	exp       func(x []float32)
	native    bool // SIMD assembly (false for the pure-Go twins)
}

var genericHeads = headKernels{name: dispatch.Generic, accum: accumHeads8Generic, dots: dotRowsGeneric, prefetch: prefetchRowsGeneric, softmax8: softmax8Generic, grad8: gradEdges8Generic, keepEdges: keepEdgesGeneric, exp: expAll}

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

// KernelName names the attention kernels in use.
func KernelName() string { return heads.name }

// Kernels lists the attention kernels this CPU runs, best first.
func Kernels() []string { return headFamily.Names() }

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

// dotRowsGeneric is the pure-Go twin of dotRows, per edge the dot product
// of its row with b, any length:
//
//	for k := range idx {
//		r := x[int(idx[k])*stride:]
//		var s float32
//		for j := range b {
//			s += r[j] * b[j]
//		}
//		d[k*dstride] = s
//	}
//
// (summed four columns at a time, dot's order).
func dotRowsGeneric(d []float32, dstride int, x []float32, stride int, idx []int32, b []float32) {
	for k, u := range idx {
		d[k*dstride] = dot(x[int(u)*stride:int(u)*stride+len(b)], b)
	}
}

// softmax8Generic is the pure-Go twin of softmax8, the forward's scores
// and softmax of 8 heads of one row (Forward's formulas): the scores of
// the edges to idx (source terms src[idx[k]·sstride:], destination terms
// d), their per-head max into m, then P = exp(l − m), their per-head sums
// into s (m = −Inf, s = 0 without edges) and the weights W = P·scale
// masked by the edge's keep byte keep[k·kstride] (bit j: head j kept)
// into p. Reference loop:
//
//	for j := range 8 {
//		m[j], s[j] = float32(math.Inf(-1)), 0
//	}
//	for k, u := range idx {
//		for j := range 8 {
//			l := leaky(src[int(u)*sstride+j]+d[j], slope)
//			p[k*pstride+j] = l
//			m[j] = max(m[j], l)
//		}
//	}
//	for k := range idx {
//		for j := range 8 {
//			y := rowk.ExpFlush(p[k*pstride+j] - m[j])
//			s[j] += y
//			p[k*pstride+j] = math.Float32frombits(math.Float32bits(y*scale) & -uint32(keep[k*kstride]>>j&1))
//		}
//	}
func softmax8Generic(p []float32, pstride int, src []float32, sstride int, idx []int32, d []float32, slope float32, m, s []float32, keep []uint8, kstride int, scale float32) {
	m, s, d = m[:8], s[:8], d[:8]
	for j := range m {
		m[j], s[j] = float32(math.Inf(-1)), 0
	}
	for k, u := range idx {
		su, pk := src[int(u)*sstride:int(u)*sstride+8], p[k*pstride:k*pstride+8]
		for j, x := range su {
			l := leaky(x+d[j], slope)
			pk[j] = l
			m[j] = max(m[j], l)
		}
	}
	for k := range idx {
		pk, kb := p[k*pstride:k*pstride+8], keep[k*kstride]
		for j, x := range pk {
			y := rowk.ExpFlush(x - m[j])
			s[j] += y
			pk[j] = math.Float32frombits(math.Float32bits(y*scale) & -uint32(kb>>j&1))
		}
	}
}

// gradEdges8Generic is the pure-Go twin of gradEdges8, the backward's
// per-edge work on 8 heads of width 8 (Backward's formulas): each edge's
// weights W (P after dropout) into w, and the per-head sums of its score
// gradients de into sum (set, not added to). An edge k reads its row
// x[idx[k]·stride:] (64 values, dotted with b's per head), its source
// terms a[idx[k]·astride:] and its destination terms t[idx[k]·tstride:]
// (dst, the max at toff, cd at 2·toff; a stride 0 makes a or t the same for
// every edge) and its dropout mask keep[k·kstride] (bit j: head j kept).
// Reference loop:
//
//	for k, v := range idx {
//		r, av, tv := x[int(v)*stride:], a[int(v)*astride:], t[int(v)*tstride:]
//		for j := range 8 {
//			d := dot(r[8*j:8*j+8], b[8*j:8*j+8])
//			e := av[j] + tv[j]
//			s := slopeOf(e, slope)
//			p := rowk.ExpFlush(e*s - tv[toff+j])
//			m := -uint32(keep[k*kstride] >> j & 1)
//			w[k*wstride+j] = math.Float32frombits(math.Float32bits(p*scale) & m)
//			sum[j] += (w[k*wstride+j]*d - p*tv[2*toff+j]) * s
//		}
//	}
func gradEdges8Generic(w []float32, wstride int, x []float32, stride int, idx []int32, b, a []float32, astride int, t []float32, tstride, toff int, keep []uint8, kstride int, slope, scale float32, sum []float32) {
	sum = sum[:8]
	clear(sum)
	for k, v := range idx {
		r, av, tv := x[int(v)*stride:int(v)*stride+64], a[int(v)*astride:int(v)*astride+8], t[int(v)*tstride:int(v)*tstride+2*toff+8]
		wk := w[k*wstride : k*wstride+8]
		for j := range 8 {
			d := dot(r[8*j:8*j+8], b[8*j:8*j+8])
			e := av[j] + tv[j]
			s := slopeOf(e, slope)
			p := rowk.ExpFlush(e*s - tv[toff+j])
			m := -uint32(keep[k*kstride] >> j & 1)
			wk[j] = math.Float32frombits(math.Float32bits(p*scale) & m)
			sum[j] += (wk[j]*d - p*tv[2*toff+j]) * s
		}
	}
}

// keepEdgesGeneric is the pure-Go twin of keepEdges, the attention
// dropout masks of the edges to the entries idx of one row (or column):
// per edge its (heads+7)/8 bytes keep[k·nb:(k+1)·nb], bit j of byte b set
// when head 8b + j < heads keeps the edge (keepMask of its edgeHash; the
// bits past the last head clear). An edge's hash is edgeHash's of the global
// id i = ids[idx[k]] (the entry itself when ids is empty) and the fixed
// end's: Mix64(seed ^ Mix64(i·mul ^ c)), so mul = 1, c = at·edgeMul for
// the edges of the row at, and mul = edgeMul, c = at for those of the
// column at. thr is dropThreshold's (0 ≤ thr ≤ 2^24). Reference loop:
//
//	nb := (heads + 7) / 8
//	for k, u := range idx {
//		i := uint64(u)
//		if len(ids) > 0 {
//			i = uint64(ids[u])
//		}
//		e := mix.Mix64(seed ^ mix.Mix64(i*mul^c))
//		for b := range nb {
//			var m uint8
//			for j := 0; j < 8 && 8*b+j < heads; j++ {
//				if int64(mix.Mix64(e^uint64(8*b+j)<<56)>>40) >= thr {
//					m |= 1 << j
//				}
//			}
//			keep[k*nb+b] = m
//		}
//	}
func keepEdgesGeneric(keep []uint8, idx []int32, ids []int64, mul, c, seed uint64, heads int, thr int64) {
	nb := (heads + 7) / 8
	for k, u := range idx {
		i := uint64(u)
		if len(ids) > 0 {
			i = uint64(ids[u])
		}
		e := mix.Mix64(seed ^ mix.Mix64(i*mul^c))
		for b := range nb {
			var m uint8
			for j := 0; j < 8 && 8*b+j < heads; j++ {
				if int64(mix.Mix64(e^uint64(8*b+j)<<56)>>40) >= thr {
					m |= 1 << j
				}
			}
			keep[k*nb+b] = m
		}
	}
}

// prefetchRowsGeneric is the pure-Go twin of prefetchRows, a hint that the
// first bytes bytes of the rows idx[k] of x (x[int(idx[k])*stride:]) will
// be read soon: Go has no prefetch, so it does nothing.
func prefetchRowsGeneric(x []float32, stride int, idx []int32, bytes int) {}

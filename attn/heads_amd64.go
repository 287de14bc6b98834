//go:build !noasm

package attn

import (
	"golang.org/x/sys/cpu"

	"github.com/supergcn/supergcn/internal/mix"
)

// platformHeads returns the amd64 assembly kernels (heads_amd64.s), best
// first; internal/dispatch keeps those the CPU and OS support. They use
// 256-bit registers, except the AVX-512 ones' weighted aggregation (two
// heads to a zmm register, accumHeads8AVX512) and dropout masks (eight
// 64-bit lanes to a register with AVX-512DQ's 64-bit products,
// keepEdgesAVX512; on a CPU without AVX-512DQ, AVX2's).
func platformHeads() []headKernels {
	k := headKernels{accum: accumHeads8AVX2, dots: dotRowsAVX2, prefetch: prefetchRowsAVX2, softmax8: softmax8AVX2, grad8: gradEdges8AVX2, keepEdges: keepEdgesAVX2, exp: expAllAVX2, native: true}
	k512, k2 := k, k
	k512.name, k2.name = "avx512", "avx2"
	k512.accum = accumHeads8AVX512
	if cpu.X86.HasAVX512DQ {
		k512.keepEdges = keepEdgesAVX512
	}
	return []headKernels{k512, k2}
}

// accumHeads8AVX2 is the AVX2+FMA version of accumHeads8: 64 columns, 8
// heads of 8, one weight per edge and head. Reference loop:
//
//	for k := range idx {
//		r := x[int(idx[k])*stride:]
//		for j := range 64 {
//			out[j] += w[k*wstride+j/8] * r[j]
//		}
//	}
//
// The caller guarantees len(out) ≥ 64, stride ≥ 64, 0 ≤ idx[k] and
// int(idx[k])*stride+64 ≤ len(x), len(w) ≥ (len(idx)−1)·wstride + 8, and
// that out does not overlap x. The 64 sums stay in eight ymm registers
// (loaded from out, stored once); each weight is broadcast and multiplied
// into its head's eight columns (VFMADD231PS); the row 8 edges ahead is
// prefetched (PREFETCHT0).
//
//go:noescape
func accumHeads8AVX2(out, x []float32, stride int, idx []int32, w []float32, wstride int)

// accumHeads8AVX512 is the AVX-512F version of accumHeads8 (the
// contract and reference loop of accumHeads8AVX2): the 64 sums in four
// zmm registers of two heads each; an edge's eight weights are loaded
// once and spread over their heads' columns (VPERMPS), one
// VFMADD231PS a register, so every sum takes the products in the order
// and with the rounding of accumHeads8AVX2. The row 8 edges ahead is
// prefetched (PREFETCHT0).
//
//go:noescape
func accumHeads8AVX512(out, x []float32, stride int, idx []int32, w []float32, wstride int)

// dotRowsAVX2 is the AVX2+FMA version of dotRows: per edge the dot
// product of its row with b, any length. Reference loop:
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
// The caller guarantees 0 ≤ idx[k] and int(idx[k])*stride+len(b) ≤
// len(x), len(d) ≥ (len(idx)−1)·dstride + 1, and that d overlaps neither
// x nor b. Two sums of alternate 8-column vectors (VFMADD231PS), the last
// len(b)%8 columns under a mask (VMASKMOVPS, which does not read past
// them), added and summed across the lanes at the end, not the loop's
// order; the row 8 edges ahead is prefetched (PREFETCHT0).
//
//go:noescape
func dotRowsAVX2(d []float32, dstride int, x []float32, stride int, idx []int32, b []float32)

// prefetchRowsAVX2 is prefetchRows with PREFETCHT0: for every k, the cache
// lines at byte offsets 0, 64, … below bytes (bytes ≥ 1) of row idx[k] of x
// (x[int(idx[k])*stride:]) are fetched towards the first-level cache. It
// reads nothing and writes nothing: a prefetch outside x does not fault.
//
//go:noescape
func prefetchRowsAVX2(x []float32, stride int, idx []int32, bytes int)

// expAllAVX2 is expAll with the whole vectors of 8 values in expAll8AVX2
// and the rest in Go.
func expAllAVX2(x []float32) {
	n := len(x) &^ 7
	expAll8AVX2(x[:n])
	expAll(x[n:])
}

// expAll8AVX2 is the AVX2 version of expAll on the first len(x)/8 whole
// vectors of 8 values (the rest is left as it is). Reference loop:
//
//	for i := range len(x) &^ 7 {
//		x[i] = rowk.ExpFlush(x[i])
//	}
//
// rowk.ExpFlush's float32 operations in its order, without fused multiply-adds,
// so every value equals rowk.ExpFlush's bit for bit; the constants are read
// from memory (expc<>).
//
//go:noescape
func expAll8AVX2(x []float32)

// gradEdges8AVX2 is the AVX2+FMA version of gradEdges8 (the contract and
// reference loop of gradEdges8Generic): the 8 heads of an edge in the 8
// lanes of one register, from its dot products to its score gradients.
// The caller guarantees stride ≥ 64, every row idx[k] of x (64 values), a
// (8) and t (2·toff + 8) inside them, len(b) ≥ 64, len(w) ≥ (len(idx)−1)·
// wstride + 8, len(keep) ≥ (len(idx)−1)·kstride + 1, len(sum) ≥ 8, and
// that w and sum overlap no input. b stays in eight ymm registers; the dot
// products are dotRows8AVX2's pairwise trees; LeakyReLU' is selected by
// the sign of e + 0 (VBLENDVPS), the exponentials are expAll8AVX2's, the
// keep byte becomes a lane mask; no fused multiply-add outside the dots'
// products, so the rest equals the twin's operations. The rows 8 edges
// ahead (x, a and t) are prefetched (PREFETCHT0).
//
//go:noescape
func gradEdges8AVX2(w []float32, wstride int, x []float32, stride int, idx []int32, b, a []float32, astride int, t []float32, tstride, toff int, keep []uint8, kstride int, slope, scale float32, sum []float32)

// softmax8AVX2 is the AVX2 version of softmax8 (the contract and reference
// loop of softmax8Generic): the 8 heads of an edge in the 8 lanes of one
// register. The caller guarantees every row idx[k] of src (8 values)
// inside it, len(d), len(m), len(s) ≥ 8, len(p) ≥ (len(idx)−1)·pstride +
// 8, len(keep) ≥ (len(idx)−1)·kstride + 1, and that p, m and s overlap no
// input. LeakyReLU' is selected by the
// sign of e + 0 (VBLENDVPS), the max is VMAXPS (a NaN score makes the
// row's sums NaN, not necessarily its max), the exponentials are
// expAll8AVX2's, the keep byte becomes a lane mask; no fused multiply-add, so the scores and exponentials
// equal the twin's. The source terms 8 edges ahead are prefetched
// (PREFETCHT0).
//
//go:noescape
func softmax8AVX2(p []float32, pstride int, src []float32, sstride int, idx []int32, d []float32, slope float32, m, s []float32, keep []uint8, kstride int, scale float32)

// keepEdgesAVX2 is the AVX2 version of keepEdges (the contract and
// reference loop of keepEdgesGeneric): the edges' hashes in Go, 64 at a
// time, each byte of their masks by keepBytes8AVX2 (the bits past the
// last head cleared after).
func keepEdgesAVX2(keep []uint8, idx []int32, ids []int64, mul, c, seed uint64, heads int, thr int64) {
	var eh [64]uint64
	nb := (heads + 7) / 8
	last := uint8(0xff >> ((8 - heads%8) % 8))
	for lo := 0; lo < len(idx); lo += len(eh) {
		part := idx[lo:min(lo+len(eh), len(idx))]
		e := eh[:len(part)]
		for k, u := range part {
			i := uint64(u)
			if len(ids) > 0 {
				i = uint64(ids[u])
			}
			e[k] = mix.Mix64(seed ^ mix.Mix64(i*mul^c))
		}
		kp := keep[lo*nb:]
		for b := range nb {
			var hx [8]uint64
			for j := range hx {
				hx[j] = uint64(8*b+j) << 56
			}
			keepBytes8AVX2(kp[b:], nb, e, &hx, thr)
		}
		for k := range e {
			kp[k*nb+nb-1] &= last
		}
	}
}

// keepBytes8AVX2 is the dropout masks of 8 heads of the edges of hashes
// eh (edgeHash): bit j of keep[k·kstride] is keepMask's at head hd of edge
// k, where hx[j] = uint64(hd)<<56. Reference loop:
//
//	for k, e := range eh {
//		var m uint8
//		for j := range 8 {
//			if int64(mix.Mix64(e^hx[j])>>40) >= thr {
//				m |= 1 << j
//			}
//		}
//		keep[k*kstride] = m
//	}
//
// The 8 heads of an edge in two registers of four 64-bit lanes, Mix64's
// multiplications from 32-bit ones (VPMULUDQ; AVX2 has no 64-bit
// multiply). The caller guarantees len(keep) ≥ (len(eh)−1)·kstride + 1
// and 0 ≤ thr ≤ 2^24.
//
//go:noescape
func keepBytes8AVX2(keep []uint8, kstride int, eh []uint64, hx *[8]uint64, thr int64)

// keepEdgesAVX512 is the AVX-512F+DQ version of keepEdges (the contract
// and reference loop of keepEdgesGeneric): 64 edges at a time, their
// hashes by edgeHashesAVX512, then their masks by keepHeadsAVX512 (two
// loops of short independent blocks, which the CPU overlaps: the ids'
// gathers and the hashes' chains of products of several blocks at once).
func keepEdgesAVX512(keep []uint8, idx []int32, ids []int64, mul, c, seed uint64, heads int, thr int64) {
	var eh [64]uint64
	nb := (heads + 7) / 8
	for lo := 0; lo < len(idx); lo += len(eh) {
		part := idx[lo:min(lo+len(eh), len(idx))]
		edgeHashesAVX512(eh[:len(part)], part, ids, mul, c, seed)
		keepHeadsAVX512(keep[lo*nb:], eh[:len(part)], heads, thr)
	}
}

// edgeHashesAVX512 sets eh[k] to the hash of the edge to idx[k], as
// keepEdgesGeneric computes it: mix.Mix64(seed ^ mix.Mix64(i·mul ^ c)) of
// its global id i = ids[idx[k]] (the entry itself when ids is empty).
// Eight edges to a zmm register (a masked load of their entries), the ids
// gathered (VPGATHERQQ), Mix64's multiplications 64-bit ones (VPMULLQ,
// AVX-512DQ). The caller guarantees len(eh) ≥ len(idx) and every idx[k]
// inside ids when ids is not empty (≥ 0 otherwise).
//
//go:noescape
func edgeHashesAVX512(eh []uint64, idx []int32, ids []int64, mul, c, seed uint64)

// keepHeadsAVX512 sets the masks of the edges of hashes eh as
// keepEdgesGeneric does from their hashes: bit j of keep[k·nb + b] (nb =
// (heads+7)/8) set when head 8b + j < heads keeps edge k. Eight edges to a
// zmm register, one head at a time (VPMULLQ), the comparison into a mask
// register that sets the head's bit in the lanes of the edges it keeps
// (VPORQ under the mask), the bytes stored together when nb is 1. The
// caller guarantees len(keep) ≥ len(eh)·nb, heads ≥ 1 and 0 ≤ thr ≤ 2^24.
//
//go:noescape
func keepHeadsAVX512(keep []uint8, eh []uint64, heads int, thr int64)

//go:build !noasm

package quant

import (
	"math"
)

// archKernels returns the arm64 SIMD kernel set, NEON (Advanced SIMD);
// internal/dispatch keeps it when the CPU reports ASIMD. SVE CPUs run it
// too: SUPERGCN_KERNEL=sve selects it (the alias in dispatch.go).
func archKernels() []kernels {
	return []kernels{{
		name:         "neon",
		minmax:       minmaxNEONFn,
		pack:         [9]packFn{2: packNEONFn(2), 4: packNEONFn(4), 8: packNEONFn(8)},
		unpack:       [9]unpackFn{2: unpackNEONFn(2), 4: unpackNEONFn(4), 8: unpackNEONFn(8)},
		packChunks:   [9]packFn{2: packNEONChunks(2), 4: packNEONChunks(4), 8: packNEONChunks(8)},
		unpackChunks: [9]unpackFn{2: unpackNEONChunks(2), 4: unpackNEONChunks(4), 8: unpackNEONChunks(8)},
	}}
}

// packNEON is the Advanced SIMD version of packGeneric(bits) for whole
// chunks (asm_arm64.s). Reference loop, with n = len(x)&^15:
//
//	for c := 0; c < n; c += 16 {
//		r.step()
//		for l := 0; l < 16; l++ {
//			q := code(x[c+l], zero, inv, uniform(r[l]), levels)
//			dst[(c+l)/per] |= byte(q) << ((c+l)%per*bits)
//		}
//	}
//
// It overwrites dst[:n*bits/8] (len(dst) must be at least that) and leaves
// r as the generic loop would; x[n:] is not read. bits is 2, 4 or 8. The 16
// lanes of r live in four 128-bit registers.
//
//go:noescape
func packNEON(dst []byte, x []float32, zero, inv float32, r *RNG, bits int)

// unpackNEON is the Advanced SIMD version of unpackGeneric(bits) for whole
// chunks. Reference loop, with n = len(dst)&^15:
//
//	for j := 0; j < n; j++ {
//		q := src[j/per] >> (j%per*bits) & levels
//		dst[j] = float32(float32(q)*scale) + zero
//	}
//
// It reads src[:n*bits/8] and writes dst[:n]. bits is 2, 4 or 8.
//
//go:noescape
func unpackNEON(dst []float32, src []byte, zero, scale float32, bits int)

// minmaxNEON is the Advanced SIMD version of the min/max part of
// minmaxGeneric for len(x) ≥ 4 (asm_arm64.s): the minimum and maximum of
// x, except that a NaN anywhere in x makes both NaN (FMIN/FMAX propagate
// NaN). It reads exactly x. Reference loop:
//
//	lo, hi := x[0], x[0]
//	for _, v := range x {
//		lo, hi = min(lo, v), max(hi, v) // Go's min/max: NaN wins
//	}
//
//go:noescape
func minmaxNEON(x []float32) (lo, hi float32)

// minmaxNEONFn is the neon minmax kernel: rows shorter than one vector go
// to minmaxGeneric. With NaN sticky in both results and ±Inf showing as a
// result, every value is finite exactly when both results are finite
// (comparisons with NaN are false).
func minmaxNEONFn(x []float32) (lo, hi float32, finite bool) {
	if len(x) < 4 {
		return minmaxGeneric(x)
	}
	lo, hi = minmaxNEON(x)
	return lo, hi, lo >= -math.MaxFloat32 && hi <= math.MaxFloat32
}

// The wrappers run the whole chunks in assembly and the last partial chunk
// (len%16 values) through stack buffers: the values padded with NaN, which
// encodes as code 0 and so leaves the unused bits of the row's last byte 0
// as packGeneric does; only the row's own bytes/values are copied out. The
// assembly functions are called directly (not through a func value) so
// that, with //go:noescape, the buffers stay on the stack.

// tailIn copies x (fewer than Lanes values) into b and pads it with NaN.
func tailIn(b *[Lanes]float32, x []float32) {
	n := copy(b[:], x)
	nan := math.Float32frombits(0x7fc00000)
	for i := n; i < Lanes; i++ {
		b[i] = nan
	}
}

func packNEONFn(bits int) packFn {
	return func(dst []byte, x []float32, zero, inv float32, r *RNG) {
		n := len(x) &^ (Lanes - 1)
		packNEON(dst[:n*bits/8], x[:n], zero, inv, r, bits)
		if n == len(x) {
			return
		}
		var xb [Lanes]float32
		var db [Lanes]byte
		tailIn(&xb, x[n:])
		packNEON(db[:Lanes*bits/8], xb[:], zero, inv, r, bits)
		copy(dst[n*bits/8:(len(x)*bits+7)/8], db[:])
	}
}

func unpackNEONFn(bits int) unpackFn {
	return func(dst []float32, src []byte, zero, scale float32) {
		n := len(dst) &^ (Lanes - 1)
		unpackNEON(dst[:n], src[:n*bits/8], zero, scale, bits)
		if n == len(dst) {
			return
		}
		var sb [Lanes]byte
		var db [Lanes]float32
		copy(sb[:], src[n*bits/8:(len(dst)*bits+7)/8])
		unpackNEON(db[:], sb[:Lanes*bits/8], zero, scale, bits)
		copy(dst[n:], db[:])
	}
}

// The whole-chunk kernels (kernels.packChunks, unpackChunks): the assembly
// alone, for lengths that are multiples of Lanes.

func packNEONChunks(bits int) packFn {
	return func(dst []byte, x []float32, zero, inv float32, r *RNG) { packNEON(dst, x, zero, inv, r, bits) }
}

func unpackNEONChunks(bits int) unpackFn {
	return func(dst []float32, src []byte, zero, scale float32) { unpackNEON(dst, src, zero, scale, bits) }
}

//go:build !noasm

package quant

import (
	"math"
)

// archKernels returns the amd64 SIMD kernel sets, best first;
// internal/dispatch keeps those the CPU and OS support.
func archKernels() []kernels {
	return []kernels{{
		name:         "avx512",
		minmax:       minmaxAVX512Fn,
		pack:         [9]packFn{2: packAVX512Fn(2), 4: packAVX512Fn(4), 8: packAVX512Fn(8)},
		unpack:       [9]unpackFn{2: unpackAVX512Fn(2), 4: unpackAVX512Fn(4), 8: unpackAVX512Fn(8)},
		packChunks:   [9]packFn{2: packAVX512Chunks(2), 4: packAVX512Chunks(4), 8: packAVX512Chunks(8)},
		unpackChunks: [9]unpackFn{2: unpackAVX512Chunks(2), 4: unpackAVX512Chunks(4), 8: unpackAVX512Chunks(8)},
	}, {
		name:         "avx2",
		minmax:       minmaxAVX2Fn,
		pack:         [9]packFn{2: packAVX2Fn(2), 4: packAVX2Fn(4), 8: packAVX2Fn(8)},
		unpack:       [9]unpackFn{2: unpackAVX2Fn(2), 4: unpackAVX2Fn(4), 8: unpackAVX2Fn(8)},
		packChunks:   [9]packFn{2: packAVX2Chunks(2), 4: packAVX2Chunks(4), 8: packAVX2Chunks(8)},
		unpackChunks: [9]unpackFn{2: unpackAVX2Chunks(2), 4: unpackAVX2Chunks(4), 8: unpackAVX2Chunks(8)},
	}}
}

// packAVX512 is the AVX-512F version of packGeneric(bits) for whole chunks
// (asm_amd64.s). Reference loop, with n = len(x)&^15:
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
// lanes of r live in one zmm register.
//
//go:noescape
func packAVX512(dst []byte, x []float32, zero, inv float32, r *RNG, bits int)

// unpackAVX512 is the AVX-512F version of unpackGeneric(bits) for whole
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
func unpackAVX512(dst []float32, src []byte, zero, scale float32, bits int)

// packAVX2 is packAVX512 with AVX2: the 16 lanes live in two ymm registers.
// Reference loop, with n = len(x)&^15:
//
//	for c := 0; c < n; c += 16 {
//		r.step()
//		for l := 0; l < 16; l++ {
//			q := code(x[c+l], zero, inv, uniform(r[l]), levels)
//			dst[(c+l)/per] |= byte(q) << ((c+l)%per*bits)
//		}
//	}
//
//go:noescape
func packAVX2(dst []byte, x []float32, zero, inv float32, r *RNG, bits int)

// unpackAVX2 is unpackAVX512 with AVX2. Reference loop, with n = len(dst)&^15:
//
//	for j := 0; j < n; j++ {
//		q := src[j/per] >> (j%per*bits) & levels
//		dst[j] = float32(float32(q)*scale) + zero
//	}
//
//go:noescape
func unpackAVX2(dst []float32, src []byte, zero, scale float32, bits int)

// minmaxAVX512 is the AVX-512F version of minmaxGeneric for len(x) ≥ 16
// (asm_amd64.s): the minimum and maximum of x (a zero of either sign when
// x holds both), meaningful only when finite, and whether every value of x
// is finite. It reads exactly x. Reference loop:
//
//	lo, hi, bad := x[0], x[0], 0
//	for _, v := range x {
//		lo, hi = min(lo, v), max(hi, v)
//		bad |= bits(v - v) // 0 for finite v, NaN bits otherwise
//	}
//	finite = bad == 0
//
//go:noescape
func minmaxAVX512(x []float32) (lo, hi float32, finite bool)

// minmaxAVX2 is minmaxAVX512 with AVX2, for len(x) ≥ 8.
//
//go:noescape
func minmaxAVX2(x []float32) (lo, hi float32, finite bool)

// minmaxAVX512Fn and minmaxAVX2Fn leave rows shorter than one vector to
// minmaxGeneric; longer rows end with a vector overlapping the previous
// one, so the assembly never reads outside x.
func minmaxAVX512Fn(x []float32) (lo, hi float32, finite bool) {
	if len(x) < 16 {
		return minmaxGeneric(x)
	}
	return minmaxAVX512(x)
}

func minmaxAVX2Fn(x []float32) (lo, hi float32, finite bool) {
	if len(x) < 8 {
		return minmaxGeneric(x)
	}
	return minmaxAVX2(x)
}

// The wrappers below run the whole chunks in assembly and the last partial
// chunk (len%16 values) through stack buffers: the values padded with NaN,
// which encodes as code 0 and so leaves the unused bits of the row's last
// byte 0 as packGeneric does; only the row's own bytes/values are copied
// out. The assembly functions are called directly (not through a func
// value) so that, with //go:noescape, the buffers stay on the stack.

// tailIn copies x (fewer than Lanes values) into b and pads it with NaN.
func tailIn(b *[Lanes]float32, x []float32) {
	n := copy(b[:], x)
	nan := math.Float32frombits(0x7fc00000)
	for i := n; i < Lanes; i++ {
		b[i] = nan
	}
}

func packAVX512Fn(bits int) packFn {
	return func(dst []byte, x []float32, zero, inv float32, r *RNG) {
		n := len(x) &^ (Lanes - 1)
		packAVX512(dst[:n*bits/8], x[:n], zero, inv, r, bits)
		if n == len(x) {
			return
		}
		var xb [Lanes]float32
		var db [Lanes]byte
		tailIn(&xb, x[n:])
		packAVX512(db[:Lanes*bits/8], xb[:], zero, inv, r, bits)
		copy(dst[n*bits/8:(len(x)*bits+7)/8], db[:])
	}
}

func unpackAVX512Fn(bits int) unpackFn {
	return func(dst []float32, src []byte, zero, scale float32) {
		n := len(dst) &^ (Lanes - 1)
		unpackAVX512(dst[:n], src[:n*bits/8], zero, scale, bits)
		if n == len(dst) {
			return
		}
		var sb [Lanes]byte
		var db [Lanes]float32
		copy(sb[:], src[n*bits/8:(len(dst)*bits+7)/8])
		unpackAVX512(db[:], sb[:Lanes*bits/8], zero, scale, bits)
		copy(dst[n:], db[:])
	}
}

func packAVX2Fn(bits int) packFn {
	return func(dst []byte, x []float32, zero, inv float32, r *RNG) {
		n := len(x) &^ (Lanes - 1)
		packAVX2(dst[:n*bits/8], x[:n], zero, inv, r, bits)
		if n == len(x) {
			return
		}
		var xb [Lanes]float32
		var db [Lanes]byte
		tailIn(&xb, x[n:])
		packAVX2(db[:Lanes*bits/8], xb[:], zero, inv, r, bits)
		copy(dst[n*bits/8:(len(x)*bits+7)/8], db[:])
	}
}

func unpackAVX2Fn(bits int) unpackFn {
	return func(dst []float32, src []byte, zero, scale float32) {
		n := len(dst) &^ (Lanes - 1)
		unpackAVX2(dst[:n], src[:n*bits/8], zero, scale, bits)
		if n == len(dst) {
			return
		}
		var sb [Lanes]byte
		var db [Lanes]float32
		copy(sb[:], src[n*bits/8:(len(dst)*bits+7)/8])
		unpackAVX2(db[:], sb[:Lanes*bits/8], zero, scale, bits)
		copy(dst[n:], db[:])
	}
}

// The whole-chunk kernels (kernels.packChunks, unpackChunks): the assembly
// alone, for lengths that are multiples of Lanes.

func packAVX512Chunks(bits int) packFn {
	return func(dst []byte, x []float32, zero, inv float32, r *RNG) { packAVX512(dst, x, zero, inv, r, bits) }
}

func unpackAVX512Chunks(bits int) unpackFn {
	return func(dst []float32, src []byte, zero, scale float32) { unpackAVX512(dst, src, zero, scale, bits) }
}

func packAVX2Chunks(bits int) packFn {
	return func(dst []byte, x []float32, zero, inv float32, r *RNG) { packAVX2(dst, x, zero, inv, r, bits) }
}

func unpackAVX2Chunks(bits int) unpackFn {
	return func(dst []float32, src []byte, zero, scale float32) { unpackAVX2(dst, src, zero, scale, bits) }
}

package quant

import "math"

// packFn quantises the values of x into dst (RowBytes(len(x)) bytes) with the
// row's zero point and reciprocal scale, drawing one RNG step per 16 values.
type packFn func(dst []byte, x []float32, zero, inv float32, r *RNG)

// unpackFn writes zero + q·scale for every code of src into dst.
type unpackFn func(dst []float32, src []byte, zero, scale float32)

// minmaxFn returns the minimum and maximum of x and whether every value of
// x is finite. lo and hi are meaningful only when finite is true: then lo
// and hi are the row's minimum and maximum (for an empty x, +Inf and −Inf),
// where a zero may come back with either sign when x holds both. When
// finite is false lo and hi are unspecified (rowParams then takes the
// scalar path that excludes and counts the non-finite values).
type minmaxFn func(x []float32) (lo, hi float32, finite bool)

// minmaxGeneric is the reference minmax kernel. Two interleaved min/max
// pairs shorten the dependency chains; bad accumulates v − v, which is +0
// for a finite v and NaN for NaN and ±Inf (a NaN stays NaN), so bad == 0
// exactly when every value is finite. A NaN fails both comparisons and so
// never becomes lo or hi.
func minmaxGeneric(x []float32) (lo, hi float32, finite bool) {
	lo0, hi0 := float32(math.Inf(1)), float32(math.Inf(-1))
	lo1, hi1 := lo0, hi0
	var bad0, bad1 float32
	i := 0
	for ; i+1 < len(x); i += 2 {
		v0, v1 := x[i], x[i+1]
		if v0 < lo0 {
			lo0 = v0
		}
		if v0 > hi0 {
			hi0 = v0
		}
		if v1 < lo1 {
			lo1 = v1
		}
		if v1 > hi1 {
			hi1 = v1
		}
		bad0 += v0 - v0
		bad1 += v1 - v1
	}
	if i < len(x) {
		v := x[i]
		lo0, hi0 = min(lo0, v), max(hi0, v)
		bad0 += v - v
	}
	return min(lo0, lo1), max(hi0, hi1), bad0+bad1 == 0
}

// packGeneric is the reference for every pack kernel:
//
//	for c := 0; c < len(x); c += 16 {
//		r.step()
//		for l := 0; l < 16 && c+l < len(x); l++ {
//			q := code(x[c+l], zero, inv, uniform(r[l]), levels)
//			dst[(c+l)/per] |= byte(q) << ((c+l)%per*bits)
//		}
//	}
func packGeneric(bits int) packFn {
	per := 8 / bits
	levels := float32(int(1)<<bits - 1)
	return func(dst []byte, x []float32, zero, inv float32, r *RNG) {
		clear(dst[:(len(x)*bits+7)/8])
		for c := 0; c < len(x); c += Lanes {
			r.step()
			n := min(Lanes, len(x)-c)
			for l := 0; l < n; l++ {
				j := c + l
				q := code(x[j], zero, inv, uniform(r[l]), levels)
				dst[j/per] |= byte(q << uint(j%per*bits))
			}
		}
	}
}

// unpackGeneric is the reference for every unpack kernel:
//
//	for j := range dst { dst[j] = zero + float32(q(j))*scale }
func unpackGeneric(bits int) unpackFn {
	per := 8 / bits
	mask := byte(1<<bits - 1)
	return func(dst []float32, src []byte, zero, scale float32) {
		for j := range dst {
			q := src[j/per] >> uint(j%per*bits) & mask
			dst[j] = float32(float32(q)*scale) + zero
		}
	}
}

// kernels is one implementation of the pack/unpack kernels, indexed by bits.
// packChunks and unpackChunks are the same kernels for whole chunks only
// (len(x) or len(dst) a multiple of Lanes, as the assembly's reference
// loops say), without the tail path; nil where the set has none.
type kernels struct {
	name         string
	minmax       minmaxFn
	pack         [9]packFn
	unpack       [9]unpackFn
	packChunks   [9]packFn
	unpackChunks [9]unpackFn
}

func genericKernels() kernels {
	k := kernels{name: "generic", minmax: minmaxGeneric}
	for _, b := range quantBits {
		k.pack[b] = packGeneric(b)
		k.unpack[b] = unpackGeneric(b)
	}
	return k
}

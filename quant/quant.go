// Package quant implements SuperGCN's per-row stochastic quantisation of the
// boundary rows a rank sends: b ∈ {2, 4, 8} bits per value, one (zero point,
// scale) pair per row.
//
// For a row h with finite minimum m and maximum M:
//
//	S = (M − m) / (2^b − 1)
//	q = floor((h − m)/S + u),  u ~ U[0,1), clamped to [0, 2^b − 1]
//	h' = m + q·S                                   (dequantised)
//
// so E[h'] = h (unbiased) and |h' − h| < S. Values are packed 8/b per byte,
// value j of a row in bits (j mod (8/b))·b of byte j/(8/b), low bits first;
// every row starts on a byte boundary. The (m, S) pairs travel in their own
// stream after the data: fp32 (8 bytes a row) or, with HalfParams, bf16
// (4 bytes a row). With bf16 the zero point is rounded down and the scale up
// before quantising, and the receiver uses the same rounded values, so the
// scheme stays unbiased and every value still lies within one step.
//
// Special rows: a constant row (M = m) has S = 0 and decodes exactly to m.
// Non-finite inputs are excluded from m and M and mapped explicitly: NaN and
// −Inf encode as q = 0, +Inf as q = 2^b − 1; they are counted (Codec.NonFinite)
// so the caller can stop with an error rather than train on garbage. A row
// with no finite value gets m = S = 0.
//
// Randomness: a counter-free 16-lane xorshift32 generator, seeded per block
// of rows from (seed, block) with splitmix64; lane l serves values j with
// j mod 16 = l of every 16-value chunk of a row, one generator step per
// chunk (a partial last chunk also takes one step). The SIMD kernels run the
// same lanes in vector registers, so every kernel produces the same bytes.
package quant

import (
	"fmt"
	"math"
)

// Lanes is the number of parallel xorshift32 streams.
const Lanes = 16

// Format describes an encoded row stream.
type Format struct {
	Bits       int  // 2, 4 or 8
	HalfParams bool // bf16 (zero point, scale) instead of fp32
}

// Validate checks the bit width.
func (f Format) Validate() error {
	switch f.Bits {
	case 2, 4, 8:
		return nil
	}
	return fmt.Errorf("quant: %d bits per value is not supported (2, 4 or 8)", f.Bits)
}

// Levels returns 2^b − 1, the largest code.
func (f Format) Levels() int { return 1<<f.Bits - 1 }

// RowBytes returns the packed data bytes of a row of width values.
func (f Format) RowBytes(width int) int { return (width*f.Bits + 7) / 8 }

// ParamBytes returns the parameter bytes of one row.
func (f Format) ParamBytes() int {
	if f.HalfParams {
		return 4
	}
	return 8
}

// Size returns the data and parameter bytes of rows×width values.
func (f Format) Size(rows, width int) (data, param int) {
	return rows * f.RowBytes(width), rows * f.ParamBytes()
}

// RNG is the 16-lane xorshift32 generator state.
type RNG [Lanes]uint32

// Seed initialises the lanes from a 64-bit seed (splitmix64; lanes never 0).
func (r *RNG) Seed(seed uint64) {
	s := seed
	for l := range r {
		s += 0x9E3779B97F4A7C15
		z := s
		z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
		z = (z ^ z>>27) * 0x94D049BB133111EB
		z ^= z >> 31
		v := uint32(z) ^ uint32(z>>32)
		if v == 0 {
			v = 0x9E3779B9
		}
		r[l] = v
	}
}

// step advances every lane once (xorshift32 13/17/5).
func (r *RNG) step() {
	for l := range r {
		x := r[l]
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		r[l] = x
	}
}

// uniform converts a lane value to [0,1) with 24 random bits.
func uniform(x uint32) float32 { return float32(x>>8) * (1.0 / (1 << 24)) }

// rowParams computes the zero point and scale of a row (rounded as the
// format sends them), and the reciprocal scale used to quantise, with the
// generic minmax kernel; see rowParamsWith.
func rowParams(x []float32, f Format) (zero, scale, inv float32, nonFinite int) {
	return rowParamsWith(minmaxGeneric, x, f)
}

// rowParamsWith is rowParams with the row range taken by mm (a kernel set's
// minmax). Rows with a non-finite value go through the scalar loop that
// excludes and counts them. Every minmax kernel returns the same min and max
// up to the sign of a zero (order-dependent for VMINPS/VMAXPS), and a zero
// minimum is sent as +0, so every kernel writes the same parameter bytes.
// (The sign of a zero maximum never matters: it only enters hi − lo and
// comparisons, and a zero range is scale 0 whatever its sign. Nor does the
// zero point's for the codes and decoded values: v − (±0) and q·S + (±0)
// differ at most in the sign of a zero.)
func rowParamsWith(mm minmaxFn, x []float32, f Format) (zero, scale, inv float32, nonFinite int) {
	lo, hi, ok := mm(x)
	if !ok {
		lo, hi = float32(math.Inf(1)), float32(math.Inf(-1))
		for _, v := range x {
			if v != v || v > math.MaxFloat32 || v < -math.MaxFloat32 {
				nonFinite++
				continue
			}
			lo = min(lo, v)
			hi = max(hi, v)
		}
	}
	if lo > hi { // no finite value (or an empty row)
		return 0, 0, 0, nonFinite
	}
	if lo == 0 {
		lo = 0 // +0, whichever zero the kernel found
	}
	levels := float32(f.Levels())
	if f.HalfParams {
		lo = bf16Down(lo)
		scale = bf16Up((hi - lo) / levels)
		for lo+levels*scale < hi { // rounding of the division; at most a step or two
			scale = bf16Up(math.Nextafter32(scale, float32(math.Inf(1))))
		}
	} else {
		scale = (hi - lo) / levels
		for lo+levels*scale < hi {
			scale = math.Nextafter32(scale, float32(math.Inf(1)))
		}
	}
	if scale == 0 {
		return lo, 0, 0, nonFinite
	}
	return lo, scale, 1 / scale, nonFinite
}

// code quantises one value; u is the value's uniform draw.
func code(v, zero, inv, u, levels float32) uint32 {
	if v != v {
		return 0
	}
	// float32(...) keeps the compiler from fusing the multiply-add, so the
	// result matches the SIMD kernels bit for bit.
	t := float32((v-zero)*inv) + u
	if !(t > 0) { // also -Inf
		return 0
	}
	if t >= levels {
		return uint32(levels)
	}
	return uint32(t)
}

// bf16Down rounds a finite float32 toward −∞ to bfloat16 precision.
func bf16Down(v float32) float32 {
	b := math.Float32bits(v)
	t := b &^ 0xFFFF
	if t == b {
		return v
	}
	if b>>31 == 0 {
		return math.Float32frombits(t) // positive: truncation rounds down
	}
	return math.Float32frombits(t + 0x10000) // negative: away from zero
}

// bf16Up rounds a finite non-negative float32 toward +∞ to bfloat16 precision.
func bf16Up(v float32) float32 {
	b := math.Float32bits(v)
	t := b &^ 0xFFFF
	if t == b {
		return v
	}
	return math.Float32frombits(t + 0x10000)
}

// Package quant implements SuperGCN's per-row stochastic quantisation of the
// boundary rows a rank sends: b ∈ {2, 4, 8} bits per value (quantBits in
// wire.go: a width is one entry there), one (zero point,
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
// stream after the data, in one of three layouts (Params):
//
//	ParamsF32    fp32 m and S, 8 bytes a row
//	ParamsBF16   bf16 m and S, 4 bytes a row
//	ParamsBlock  bf16 m and a one-byte S, 3 bytes a row plus 4 bytes per block
//	             of BlockRows rows: the block's largest S in fp32 (the base B),
//	             and per row k with S = B·2^(−k/16) (k = 255: S = 0), so S is
//	             at most 2^(1/16) (4.4 %) above what the row needs
//
// With rounded parameters the zero point is rounded down and the scale up
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

// Params is the layout of the per-row (zero point, scale) pairs.
type Params uint8

const (
	ParamsF32   Params = iota // fp32 pairs, 8 bytes a row
	ParamsBF16                // bf16 pairs, 4 bytes a row
	ParamsBlock               // bf16 zero point + one-byte scale under a per-block fp32 base
)

var paramNames = []string{"fp32", "bf16", "block"}

// String returns the layout's name (fp32, bf16, block).
func (p Params) String() string {
	if int(p) < len(paramNames) {
		return paramNames[p]
	}
	return fmt.Sprintf("Params(%d)", p)
}

// ParseParams reads a layout name.
func ParseParams(s string) (Params, error) {
	for i, n := range paramNames {
		if s == n {
			return Params(i), nil
		}
	}
	return 0, fmt.Errorf("quant: %q is not a parameter layout (fp32, bf16 or block)", s)
}

// Format describes an encoded row stream.
type Format struct {
	Bits   int    // a quantised width (Widths)
	Params Params // layout of the per-row (zero point, scale)
}

// Validate checks the bit width and the parameter layout.
func (f Format) Validate() error {
	if f.Params > ParamsBlock {
		return fmt.Errorf("quant: parameter layout %d is not fp32, bf16 or block", f.Params)
	}
	if quantised(f.Bits) {
		return nil
	}
	return fmt.Errorf("quant: %d bits per value is not supported (%s)", f.Bits, QuantisedList(", "))
}

// roundsZero reports whether the zero point travels as bf16.
func (f Format) roundsZero() bool { return f.Params != ParamsF32 }

// Levels returns 2^b − 1, the largest code.
func (f Format) Levels() int { return 1<<f.Bits - 1 }

// RowBytes returns the packed data bytes of a row of width values.
func (f Format) RowBytes(width int) int { return (width*f.Bits + 7) / 8 }

// rowParamBytes returns the parameter bytes of one row (without the
// per-block bases of ParamsBlock).
func (f Format) rowParamBytes() int {
	switch f.Params {
	case ParamsBF16:
		return 4
	case ParamsBlock:
		return 3
	}
	return 8
}

// Size returns the data and parameter bytes of rows×width values.
func (f Format) Size(rows, width int) (data, param int) {
	param = rows * f.rowParamBytes()
	if f.Params == ParamsBlock {
		param += 4 * ((rows + BlockRows - 1) / BlockRows)
	}
	return rows * f.RowBytes(width), param
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
// minmax). For ParamsBlock it returns the bf16 zero point and the smallest
// fp32 scale; the codec then rounds the scale up under the block's base
// (blockScale). Rows with a non-finite value go through the scalar loop that
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
	if f.Params == ParamsBF16 {
		lo = bf16Down(lo)
		scale = bf16Up((hi - lo) / levels)
		for lo+levels*scale < hi { // rounding of the division; at most a step or two
			scale = bf16Up(math.Nextafter32(scale, float32(math.Inf(1))))
		}
	} else {
		if f.roundsZero() {
			lo = bf16Down(lo)
		}
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

// logSteps[k] = 2^(−k/16), the factors of ParamsBlock's one-byte scales
// (k = 255 is reserved for a zero scale).
var logSteps = func() (t [255]float32) {
	for k := range t {
		t[k] = float32(math.Exp2(-float64(k) / 16))
	}
	return t
}()

// zeroScaleCode is ParamsBlock's scale code of a constant row.
const zeroScaleCode = 255

// blockScale returns the one-byte code of the smallest scale base·2^(−k/16)
// that is at least need (need ≤ base), and that scale. Rounding of float32
// products is monotonic, so a scale at least need keeps zero + levels·scale
// at least the row's maximum.
func blockScale(base, need float32) (code uint8, scale float32) {
	if need == 0 {
		return zeroScaleCode, 0
	}
	k := 0
	if need < base {
		// −16·log2(need/base) from the exponent and a linear log2 of the
		// mantissa (within 1.4 steps); the loops below make it exact.
		r := math.Float32bits(need / base)
		e := int(r>>23&0xff) - 127
		m := float32(r&0x7fffff) / (1 << 23)
		k = max(0, min(-16*e-int(16*m), len(logSteps)-1))
	}
	for k > 0 && base*logSteps[k] < need {
		k--
	}
	for k+1 < len(logSteps) && base*logSteps[k+1] >= need {
		k++
	}
	return uint8(k), base * logSteps[k]
}

// blockCodeScale is the scale a ParamsBlock code stands for.
func blockCodeScale(base float32, code uint8) float32 {
	if code == zeroScaleCode {
		return 0
	}
	return base * logSteps[code]
}

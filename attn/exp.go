package attn

import "math"

// exp32 is e^x in float32, within 2 ulp of the correctly rounded value
// (TestExp32): x = n·ln 2 + r with |r| ≤ ln(2)/2, e^r by Cephes expf's
// degree-7 polynomial, times 2^n built from its exponent bits. Outside
// [expLo, expHi] (underflow to subnormals and 0, overflow to +Inf, NaN) it
// takes math.Exp through float64.
func exp32(x float32) float32 {
	if !(x >= expLo && x <= expHi) {
		return float32(math.Exp(float64(x)))
	}
	return expPoly(x)
}

// expAll sets x[i] = expFlush(x[i]): the exponentials of the kernels'
// scores (x ≤ 0 there), the pure-Go twin of the head kernels' exp.
func expAll(x []float32) {
	for i, y := range x {
		x[i] = expFlush(y)
	}
}

// expFlush is exp32 with results below float32's smallest normal number
// flushed to 0 (x < expLo) and x above expHi taken as expHi: the one
// polynomial everywhere, so that SIMD lanes compute it without a branch
// (within 2^−126 of exp32 for x ≤ expHi; a NaN stays NaN).
func expFlush(x float32) float32 {
	if x < expLo {
		return 0
	}
	return expPoly(min(x, expHi))
}

// expPoly is exp32 in [expLo, expHi].
func expPoly(x float32) float32 {
	const (
		log2e = 1.44269504088896341
		ln2Hi = 0.693359375 // ln 2 = ln2Hi + ln2Lo, ln2Hi exact in 9 bits
		ln2Lo = -2.12194440e-4
		round = 12582912 // 1.5·2^23: adding it rounds to an integer
	)
	t := x*log2e + round
	n := int32(math.Float32bits(t)) - int32(math.Float32bits(round))
	nf := t - round
	r := x - nf*ln2Hi - nf*ln2Lo
	p := float32(1.9875691500e-4)
	p = p*r + 1.3981999507e-3
	p = p*r + 8.3334519073e-3
	p = p*r + 4.1665795894e-2
	p = p*r + 1.6666665459e-1
	p = p*r + 5.0000001201e-1
	p = p*(r*r) + r + 1
	return p * math.Float32frombits(uint32(n+127)<<23)
}

// exp32's polynomial range: e^expLo is float32's smallest normal number
// (2^−126), and 2^n stays a normal number up to n = 127.
const (
	expLo = -87.33654
	expHi = 88.0
)

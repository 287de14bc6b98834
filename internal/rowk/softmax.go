package rowk

import "math"

// SoftmaxExp is the row kernel of the softmax cross-entropy (nn/loss.go):
// it sets e[j] = exp(x[j] − m), m = max_j x[j], and returns m and
// s = Σ_j e[j]. The reference loop, which the generic twin is:
//
//	m := float32(−Inf)
//	for _, v := range x { m = max(m, v) }
//	var p [4]float64
//	for j, v := range x { e[j] = ExpFlush(v − m); p[j%4] += float64(e[j]) }
//	s = (p[0]+p[1]) + (p[2]+p[3])
//
// The exponential is float32 (ExpFlush: within 2 ulp of e^x, results below
// 2^−126 flushed to 0; the arguments are ≤ 0 here), the sum float64. A NaN
// in x gives a NaN s (m itself may skip it). len(e) ≥ len(x).
func (k Set) SoftmaxExp(e, x []float32) (m float32, s float64) {
	n := len(x)
	e = e[:n]
	m = float32(math.Inf(-1))
	var p [4]float64
	if k.native {
		m = softMaxNative(x, m)
		softExpNative(e, x, m, &p)
	} else {
		m = softMaxGeneric(x, m)
		softExpGeneric(e, x, m, &p)
	}
	return m, (p[0] + p[1]) + (p[2] + p[3])
}

// RowMax returns the largest element of x (−Inf for an empty x; a NaN in x
// may be skipped or returned): SoftmaxExp's first pass.
func (k Set) RowMax(x []float32) float32 {
	m := float32(math.Inf(-1))
	if k.native {
		return softMaxNative(x, m)
	}
	return softMaxGeneric(x, m)
}

// softMaxGeneric returns the largest of m and the elements of x.
func softMaxGeneric(x []float32, m float32) float32 {
	for _, v := range x {
		m = max(m, v)
	}
	return m
}

// softExpGeneric sets e[j] = ExpFlush(x[j]−m) and adds float64(e[j]) into
// p[j mod 4], in order of j.
func softExpGeneric(e, x []float32, m float32, p *[4]float64) {
	e = e[:len(x)]
	for j, v := range x {
		t := ExpFlush(v - m)
		e[j] = t
		p[j&3] += float64(t)
	}
}

// ExpFlush is e^x in float32 for x ≤ ExpHi, within 2 ulp of the correctly
// rounded value: x = n·ln 2 + r with |r| ≤ ln(2)/2, e^r by Cephes expf's
// degree-7 polynomial, times 2^n built from its exponent bits (attn's
// exponentials are this one too). Results below float32's smallest normal
// number are flushed to 0 (x < ExpLo), x above ExpHi is taken as ExpHi, a NaN stays NaN: one polynomial everywhere, so that SIMD
// lanes compute it without a branch (EXP8 in asm_amd64.s, bit for bit).
func ExpFlush(x float32) float32 {
	if x < ExpLo {
		return 0
	}
	x = min(x, ExpHi)
	const (
		log2e = 1.44269504088896341
		ln2Hi = 0.693359375 // ln 2 = ln2Hi + ln2Lo, ln2Hi exact in 9 bits
		ln2Lo = -2.12194440e-4
		round = 12582912 // 1.5·2^23: adding it rounds to an integer
	)
	// float32() around every product: rounded as written, never fused
	// (the assembly's order, on every architecture)
	t := float32(x*log2e) + round
	n := int32(math.Float32bits(t)) - int32(math.Float32bits(round))
	nf := t - round
	r := x - float32(nf*ln2Hi)
	r -= float32(nf * ln2Lo)
	p := float32(1.9875691500e-4)
	p = float32(p*r) + 1.3981999507e-3
	p = float32(p*r) + 8.3334519073e-3
	p = float32(p*r) + 4.1665795894e-2
	p = float32(p*r) + 1.6666665459e-1
	p = float32(p*r) + 5.0000001201e-1
	p = float32(p*float32(r*r)) + r + 1
	return p * math.Float32frombits(uint32(n+127)<<23)
}

// ExpFlush's polynomial range: e^ExpLo is float32's smallest normal number
// (2^−126), and 2^n stays a normal number up to n = 127.
const (
	ExpLo = -87.33654
	ExpHi = 88.0
)

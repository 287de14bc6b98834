//go:build !noasm

package rowk

import "math"

// The assembly of a native set (Set.isa).
const (
	isaAVX2   isa = iota // asm_amd64.s
	isaAVX512            // asm512_amd64.s for Norm, NormDrop, NormGrad and NormGradOut, AVX2 for the rest
)

// archSets returns the amd64 assembly sets, best first; internal/dispatch
// keeps those the CPU and OS support (AVX2 implies FMA there, unused here;
// AVX-512 implies AVX2).
func archSets() []Set {
	return []Set{{name: "avx512", native: true, isa: isaAVX512}, {name: "avx2", native: true, isa: isaAVX2}}
}

// The assembly routines run the first n elements, n a positive multiple
// of 8, eight per iteration: AVX2 widens each eight float32 (one ymm
// register) into two 4-lane float64 vectors, elements j..j+3 and j+4..j+7,
// which go to two sums (partials 0..3 and 4..7); AVX-512 widens them into
// one 8-lane vector. Either way lane l of every float64 sum receives the
// elements ≡ l (mod 8) in order, as the generic twins' partial sums do.
// No FMA. The Go wrappers below run the rest of the row with the generic
// twin, which carries on from the assembly's sums. The AVX-512 set runs
// the AVX2 biasSum, sqSum (their sums are chains of dependent additions:
// one chain of 8-lane additions ran slower than two of 4 lanes), reluBias
// and gate (they stream float32 at the memory's rate either way).

//go:noescape
func biasSumAVX2(x *float64, o, bias *float32, n int, s *[8]float64)

//go:noescape
func sqSumAVX2(x *float64, n int, mean float64, s *[8]float64)

//go:noescape
func normAVX2(h *float32, x *float64, gamma, beta *float32, n int, mean, rstd float64)

//go:noescape
func normDropAVX2(h *float32, x *float64, gamma, beta *float32, u *uint16, n int, mean, rstd float64, thresh int32, scale float32)

//go:noescape
func normGradAVX2(gr, h, o, bias, gamma, xh *float32, ag, ab *float64, n int, mean, rstd float64, scale float32, active bool, st *gradState)

//go:noescape
func normGradOutAVX2(dst, gr, gamma, xh *float32, n int, rstd, sg, sgx float64)

//go:noescape
func normAVX512(h *float32, x *float64, gamma, beta *float32, n int, mean, rstd float64)

//go:noescape
func normDropAVX512(h *float32, x *float64, gamma, beta *float32, u *uint16, n int, mean, rstd float64, thresh int32, scale float32)

//go:noescape
func normGradAVX512(gr, h, o, bias, gamma, xh *float32, ag, ab *float64, n int, mean, rstd float64, scale float32, active bool, st *gradState)

//go:noescape
func normGradOutAVX512(dst, gr, gamma, xh *float32, n int, rstd, sg, sgx float64)

func biasSumNative(_ isa, x []float64, o, bias []float32, s *[8]float64) {
	n := len(x)
	o, bias = o[:n], bias[:n]
	m := n &^ 7
	if m > 0 {
		biasSumAVX2(&x[0], &o[0], &bias[0], m, s)
	}
	biasSumGeneric(x[m:], o[m:], bias[m:], s)
}

func sqSumNative(_ isa, x []float64, mean float64, s *[8]float64) {
	m := len(x) &^ 7
	if m > 0 {
		sqSumAVX2(&x[0], m, mean, s)
	}
	sqSumGeneric(x[m:], mean, s)
}

func normNative(a isa, h []float32, x []float64, gamma, beta []float32, mean, rstd float64) {
	n := len(h)
	x, gamma, beta = x[:n], gamma[:n], beta[:n]
	m := n &^ 7
	if m > 0 {
		if a == isaAVX512 {
			normAVX512(&h[0], &x[0], &gamma[0], &beta[0], m, mean, rstd)
		} else {
			normAVX2(&h[0], &x[0], &gamma[0], &beta[0], m, mean, rstd)
		}
	}
	normGeneric(h[m:], x[m:], gamma[m:], beta[m:], mean, rstd)
}

func normDropNative(a isa, h []float32, x []float64, gamma, beta []float32, u []uint16, mean, rstd float64, thresh int32, scale float32) {
	n := len(h)
	x, gamma, beta, u = x[:n], gamma[:n], beta[:n], u[:n]
	m := n &^ 7
	if m > 0 {
		if a == isaAVX512 {
			normDropAVX512(&h[0], &x[0], &gamma[0], &beta[0], &u[0], m, mean, rstd, thresh, scale)
		} else {
			normDropAVX2(&h[0], &x[0], &gamma[0], &beta[0], &u[0], m, mean, rstd, thresh, scale)
		}
	}
	normDropGeneric(h[m:], x[m:], gamma[m:], beta[m:], u[m:], mean, rstd, thresh, scale)
}

func normGradNative(a isa, g, h, o, bias, gamma, xh []float32, ag, ab []float64, mean, rstd float64, scale float32, active bool, st *gradState) {
	n := len(g)
	h, o, bias, gamma, xh, ag, ab = h[:n], o[:n], bias[:n], gamma[:n], xh[:n], ag[:n], ab[:n]
	m := n &^ 7
	if m > 0 {
		if a == isaAVX512 {
			normGradAVX512(&g[0], &h[0], &o[0], &bias[0], &gamma[0], &xh[0], &ag[0], &ab[0], m, mean, rstd, scale, active, st)
		} else {
			normGradAVX2(&g[0], &h[0], &o[0], &bias[0], &gamma[0], &xh[0], &ag[0], &ab[0], m, mean, rstd, scale, active, st)
		}
	}
	normGradGeneric(g[m:], h[m:], o[m:], bias[m:], gamma[m:], xh[m:], ag[m:], ab[m:], mean, rstd, scale, active, st)
}

func normGradOutNative(a isa, dst, g, gamma, xh []float32, rstd, sg, sgx float64) {
	n := len(g)
	dst, gamma, xh = dst[:n], gamma[:n], xh[:n]
	m := n &^ 7
	if m > 0 {
		if a == isaAVX512 {
			normGradOutAVX512(&dst[0], &g[0], &gamma[0], &xh[0], m, rstd, sg, sgx)
		} else {
			normGradOutAVX2(&dst[0], &g[0], &gamma[0], &xh[0], m, rstd, sg, sgx)
		}
	}
	normGradOutGeneric(dst[m:], g[m:], gamma[m:], xh[m:], rstd, sg, sgx)
}

//go:noescape
func reluBiasAVX2(h, o, bias *float32, n int)

//go:noescape
func reluBiasDropAVX2(h, o, bias *float32, u *uint16, n int, thresh int32, scale float32)

//go:noescape
func gateAVX2(gr, h *float32, n int, scale float32, active bool, bad *uint32)

func reluBiasNative(h, o, bias []float32) {
	n := len(h)
	o, bias = o[:n], bias[:n]
	m := n &^ 7
	if m > 0 {
		reluBiasAVX2(&h[0], &o[0], &bias[0], m)
	}
	reluBiasGeneric(h[m:], o[m:], bias[m:])
}

func reluBiasDropNative(h, o, bias []float32, u []uint16, thresh int32, scale float32) {
	n := len(h)
	o, bias, u = o[:n], bias[:n], u[:n]
	m := n &^ 7
	if m > 0 {
		reluBiasDropAVX2(&h[0], &o[0], &bias[0], &u[0], m, thresh, scale)
	}
	reluBiasDropGeneric(h[m:], o[m:], bias[m:], u[m:], thresh, scale)
}

func gateNative(g, h []float32, scale float32, active bool, bad *uint32) {
	n := len(g)
	h = h[:n]
	m := n &^ 7
	if m > 0 {
		gateAVX2(&g[0], &h[0], m, scale, active, bad)
	}
	gateGeneric(g[m:], h[m:], scale, active, bad)
}

//go:noescape
func softMaxAVX2(x *float32, n int) float32

//go:noescape
func softExpAVX2(e, x *float32, n int, m float32, p *[4]float64)

// softMaxNative and softExpNative run the last n mod 8 elements too, in
// one more vector padded with −Inf (exp gives +0 there, which adds nothing
// to the sums), so that a row of 47 classes runs in vectors throughout.
func softMaxNative(x []float32, m float32) float32 {
	n8 := len(x) &^ 7
	if n8 > 0 {
		m = max(m, softMaxAVX2(&x[0], n8))
	}
	if len(x) > n8 {
		t := padTail(x[n8:])
		m = max(m, softMaxAVX2(&t[0], 8))
	}
	return m
}

func softExpNative(e, x []float32, m float32, p *[4]float64) {
	n := len(x)
	e = e[:n]
	n8 := n &^ 7
	if n8 > 0 {
		softExpAVX2(&e[0], &x[0], n8, m, p)
	}
	if n > n8 {
		t := padTail(x[n8:])
		var et [8]float32
		softExpAVX2(&et[0], &t[0], 8, m, p)
		copy(e[n8:], et[:])
	}
}

// padTail returns x (fewer than 8 elements) followed by −Inf.
func padTail(x []float32) [8]float32 {
	t := [8]float32{}
	copy(t[:], x)
	for i := len(x); i < 8; i++ {
		t[i] = float32(math.Inf(-1))
	}
	return t
}

//go:noescape
func scaleAVX2(dst, src *float32, n int, f float32)

func scaleNative(dst, src []float32, f float32) {
	n := len(dst)
	src = src[:n]
	n32 := n &^ 31
	if n32 > 0 {
		scaleAVX2(&dst[0], &src[0], n32, f)
	}
	scaleGeneric(dst[n32:], src[n32:], f)
}

//go:build noasm || !amd64

package rowk

// archSets: no assembly sets under noasm or off amd64 (the generic set
// serves arm64; NEON is future work).
func archSets() []Set { return nil }

// The native kernels are never called without a native set; they are
// functions (not function values) so that escape analysis sees through them.

func biasSumNative(_ isa, x []float64, o, bias []float32, s *[8]float64) {
	biasSumGeneric(x, o, bias, s)
}

func sqSumNative(_ isa, x []float64, mean float64, s *[8]float64) { sqSumGeneric(x, mean, s) }

func normNative(_ isa, h []float32, x []float64, gamma, beta []float32, mean, rstd float64) {
	normGeneric(h, x, gamma, beta, mean, rstd)
}

func normDropNative(_ isa, h []float32, x []float64, gamma, beta []float32, u []uint16, mean, rstd float64, thresh int32, scale float32) {
	normDropGeneric(h, x, gamma, beta, u, mean, rstd, thresh, scale)
}

func normGradNative(_ isa, g, h, o, bias, gamma, xh []float32, ag, ab []float64, mean, rstd float64, scale float32, active bool, st *gradState) {
	normGradGeneric(g, h, o, bias, gamma, xh, ag, ab, mean, rstd, scale, active, st)
}

func normGradOutNative(_ isa, dst, g, gamma, xh []float32, rstd, sg, sgx float64) {
	normGradOutGeneric(dst, g, gamma, xh, rstd, sg, sgx)
}

func reluBiasNative(h, o, bias []float32) { reluBiasGeneric(h, o, bias) }

func reluBiasDropNative(h, o, bias []float32, u []uint16, thresh int32, scale float32) {
	reluBiasDropGeneric(h, o, bias, u, thresh, scale)
}

func gateNative(g, h []float32, scale float32, active bool, bad *uint32) {
	gateGeneric(g, h, scale, active, bad)
}

func softMaxNative(x []float32, m float32) float32 { return softMaxGeneric(x, m) }

func softExpNative(e, x []float32, m float32, p *[4]float64) { softExpGeneric(e, x, m, p) }

func scaleNative(dst, src []float32, f float32) { scaleGeneric(dst, src, f) }

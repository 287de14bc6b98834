// Package rowk is the SIMD kernel family of the fused hidden stage
// (nn/fused.go) and LayerNorm (nn/layernorm.go): the per-row passes of
// bias + LayerNorm + ReLU + dropout forward and their backward; and of the
// evaluation loss's softmax (SoftmaxExp, softmax.go; nn/loss.go).
//
// Every kernel set computes exactly what the pure-Go set (generic, the
// twin, also what noasm builds and other architectures run) computes, bit
// for bit (but for the sign and payload of a NaN where two NaNs meet in a
// commutative operation: x86 keeps the first operand's, and Go leaves the
// operand order to the compiler, so even two Go builds can differ there;
// no finite input reaches that case): the row sums run as eight float64
// partial sums, element j into partial j mod 8, added as sum8 does (two
// 4-lane float64 vectors per sum in the AVX2 code, one 8-lane vector in the
// AVX-512 code), products are rounded as written (no FMA on either side), and the column sums of the weight gradients stay float64. The set
// is chosen once from the CPU features through internal/dispatch, and
// SUPERGCN_KERNEL forces one as it does for aggr and quant.
package rowk

import (
	"math"

	"github.com/supergcn/supergcn/internal/dispatch"
)

// gradState carries NormGrad's row sums from one part of a row to the
// next: s and t the partial sums of ĝ and ĝ·x̂ (lane j mod 8), bad bit 31
// set once h held a NaN or an infinity.
type gradState struct {
	s, t [8]float64
	bad  uint32
}

// sum8 adds the eight partial sums of a row in the one order every set
// and nn's LayerNorm helpers use.
func sum8(s *[8]float64) float64 {
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
}

// Sum8 is sum8 for nn's LayerNorm helpers, which sum float32 rows in the
// same order.
func Sum8(s *[8]float64) float64 { return sum8(s) }

// Set is one implementation of the family's kernels: the assembly of
// this architecture (native) or the generic twin. Its methods call the
// kernels directly, not through function values, so that the sums they
// pass by pointer stay on the stack. The kernels' contracts (every slice
// argument has at least the first argument's length, and only that many
// elements are read or written):
//
//	biasSum(x, o, bias, s):  x[j] = float64(o[j]+bias[j]) (the sum rounded to float32); s[j mod 8] += x[j], in order of j
//	sqSum(x, mean, s):       s[j mod 8] += (x[j]-mean)² (the product rounded)
//	norm(h, x, gamma, beta, mean, rstd):  h[j] = relu(float32(float32((x[j]-mean)·rstd)·gamma[j]) + beta[j])
//	normDrop(…, u, …, thresh, scale):     norm, then h[j] ·= (u[j] ≥ thresh ? scale : +0)
//	normGrad:     see NormGrad; st carries the sums
//	reluBias(h, o, bias):                 h[j] = relu(o[j] + bias[j]) (h may be o)
//	reluBiasDrop(h, o, bias, u, thresh, scale):  reluBias, then h[j] ·= (u[j] ≥ thresh ? scale : +0)
//	gate(g, h, scale, active, bad):       see Gate; *bad carries the non-finite flag
//	normGradOut:  see NormGradOut
type Set struct {
	name   string
	native bool
	isa    isa // the assembly of the native set (kernels_amd64.go)
}

// isa names the assembly of a native set (kernels_amd64.go).
type isa uint8

// Name is the set's kernel name (dispatch's spelling: avx2, generic, …).
func (k Set) Name() string { return k.name }

// FiniteBits is the exponent field of a float32: v is a NaN or an infinity
// exactly when bits(v)&FiniteBits == FiniteBits.
const FiniteBits = 0x7f800000

// BiasStats sets x = o + bias (rounded to float32, as dense.AddBias, then
// widened; len(x) elements) and returns the row's mean and 1/sqrt(var+eps)
// with the biased variance, both sums as eight float64 partial sums
// (element j into partial j mod 8, added as sum8).
func (k Set) BiasStats(x []float64, o, bias []float32, eps float64) (mean, rstd float64) {
	n := len(x)
	var s [8]float64
	if k.native {
		biasSumNative(k.isa, x, o[:n], bias[:n], &s)
	} else {
		biasSumGeneric(x, o[:n], bias[:n], &s)
	}
	mean = sum8(&s) / float64(n)
	s = [8]float64{}
	if k.native {
		sqSumNative(k.isa, x, mean, &s)
	} else {
		sqSumGeneric(x, mean, &s)
	}
	return mean, 1 / math.Sqrt(sum8(&s)/float64(n)+eps)
}

// Norm sets h[j] = relu(x̂_j·gamma[j] + beta[j]), x̂_j = (x[j]-mean)·rstd
// rounded to float32, the product and the sum each rounded to float32;
// relu maps negatives, −0 and NaNs with the sign bit set to +0.
func (k Set) Norm(h []float32, x []float64, gamma, beta []float32, mean, rstd float64) {
	n := len(h)
	if k.native {
		normNative(k.isa, h, x[:n], gamma[:n], beta[:n], mean, rstd)
	} else {
		normGeneric(h, x[:n], gamma[:n], beta[:n], mean, rstd)
	}
}

// NormDrop is Norm followed by dropout: h[j] is multiplied by scale where
// the 16-bit decision u[j] ≥ thresh and by +0 elsewhere.
func (k Set) NormDrop(h []float32, x []float64, gamma, beta []float32, u []uint16, mean, rstd float64, thresh int32, scale float32) {
	n := len(h)
	if k.native {
		normDropNative(k.isa, h, x[:n], gamma[:n], beta[:n], u[:n], mean, rstd, thresh, scale)
	} else {
		normDropGeneric(h, x[:n], gamma[:n], beta[:n], u[:n], mean, rstd, thresh, scale)
	}
}

// NormGrad is one row of the fused backward's first pass. Per element:
//
//	w = g·scale (active) or g;  v = w where bits(h) ∈ (0, 2³¹] (h > 0, or −0, which no forward writes), +0 elsewhere;  g = v
//	x̂ = float32((float64(o+bias) − mean)·rstd);  xh = x̂
//	ag += float64(v·x̂);  ab += float64(v)
//	ĥ = float64(v·gamma);  s[j mod 8] += ĥ;  t[j mod 8] += ĥ·float64(x̂)
//
// and it returns sg = sum8(s)/n, sgx likewise from t, and fin =
// 0 when h held a NaN or an infinity, FiniteBits otherwise.
func (k Set) NormGrad(g, h, o, bias, gamma, xh []float32, ag, ab []float64, mean, rstd float64, scale float32, active bool) (sg, sgx float64, fin uint32) {
	n := len(g)
	var st gradState
	if k.native {
		normGradNative(k.isa, g, h[:n], o[:n], bias[:n], gamma[:n], xh[:n], ag[:n], ab[:n], mean, rstd, scale, active, &st)
	} else {
		normGradGeneric(g, h[:n], o[:n], bias[:n], gamma[:n], xh[:n], ag[:n], ab[:n], mean, rstd, scale, active, &st)
	}
	fin = FiniteBits
	if st.bad>>31 != 0 {
		fin = 0
	}
	return sum8(&st.s) / float64(n), sum8(&st.t) / float64(n), fin
}

// NormGradOut sets dst[j] = float32(rstd·((float64(g[j]·gamma[j]) − sg) −
// float64(xh[j])·sgx)), the LayerNorm input gradient of one row (the
// product g·gamma rounded to float32). dst may be g.
func (k Set) NormGradOut(dst, g, gamma, xh []float32, rstd, sg, sgx float64) {
	n := len(g)
	if k.native {
		normGradOutNative(k.isa, dst[:n], g, gamma[:n], xh[:n], rstd, sg, sgx)
	} else {
		normGradOutGeneric(dst[:n], g, gamma[:n], xh[:n], rstd, sg, sgx)
	}
}

// ReluBias sets h[j] = relu(o[j] + bias[j]), the sum rounded to float32:
// the hidden stage without LayerNorm. h may be o.
func (k Set) ReluBias(h, o, bias []float32) {
	n := len(h)
	if k.native {
		reluBiasNative(h, o[:n], bias[:n])
	} else {
		reluBiasGeneric(h, o[:n], bias[:n])
	}
}

// ReluBiasDrop is ReluBias followed by dropout: h[j] is multiplied by
// scale where the 16-bit decision u[j] ≥ thresh and by +0 elsewhere.
func (k Set) ReluBiasDrop(h, o, bias []float32, u []uint16, thresh int32, scale float32) {
	n := len(h)
	if k.native {
		reluBiasDropNative(h, o[:n], bias[:n], u[:n], thresh, scale)
	} else {
		reluBiasDropGeneric(h, o[:n], bias[:n], u[:n], thresh, scale)
	}
}

// Gate sets g[j] = g[j]·scale (active) or g[j] where bits(h[j]) ∈ (0, 2³¹]
// (h > 0, or −0, which no forward writes) and +0 elsewhere: the gradient
// through dropout and the ReLU, h being their output. It returns 0 when h
// holds a NaN or an infinity, FiniteBits otherwise.
func (k Set) Gate(g, h []float32, scale float32, active bool) (fin uint32) {
	n := len(g)
	var bad uint32
	if k.native {
		gateNative(g, h[:n], scale, active, &bad)
	} else {
		gateGeneric(g, h[:n], scale, active, &bad)
	}
	if bad>>31 != 0 {
		return 0
	}
	return FiniteBits
}

var generic = Set{name: dispatch.Generic}

// family is the sets this CPU runs, best first, generic last (archSets
// lives in kernels_amd64.go, or kernels_other.go under noasm and on other
// architectures). Read-only after init.
var family = newFamily()

func newFamily() *dispatch.Family[Set] {
	var impls []dispatch.Impl[Set]
	for _, k := range append(archSets(), generic) {
		impls = append(impls, dispatch.Impl[Set]{Name: k.name, Impl: k})
	}
	// Without a set of their own, ARM CPUs run the generic set, so one
	// SUPERGCN_KERNEL value steers every family.
	return dispatch.NewFamily(impls, map[string]string{"neon": dispatch.Generic, "sve": dispatch.Generic})
}

// Sets returns the sets this CPU runs, best first, generic last.
func Sets() []Set { return family.Impls() }

// Kernels names the sets this CPU runs, best first, generic last.
func Kernels() []string { return family.Names() }

// KernelName names the set Default returns.
func KernelName() string { return family.Default() }

// Lookup resolves a kernel name as dispatch.Family.Lookup does: ""
// means $SUPERGCN_KERNEL, an empty value or "auto" the best set.
func Lookup(name string) (Set, error) {
	im, err := family.Lookup(name)
	return im.Impl, err
}

// Default returns the set $SUPERGCN_KERNEL names, or the best one when it
// is unset or names no set this CPU runs (the CLI reports a bad value
// through aggr, which checks the same variable).
func Default() Set {
	s, err := Lookup("")
	if err != nil {
		return family.Best().Impl
	}
	return s
}

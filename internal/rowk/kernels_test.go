package rowk

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/supergcn/supergcn/internal/dispatch"
)

// widths covers every tail length around the 8-element vector step and
// the model's widths.
func widths() []int {
	var w []int
	for n := 0; n <= 70; n++ {
		w = append(w, n)
	}
	return append(w, 100, 256)
}

const pad = 9 // sentinel elements either side of every slice

var (
	sent32 = math.Float32frombits(0x7fa1b2c3) // a signalling-NaN pattern no kernel writes
	sent64 = math.Float64frombits(0x7ff4b2c3d4e5f607)
)

// buf32 returns a slice of n float32 starting off elements into a buffer
// padded with sentinels, and the buffer.
func buf32(n, off int) ([]float32, []float32) {
	b := make([]float32, off+n+pad)
	for i := range b {
		b[i] = sent32
	}
	return b[off : off+n : off+n], b
}

func buf64(n, off int) ([]float64, []float64) {
	b := make([]float64, off+n+pad)
	for i := range b {
		b[i] = sent64
	}
	return b[off : off+n : off+n], b
}

// same32 reports whether a and b hold the same bits, any NaN matching any
// NaN (a NaN's payload and sign depend on operand order).
func same32(a, b float32) bool {
	if a != a && b != b {
		return true
	}
	return math.Float32bits(a) == math.Float32bits(b)
}

func same64(a, b float64) bool {
	if a != a && b != b {
		return true
	}
	return math.Float64bits(a) == math.Float64bits(b)
}

func eq32(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if !same32(got[i], want[i]) {
			t.Fatalf("%s[%d] = %v (%#x), generic %v (%#x)", what, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

func eq64(t *testing.T, what string, got, want []float64) {
	t.Helper()
	for i := range want {
		if !same64(got[i], want[i]) {
			t.Fatalf("%s[%d] = %v (%#x), generic %v (%#x)", what, i, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
		}
	}
}

// fill sets x to values of mixed sign and magnitude; with special, about
// one in eight becomes a NaN, ±Inf, ±0 or a subnormal.
func fill(r *rand.Rand, x []float32, special bool) {
	sp := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)),
		math.Float32frombits(0x00000123), math.Float32frombits(0xffc00000)}
	for i := range x {
		x[i] = float32(r.NormFloat64() * math.Exp2(float64(r.IntN(9)-4)))
		if special && r.IntN(8) == 0 {
			x[i] = sp[r.IntN(len(sp))]
		}
	}
}

func clone32(x []float32) ([]float32, []float32) {
	a, ab := buf32(len(x), 3)
	copy(a, x)
	return a, ab
}

// TestKernelsMatchGeneric runs every set this CPU has against the generic
// twin on sentinel-padded, misaligned rows of every width, with and
// without NaN/Inf inputs: the outputs must agree bit for bit and nothing
// outside the rows may change.
func TestKernelsMatchGeneric(t *testing.T) {
	g := generic
	for _, k := range Sets() {
		for _, n := range widths() {
			for off := 0; off < 4; off++ {
				for trial, special := range []bool{false, true, false, true} {
					name := fmt.Sprintf("%s/n=%d/off=%d/trial=%d", k.Name(), n, off, trial)
					t.Run(name, func(t *testing.T) {
						checkSet(t, k, g, n, off, special, rand.New(rand.NewPCG(uint64(n), uint64(trial*4+off))))
					})
				}
			}
		}
	}
}

func checkSet(t *testing.T, k, g Set, n, off int, special bool, r *rand.Rand) {
	o, _ := buf32(n, off)
	bias, _ := buf32(n, (off+1)%4)
	gamma, _ := buf32(n, (off+2)%4)
	beta, _ := buf32(n, (off+3)%4)
	fill(r, o, special)
	fill(r, bias, special)
	fill(r, gamma, false)
	fill(r, beta, false)
	for j := range n {
		// NaN + NaN is the first operand's NaN on x86, and Go's compiler
		// orders the operands of a commutative add as it likes, so the
		// sign of the sum, which the ReLU keeps or zeroes, is not defined
		// by the Go code: keep such pairs out.
		if o[j] != o[j] && bias[j] != bias[j] {
			bias[j] = 1
		}
	}
	const eps = 1e-5

	// BiasStats
	xk, xkb := buf64(n, off)
	xg, _ := buf64(n, off)
	mk, rk := k.BiasStats(xk, o, bias, eps)
	mg, rg := g.BiasStats(xg, o, bias, eps)
	eq64(t, "BiasStats x", xk, xg)
	eq64(t, "BiasStats mean, rstd", []float64{mk, rk}, []float64{mg, rg})
	sentinels64(t, "BiasStats x", xkb, off, n)
	if !special && n > 0 && (math.IsNaN(mk) || math.IsNaN(rk)) {
		t.Fatalf("BiasStats of finite input: %v, %v", mk, rk)
	}

	// Norm and NormDrop (the statistics of the row, or arbitrary ones
	// when the row is not finite)
	if math.IsNaN(mg) || math.IsInf(mg, 0) || math.IsNaN(rg) {
		mg, rg = 0.25, 3
	}
	hk, hkb := buf32(n, off)
	hg, _ := buf32(n, off)
	k.Norm(hk, xg, gamma, beta, mg, rg)
	g.Norm(hg, xg, gamma, beta, mg, rg)
	eq32(t, "Norm h", hk, hg)
	sentinels32(t, "Norm h", hkb, off, n)
	u := make([]uint16, n+off)[off:]
	for i := range u {
		u[i] = uint16(r.Uint32())
	}
	for _, p := range []float64{0, 0.1, 0.5, 0.9} {
		thresh := int32(math.Ceil(p * (1 << 16)))
		scale := float32(1 / (1 - p))
		k.NormDrop(hk, xg, gamma, beta, u, mg, rg, thresh, scale)
		g.NormDrop(hg, xg, gamma, beta, u, mg, rg, thresh, scale)
		eq32(t, fmt.Sprintf("NormDrop(p=%v) h", p), hk, hg)
		sentinels32(t, "NormDrop h", hkb, off, n)
	}

	// ReluBias, ReluBiasDrop (into h and in place over o) and Gate
	k.ReluBias(hk, o, bias)
	g.ReluBias(hg, o, bias)
	eq32(t, "ReluBias h", hk, hg)
	sentinels32(t, "ReluBias h", hkb, off, n)
	ik, _ := clone32(o)
	k.ReluBias(ik, ik, bias)
	eq32(t, "ReluBias in place", ik, hg)
	for _, p := range []float64{0, 0.1, 0.5, 0.9} {
		thresh := int32(math.Ceil(p * (1 << 16)))
		scale := float32(1 / (1 - p))
		k.ReluBiasDrop(hk, o, bias, u, thresh, scale)
		g.ReluBiasDrop(hg, o, bias, u, thresh, scale)
		eq32(t, fmt.Sprintf("ReluBiasDrop(p=%v) h", p), hk, hg)
		sentinels32(t, "ReluBiasDrop h", hkb, off, n)
		ik, _ := clone32(o)
		k.ReluBiasDrop(ik, ik, bias, u, thresh, scale)
		eq32(t, "ReluBiasDrop in place", ik, hg)
	}
	for _, active := range []bool{false, true} {
		hin := make([]float32, n)
		fill(r, hin, special)
		gin := make([]float32, n)
		fill(r, gin, special)
		gk, gkb := clone32(gin)
		gg, _ := clone32(gin)
		fk := k.Gate(gk, hin, 2, active)
		fg := g.Gate(gg, hin, 2, active)
		eq32(t, "Gate g", gk, gg)
		sentinels32(t, "Gate g", gkb, 3, n)
		if fk != fg || fk != finiteOf(hin) {
			t.Fatalf("Gate fin = %#x, generic %#x, want %#x", fk, fg, finiteOf(hin))
		}
	}

	// NormGrad and NormGradOut, h from the forward (with zeros, negative
	// zeros and, when special, NaNs and infinities)
	hin := make([]float32, n)
	fill(r, hin, special)
	for _, active := range []bool{false, true} {
		gin := make([]float32, n)
		fill(r, gin, special)
		gk, gkb := clone32(gin)
		gg, _ := clone32(gin)
		xhk, xhkb := buf32(n, off)
		xhg, _ := buf32(n, off)
		agk, agkb := buf64(n, off)
		abk, _ := buf64(n, (off+1)%4)
		agg, _ := buf64(n, off)
		abg, _ := buf64(n, (off+1)%4)
		for i := range n {
			v := r.NormFloat64()
			agk[i], agg[i] = v, v
			v = r.NormFloat64()
			abk[i], abg[i] = v, v
		}
		sk, tk, fk := k.NormGrad(gk, hin, o, bias, gamma, xhk, agk, abk, mg, rg, 1.25, active)
		sg, tg, fg := g.NormGrad(gg, hin, o, bias, gamma, xhg, agg, abg, mg, rg, 1.25, active)
		eq32(t, "NormGrad g", gk, gg)
		eq32(t, "NormGrad xh", xhk, xhg)
		eq64(t, "NormGrad ag", agk, agg)
		eq64(t, "NormGrad ab", abk, abg)
		eq64(t, "NormGrad sg, sgx", []float64{sk, tk}, []float64{sg, tg})
		if fk != fg {
			t.Fatalf("NormGrad fin = %#x, generic %#x", fk, fg)
		}
		if want := finiteOf(hin); fk != want {
			t.Fatalf("NormGrad fin = %#x, want %#x", fk, want)
		}
		sentinels32(t, "NormGrad g", gkb, 3, n)
		sentinels32(t, "NormGrad xh", xhkb, off, n)
		sentinels64(t, "NormGrad ag", agkb, off, n)

		if math.IsNaN(sg) || math.IsInf(sg, 0) || math.IsNaN(tg) || math.IsInf(tg, 0) {
			sg, tg = 0.125, -0.5
		}
		dk, dkb := buf32(n, off)
		dg, _ := buf32(n, off)
		k.NormGradOut(dk, gg, gamma, xhg, rg, sg, tg)
		g.NormGradOut(dg, gg, gamma, xhg, rg, sg, tg)
		eq32(t, "NormGradOut dst", dk, dg)
		sentinels32(t, "NormGradOut dst", dkb, off, n)
		// in place, as the fused stage runs it
		ik, _ := clone32(gg)
		k.NormGradOut(ik, ik, gamma, xhg, rg, sg, tg)
		eq32(t, "NormGradOut in place", ik, dg)
	}
}

// finiteOf is 0 when h holds a NaN or an infinity, FiniteBits otherwise.
func finiteOf(h []float32) uint32 {
	for _, v := range h {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return 0
		}
	}
	return FiniteBits
}

func sentinels32(t *testing.T, what string, b []float32, off, n int) {
	t.Helper()
	for i, v := range b {
		if (i < off || i >= off+n) && math.Float32bits(v) != math.Float32bits(sent32) {
			t.Fatalf("%s: element %d outside the row (%d..%d) overwritten: %v", what, i, off, off+n, v)
		}
	}
}

func sentinels64(t *testing.T, what string, b []float64, off, n int) {
	t.Helper()
	for i, v := range b {
		if (i < off || i >= off+n) && math.Float64bits(v) != math.Float64bits(sent64) {
			t.Fatalf("%s: element %d outside the row (%d..%d) overwritten: %v", what, i, off, off+n, v)
		}
	}
}

// TestGenericDefinition checks the generic twin against the contract
// written out element by element: the partial sums in lane j mod 8 and
// the rounding of every product.
func TestGenericDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range widths() {
		o, bias, gamma := make([]float32, n), make([]float32, n), make([]float32, n)
		fill(r, o, false)
		fill(r, bias, false)
		fill(r, gamma, false)
		x := make([]float64, n)
		mean, rstd := generic.BiasStats(x, o, bias, 1e-5)
		var s, q [8]float64
		for j := range n {
			v := float64(o[j] + bias[j])
			if x[j] != v {
				t.Fatalf("n=%d: x[%d] = %v, want %v", n, j, x[j], v)
			}
			s[j%8] += v
		}
		wm := (((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))) / float64(n)
		for j := range n {
			d := x[j] - wm
			q[j%8] += float64(d * d)
		}
		wr := 1 / math.Sqrt((((q[0]+q[1])+(q[2]+q[3]))+((q[4]+q[5])+(q[6]+q[7])))/float64(n)+1e-5)
		if n > 0 && (mean != wm || rstd != wr) {
			t.Fatalf("n=%d: BiasStats = %v, %v; want %v, %v", n, mean, rstd, wm, wr)
		}
		g, h, xh := make([]float32, n), make([]float32, n), make([]float32, n)
		fill(r, g, false)
		fill(r, h, false)
		ag, ab := make([]float64, n), make([]float64, n)
		g0 := append([]float32(nil), g...)
		sg, sgx, fin := generic.NormGrad(g, h, o, bias, gamma, xh, ag, ab, mean, rstd, 2, true)
		var a, b [8]float64
		for j := range n {
			v := float32(0)
			if h[j] > 0 {
				v = g0[j] * 2
			}
			xj := float32((float64(o[j]+bias[j]) - mean) * rstd)
			if !same32(g[j], v) || xh[j] != xj || ag[j] != float64(v*xj) || ab[j] != float64(v) {
				t.Fatalf("n=%d, j=%d: g %v (want %v), x̂ %v (want %v), ag %v, ab %v", n, j, g[j], v, xh[j], xj, ag[j], ab[j])
			}
			hh := float64(v * gamma[j])
			a[j%8] += hh
			b[j%8] += float64(hh * float64(xj))
		}
		sum := func(p [8]float64) float64 { return ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7])) }
		if n > 0 && (sg != sum(a)/float64(n) || sgx != sum(b)/float64(n) || fin != FiniteBits) {
			t.Fatalf("n=%d: NormGrad sums %v, %v, fin %#x", n, sg, sgx, fin)
		}
	}
}

// TestLookup: every available set can be forced by name or through
// SUPERGCN_KERNEL; aliases serve the kernel names without a set here.
func TestLookup(t *testing.T) {
	for _, name := range Kernels() {
		s, err := Lookup(name)
		if err != nil || s.Name() != name {
			t.Fatalf("Lookup(%q) = %q, %v", name, s.Name(), err)
		}
		t.Setenv(dispatch.Env, name)
		if d := Default(); d.Name() != name || KernelName() != name {
			t.Fatalf("%s=%s: Default %q, KernelName %q", dispatch.Env, name, d.Name(), KernelName())
		}
	}
	t.Setenv(dispatch.Env, "bogus")
	if _, err := Lookup(""); err == nil {
		t.Fatal("Lookup of an unknown $SUPERGCN_KERNEL succeeded")
	}
	if d := Default(); d.Name() != Kernels()[0] {
		t.Fatalf("Default with a bad $SUPERGCN_KERNEL = %q, want the best %q", d.Name(), Kernels()[0])
	}
	if dispatch.Supported("avx512") && slices.Contains(Kernels(), "avx2") { // not under noasm
		if s, err := Lookup("avx512"); err != nil || s.Name() != "avx512" || Kernels()[0] != "avx512" {
			t.Fatalf("Lookup(avx512) = %q, %v (kernels %v); want the AVX-512 set first", s.Name(), err, Kernels())
		}
	}
}

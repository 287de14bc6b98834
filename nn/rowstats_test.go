package nn

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/supergcn/supergcn/internal/rowk"
)

// partials8 adds f(j) for j < n into eight partial sums, element j into
// partial j mod 8, and returns ((p0+p1)+(p2+p3))+((p4+p5)+(p6+p7)): the
// order rowStats, biasStats, gradStats and normGradRow promise.
func partials8(n int, f func(j int) float64) float64 {
	var p [8]float64
	for j := range n {
		p[j%8] += f(j)
	}
	return ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]))
}

func randRow(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for j := range x {
		x[j] = float32(r.NormFloat64()*3 + 0.5)
	}
	return x
}

// TestRowStatsOrder checks the LayerNorm statistics helpers on every
// length up to 19 (all remainders mod 8): exactly the documented partial
// sums, close to a plain float64 sum, and biasStats equal to rowStats of
// the biased row, which it writes.
func TestRowStatsOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const eps = 1e-5
	for n := 1; n <= 19; n++ {
		x := randRow(r, n)
		mean, rstd := rowStats(x, eps)
		wm := partials8(n, func(j int) float64 { return float64(x[j]) }) / float64(n)
		sq := partials8(n, func(j int) float64 { d := float64(x[j]) - wm; return float64(d * d) }) // conversion: no FMA (arm64 would fuse)
		wr := 1 / math.Sqrt(sq/float64(n)+eps)
		if mean != wm || rstd != wr {
			t.Fatalf("n=%d: rowStats = %v, %v; want %v, %v", n, mean, rstd, wm, wr)
		}
		var plain, psq float64
		for _, v := range x {
			plain += float64(v)
		}
		plain /= float64(n)
		for _, v := range x {
			psq += (float64(v) - plain) * (float64(v) - plain)
		}
		if math.Abs(mean-plain) > 1e-12*(1+math.Abs(plain)) || math.Abs(rstd*math.Sqrt(psq/float64(n)+eps)-1) > 1e-12 {
			t.Fatalf("n=%d: rowStats = %v, %v, far from the plain sums %v, %v", n, mean, rstd, plain, 1/math.Sqrt(psq/float64(n)+eps))
		}
		o, bias := randRow(r, n), randRow(r, n)
		xb, x32 := make([]float64, n), make([]float32, n)
		bm, br := biasStats(rowk.Default(), xb, o, bias, eps)
		for j := range xb {
			if x32[j] = o[j] + bias[j]; xb[j] != float64(x32[j]) {
				t.Fatalf("n=%d: biasStats wrote x[%d] = %v, want %v", n, j, xb[j], x32[j])
			}
		}
		if m2, r2 := rowStats(x32, eps); bm != m2 || br != r2 {
			t.Fatalf("n=%d: biasStats = %v, %v; rowStats of the biased row %v, %v", n, bm, br, m2, r2)
		}
	}
}

// TestGradStatsOrder checks gradStats against the documented partial sums
// and normGradRow against gradStats and the per-element definitions of x̂
// and the column sums, on every length up to 19.
func TestGradStatsOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := 1; n <= 19; n++ {
		g, gamma, o, bias := randRow(r, n), randRow(r, n), randRow(r, n), randRow(r, n)
		mean, rstd := 0.3, 0.7
		xh := make([]float32, n)
		for j := range xh {
			xh[j] = float32((float64(o[j]+bias[j]) - mean) * rstd)
		}
		sg, sgx := gradStats(g, gamma, xh)
		wg := partials8(n, func(j int) float64 { return float64(g[j] * gamma[j]) }) / float64(n)
		wgx := partials8(n, func(j int) float64 { return float64(float64(g[j]*gamma[j]) * float64(xh[j])) }) / float64(n)
		if sg != wg || sgx != wgx {
			t.Fatalf("n=%d: gradStats = %v, %v; want %v, %v", n, sg, sgx, wg, wgx)
		}
		got := make([]float32, n)
		ag, ab := make([]float64, n), make([]float64, n)
		for j := range ag {
			ag[j], ab[j] = float64(j), -float64(j)
		}
		h := make([]float32, n)
		for j := range h {
			h[j] = 1 + float32(j) // all kept: the gate leaves g as it is
		}
		gg := append([]float32(nil), g...)
		rg, rgx, fin := normGradRow(rowk.Default(), gg, h, o, bias, gamma, got, ag, ab, mean, rstd, 1, false)
		if fin == 0 || !slices.Equal(gg, g) {
			t.Fatalf("n=%d: normGradRow gated a finite all-positive h: fin %#x, g %v → %v", n, fin, g, gg)
		}
		if rg != sg || rgx != sgx {
			t.Fatalf("n=%d: normGradRow = %v, %v; gradStats %v, %v", n, rg, rgx, sg, sgx)
		}
		for j := range got {
			if got[j] != xh[j] || ag[j] != float64(j)+float64(g[j]*xh[j]) || ab[j] != -float64(j)+float64(g[j]) {
				t.Fatalf("n=%d, j=%d: normGradRow x̂ %v (want %v), sums %v, %v", n, j, got[j], xh[j], ag[j], ab[j])
			}
		}
	}
}

// TestGateRange checks the gradient gate element by element and that a
// NaN or an infinity anywhere in h, and only then, is reported.
func TestGateRange(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), -float32(math.NaN())}
	for n := 1; n <= 9; n++ {
		for _, active := range []bool{false, true} {
			for bad := -1; bad < n; bad++ {
				for _, sp := range specials {
					h, g := randRow(r, n), randRow(r, n)
					h[0] = 0 // h never holds −0 (ReLU and dropout give +0)
					if bad >= 0 {
						h[bad] = sp
					}
					got := append([]float32(nil), g...)
					fin := gateRange(rowk.Default(), got, h, 2, active)
					if (fin == 0) != (bad >= 0) {
						t.Fatalf("n=%d active=%v non-finite at %d (%v): gateRange returned %#x", n, active, bad, sp, fin)
					}
					for j := range got {
						want := float32(0)
						if b := math.Float32bits(h[j]); b != 0 && b < 1<<31 {
							want = g[j]
							if active {
								want = g[j] * 2
							}
						}
						if math.Float32bits(got[j]) != math.Float32bits(want) && !(want != want && got[j] != got[j]) {
							t.Fatalf("n=%d active=%v: g[%d] = %v, want %v (h %v)", n, active, j, got[j], want, h[j])
						}
					}
					if bad < 0 {
						break
					}
				}
			}
		}
	}
}

package rowk

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSoftmaxExpMatchesGeneric runs every set's SoftmaxExp against the
// generic twin on sentinel-padded, misaligned rows of every width (47, 1,
// 7 and 33 among them), logits of a trained model's spread and with
// NaN/Inf inputs: m, s and e agree bit for bit (a NaN anywhere: s is NaN
// in both), nothing outside e changes.
func TestSoftmaxExpMatchesGeneric(t *testing.T) {
	for _, k := range Sets() {
		for _, n := range widths() {
			for off := 0; off < 4; off++ {
				for trial, special := range []bool{false, true, false} {
					r := rand.New(rand.NewPCG(uint64(n), uint64(trial*4+off)))
					name := fmt.Sprintf("%s/n=%d/off=%d/trial=%d", k.Name(), n, off, trial)
					x, _ := buf32(n, off)
					fill(r, x, special)
					if trial == 2 { // wide spread: exponents flushed to 0
						for j := range x {
							x[j] *= 40
						}
					}
					e, eb := buf32(n, (off+1)%4)
					ge, _ := buf32(n, 0)
					m, s := k.SoftmaxExp(e, x)
					gm, gs := generic.SoftmaxExp(ge, x)
					nan := math.IsNaN(gs)
					if nan != math.IsNaN(s) || !nan && (!same32(m, gm) || !same64(s, gs)) {
						t.Fatalf("%s: m %v s %v, generic m %v s %v", name, m, s, gm, gs)
					}
					if !nan {
						eq32(t, name+" e", e, ge)
					}
					sentinels32(t, name+" e", eb, (off+1)%4, n)
				}
			}
		}
	}
}

// TestSoftmaxExpReference checks SoftmaxExp against float64 math on rows
// of the odd widths the loss sees: e within 3 float32 ulp-sized relative
// errors of exp(x−max) plus the rounding of the float32 difference x−max
// (|x−max|·2^−24 relatively), s within 1e-6 relatively.
func TestSoftmaxExpReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, k := range Sets() {
		for _, n := range []int{1, 7, 33, 47, 64, 100} {
			x := make([]float32, n)
			e := make([]float32, n)
			for trial := range 20 {
				fill(r, x, false)
				for j := range x {
					x[j] *= float32(trial)
				}
				m, s := k.SoftmaxExp(e, x)
				rm := math.Inf(-1)
				for _, v := range x {
					rm = math.Max(rm, float64(v))
				}
				var rs float64
				for j, v := range x {
					want := math.Exp(float64(v) - rm)
					rs += want
					arg := float64(v) - rm
					if d := math.Abs(float64(e[j]) - want); d > (3-arg)*0x1p-24*want && want > 0x1p-126 {
						t.Fatalf("%s n=%d: e[%d] = %v, exp(%v) = %v", k.Name(), n, j, e[j], arg, want)
					}
				}
				if float64(m) != rm || math.Abs(s-rs) > 1e-6*rs {
					t.Fatalf("%s n=%d: m %v s %v, reference %v %v", k.Name(), n, m, s, rm, rs)
				}
			}
		}
	}
}

// TestRowMax checks RowMax against the plain loop on every width and
// offset (finite values, ties included).
func TestRowMax(t *testing.T) {
	for _, k := range Sets() {
		for _, n := range widths() {
			for off := 0; off < 4; off++ {
				x, _ := buf32(n, off)
				fill(rand.New(rand.NewPCG(uint64(n), uint64(off))), x, false)
				want := float32(math.Inf(-1))
				for _, v := range x {
					want = max(want, v)
				}
				if n > 2 {
					x[n-1] = want // a tie in the tail
				}
				if got := k.RowMax(x); got != want {
					t.Fatalf("%s n=%d off=%d: RowMax %v, want %v", k.Name(), n, off, got, want)
				}
			}
		}
	}
}

// TestScale checks every set's Scale against the reference loop bit for
// bit on every width and offset, in place and into another slice, with
// NaN/Inf/subnormal inputs, and that nothing outside dst changes.
func TestScale(t *testing.T) {
	for _, k := range Sets() {
		for _, n := range append(widths(), 127, 128, 129, 1031) {
			for off := 0; off < 4; off++ {
				r := rand.New(rand.NewPCG(uint64(n), uint64(off)))
				src, _ := buf32(n, off)
				fill(r, src, off%2 == 1)
				f := float32(r.NormFloat64())
				want := make([]float32, n)
				for j := range want {
					want[j] = f * src[j]
				}
				dst, db := buf32(n, (off+2)%4)
				k.Scale(dst, src, f)
				eq32(t, fmt.Sprintf("%s n=%d off=%d", k.Name(), n, off), dst, want)
				sentinels32(t, "Scale dst", db, (off+2)%4, n)
				k.Scale(src, src, f)
				eq32(t, fmt.Sprintf("%s in place n=%d off=%d", k.Name(), n, off), src, want)
			}
		}
	}
}

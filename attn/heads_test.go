package attn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestHeadKernelsMatchReference runs every head kernel this CPU has
// against the reference loops of their contracts: edge counts around the
// prefetch distance (0, 1, 7–9, 33), strides and weight strides wider than
// the 64 columns, operands misaligned by one float inside sentinel-padded
// buffers whose padding must stay untouched.
func TestHeadKernelsMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	t.Logf("head kernels %v", headFamily.Names())
	for _, k := range headFamily.Impls() {
		for _, n := range []int{0, 1, 7, 8, 9, 33} {
			for _, c := range []struct{ stride, wstride int }{{64, 8}, {72, 8}, {128, 16}} {
				const rows = 40
				x := padded(r, rows*c.stride)
				idx := make([]int32, n)
				for i := range idx {
					idx[i] = int32(r.IntN(rows))
				}
				w := padded(r, max(n*c.wstride, 8))
				out := padded(r, 64)
				want := make([]float64, 64)
				for j := range want {
					want[j] = float64(out.in[j])
					for e, u := range idx {
						want[j] += float64(w.in[e*c.wstride+j/8]) * float64(x.in[int(u)*c.stride+j])
					}
				}
				k.prefetch(x.in, c.stride, idx, 4*c.stride+1) // a hint: nothing read or written
				k.accum(out.in, x.in, c.stride, idx, w.in, c.wstride)
				for j := range want {
					if math.Abs(float64(out.in[j])-want[j]) > 1e-5*(1+math.Abs(want[j])) {
						t.Fatalf("%s accum, %d edges, stride %d/%d: out[%d] = %g, want %g", k.name, n, c.stride, c.wstride, j, out.in[j], want[j])
					}
				}
				for _, p := range []pad{x, w, out} {
					p.check(t)
				}
			}
		}
		for _, n := range []int{0, 1, 7, 8, 9, 33} {
			for _, c := range []struct{ stride, dstride int }{{64, 8}, {72, 8}, {128, 16}} {
				const rows = 40
				x, b := padded(r, rows*c.stride), padded(r, 64)
				idx := make([]int32, n)
				for i := range idx {
					idx[i] = int32(r.IntN(rows))
				}
				d := padded(nil, max(n*c.dstride, 8))
				k.dots(d.in, c.dstride, x.in, c.stride, idx, b.in)
				for e, u := range idx {
					for i := range 8 {
						var want float64
						for j := range 8 {
							want += float64(x.in[int(u)*c.stride+8*i+j]) * float64(b.in[8*i+j])
						}
						if got := d.in[e*c.dstride+i]; math.Abs(float64(got)-want) > 1e-5*(1+math.Abs(want)) {
							t.Fatalf("%s dots, %d edges, stride %d/%d: d[%d] = %g, want %g", k.name, n, c.stride, c.dstride, e*c.dstride+i, got, want)
						}
					}
				}
				for _, p := range []pad{x, b, d} {
					p.check(t)
				}
			}
		}
	}
}

// TestHeadKernelsInPasses runs Forward and Backward with every head
// kernel against the generic twins on the layouts that use them (8, 12
// and 16 heads of 8; one head of 64 and two of 32 for the dot products)
// with attention dropout.
func TestHeadKernelsInPasses(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, lay := range [][2]int{{8, 8}, {12, 8}, {16, 8}, {1, 64}, {2, 32}} {
		sp := Spec{Heads: lay[0], Width: lay[1], Slope: 0.2, Drop: 0.3, Seed: 9}
		h, hf := sp.Heads, sp.Heads*sp.Width
		g := degGraph(t, r, 31, []int{0, 1, 5, 9, 17, 40, 3, 0, 2})
		z, src, dst := randVec(r, 31*hf), randVec(r, 31*h), randVec(r, g.Rows*h)
		gp, cd := randVec(r, g.Rows*hf), randVec(r, g.Rows*h)
		var want [4][]float32
		for i, k := range append([]headKernels{genericHeads}, headFamily.Impls()...) {
			var st State
			if err := forward(g, sp, z, src, dst, Ids{}, GenericRowsW, k, &st); err != nil {
				t.Fatal(err)
			}
			gz, gs, gd := make([]float32, len(z)), make([]float32, len(src)), make([]float32, len(dst))
			if err := backward(g, sp, z, src, dst, gp, cd, GenericRowsW, k, &st, &Scratch{}, gz, gs, gd); err != nil {
				t.Fatal(err)
			}
			got := [4][]float32{st.R, gz, gs, gd}
			if i == 0 {
				want = got
				continue
			}
			for j, what := range []string{"R", "gz", "gsrc", "gdst"} {
				for e := range want[j] {
					if d := math.Abs(float64(got[j][e] - want[j][e])); d > 1e-5*(1+math.Abs(float64(want[j][e]))) {
						t.Fatalf("%d×%d, %s: %s[%d] = %g, generic %g", sp.Heads, sp.Width, k.name, what, e, got[j][e], want[j][e])
					}
				}
			}
		}
	}
}

// TestHeadExpMatchesExpFlush runs every head kernel's exponentials on
// sentinel-padded misaligned inputs of 0 to 41 values (whole vectors and a
// rest): random scores ≤ 0 and the special values (the range's ends, just
// outside them, ±0, ±Inf, NaN), each equal to expFlush bit for bit.
func TestHeadExpMatchesExpFlush(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	special := []float32{0, float32(math.Copysign(0, -1)), expLo, expHi, -87.34, -87.33, -103.9, -104, -1e30, 88.5, 1e30, -inf, inf, nan, -1e-30, 1}
	for _, k := range headFamily.Impls() {
		for _, n := range []int{0, 1, 7, 8, 9, 16, 23, 41} {
			x := padded(r, n)
			for i := range x.in {
				x.in[i] = -float32(r.ExpFloat64()) * 20
				if r.IntN(3) == 0 {
					x.in[i] = special[r.IntN(len(special))]
				}
			}
			want := make([]float32, n)
			for i, y := range x.in {
				want[i] = expFlush(y)
			}
			in := append([]float32(nil), x.in...)
			k.exp(x.in)
			for i := range want {
				if math.Float32bits(x.in[i]) != math.Float32bits(want[i]) && !(math.IsNaN(float64(want[i])) && math.IsNaN(float64(x.in[i]))) {
					t.Fatalf("%s exp, %d values: exp(%g) = %g, expFlush %g", k.name, n, in[i], x.in[i], want[i])
				}
			}
			x.check(t)
		}
	}
	for _, c := range [][2]float32{{-inf, 0}, {-88, 0}, {expHi + 1, expFlush(expHi)}, {0, 1}} {
		if got := expFlush(c[0]); got != c[1] {
			t.Errorf("expFlush(%g) = %g, want %g", c[0], got, c[1])
		}
	}
	if got := expFlush(nan); !math.IsNaN(float64(got)) {
		t.Errorf("expFlush(NaN) = %g", got)
	}
}

package dense

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/supergcn/supergcn/internal/amx"
	"github.com/supergcn/supergcn/internal/dispatch"
)

// naiveBF16 is the float64 reference of a BF16 product: naiveGemm on the
// rounded operands, and the magnitude Σ|alpha·a·b| + |beta·c| of each
// entry (the scale of float32 accumulation error).
func naiveBF16(tA, tB bool, alpha float32, a, b *Matrix, beta float32, c *Matrix) (want, mag []float64) {
	ra, rb := New(a.Rows, a.Cols), New(b.Rows, b.Cols)
	amx.RoundSlice(ra.Data, a.Data)
	amx.RoundSlice(rb.Data, b.Data)
	want = naiveGemm(tA, tB, alpha, ra, rb, beta, c)
	abs := func(m *Matrix) *Matrix {
		o := New(m.Rows, m.Cols)
		for i, v := range m.Data {
			o.Data[i] = float32(math.Abs(float64(v)))
		}
		return o
	}
	cc := abs(c)
	mag = naiveGemm(tA, tB, float32(math.Abs(float64(alpha))), abs(ra), abs(rb), float32(math.Abs(float64(beta))), cc)
	return want, mag
}

// TestGemmBF16 checks Work.Gemm with BF16 against the float64 product of
// the rounded operands, for every transpose and scalar case, on shapes
// that take the tile unit's paths where the CPU has one (tall products,
// ragged row blocks, widths that are not whole column blocks, the long
// inner dimension of the weight gradient) and the emulated product
// otherwise, and the same again with SUPERGCN_KERNEL=generic (emulated).
func TestGemmBF16(t *testing.T) {
	for _, forced := range []string{"", dispatch.Generic} {
		t.Run("kernel="+forced, func(t *testing.T) {
			t.Setenv(dispatch.Env, forced)
			t.Logf("BF16 products: %s", BF16Kernel())
			testGemmBF16(t)
		})
	}
}

func testGemmBF16(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	shapes := [][3]int{ // m, n, k
		{1, 1, 1}, {3, 5, 7}, {31, 47, 100}, {32, 32, 32}, {33, 64, 31},
		{300, 47, 256}, {257, 128, 100}, {512, 256, 129}, // rows on the tile unit
		{100, 47, 1000}, {47, 100, 2*GemmBlock + 77}, // weight-gradient shapes (tA)
	}
	scalars := [][2]float32{{1, 0}, {1, 1}, {0.5, 1}, {-2, 0.25}}
	var w Work
	w.Precision = BF16
	for _, s := range shapes {
		m, n, k := s[0], s[1], s[2]
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				if k > 1000 && (!tA || tB) {
					continue // only the weight gradient has a long inner dimension
				}
				for _, ab := range scalars {
					a := randMatrix(r, m, k)
					if tA {
						a = randMatrix(r, k, m)
					}
					b := randMatrix(r, k, n)
					if tB {
						b = randMatrix(r, n, k)
					}
					c := randMatrix(r, m, n)
					want, mag := naiveBF16(tA, tB, ab[0], a, b, ab[1], c)
					w.Gemm(tA, tB, ab[0], a, b, ab[1], c)
					for i, v := range c.Data {
						if d := math.Abs(float64(v) - want[i]); d > 1e-5*mag[i]+1e-30 {
							t.Fatalf("m=%d n=%d k=%d tA=%v tB=%v alpha=%g beta=%g: c[%d] = %g, want %g (magnitude %g)",
								m, n, k, tA, tB, ab[0], ab[1], i, v, want[i], mag[i])
						}
					}
				}
			}
		}
	}
}

// TestGemmBF16Deterministic: the same product twice, and at another
// thread count, gives the same bits (blocks and groups depend on the
// shapes only).
func TestGemmBF16Deterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	x, g := randMatrix(r, 3*GemmBlock+5, 100), randMatrix(r, 3*GemmBlock+5, 47)
	var w Work
	w.Precision = BF16
	c1, c2 := New(100, 47), New(100, 47)
	w.Gemm(true, false, 1, x, g, 0, c1)
	w.Gemm(true, false, 1, x, g, 0, c2)
	for i := range c1.Data {
		if math.Float32bits(c1.Data[i]) != math.Float32bits(c2.Data[i]) {
			t.Fatalf("c[%d]: %g then %g", i, c1.Data[i], c2.Data[i])
		}
	}
}

func TestParsePrecision(t *testing.T) {
	for _, s := range []string{"", "fp32", "bf16"} {
		p, err := ParsePrecision(s)
		if err != nil || (s != "" && p.String() != s) {
			t.Fatalf("ParsePrecision(%q) = %v, %v", s, p, err)
		}
	}
	if _, err := ParsePrecision("fp16"); err == nil {
		t.Fatal("ParsePrecision(fp16): no error")
	}
}

// TestGemm2 checks the sum of two products: with FP32 it is the two Gemm
// calls bit for bit; with BF16 it agrees with the float64 sum of the
// rounded products (the tile unit's fused path where the CPU has one).
func TestGemm2(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, s := range [][4]int{{5, 3, 4, 7}, {300, 256, 100, 256}, {257, 47, 256, 256}, {64, 100, 33, 47}} {
		m, n, k1, k2 := s[0], s[1], s[2], s[3]
		for _, tB := range []bool{false, true} {
			for _, beta := range []float32{0, 1, 0.5} {
				a1, a2 := randMatrix(r, m, k1), randMatrix(r, m, k2)
				b1, b2 := randMatrix(r, k1, n), randMatrix(r, k2, n)
				if tB {
					b1, b2 = randMatrix(r, n, k1), randMatrix(r, n, k2)
				}
				c0 := randMatrix(r, m, n)
				// FP32: bit for bit the two calls.
				var w32 Work
				got, want := New(m, n), New(m, n)
				copy(got.Data, c0.Data)
				copy(want.Data, c0.Data)
				w32.Gemm2(tB, a1, b1, a2, b2, beta, got)
				w32.Gemm(false, tB, 1, a1, b1, beta, want)
				w32.Gemm(false, tB, 1, a2, b2, 1, want)
				for i := range want.Data {
					if math.Float32bits(got.Data[i]) != math.Float32bits(want.Data[i]) {
						t.Fatalf("fp32 %v tB=%v beta=%g: [%d] %g, want %g", s, tB, beta, i, got.Data[i], want.Data[i])
					}
				}
				// BF16 against float64 on the rounded operands.
				w16 := Work{Precision: BF16}
				got = New(m, n)
				copy(got.Data, c0.Data)
				w1, mag1 := naiveBF16(false, tB, 1, a1, b1, beta, c0)
				zero := New(m, n)
				w2, mag2 := naiveBF16(false, tB, 1, a2, b2, 0, zero)
				w16.Gemm2(tB, a1, b1, a2, b2, beta, got)
				for i := range got.Data {
					if d := math.Abs(float64(got.Data[i]) - w1[i] - w2[i]); d > 1e-5*(mag1[i]+mag2[i])+1e-30 {
						t.Fatalf("bf16 %v tB=%v beta=%g: [%d] %g, want %g", s, tB, beta, i, got.Data[i], w1[i]+w2[i])
					}
				}
			}
		}
	}
}

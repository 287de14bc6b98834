package dense

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/supergcn/supergcn/internal/par"
)

// TestGemmNarrowShapes: the narrow products of the layers (X·W, G·Wᵀ,
// Xᵀ·G with W up to narrowWidth wide), at heights that leave every edge
// tile (12, 4 and 1 rows, a masked last column tile) and an inner
// dimension split into kernInner steps and GemmBlock blocks, match the
// float64 reference, whatever runs them on this CPU (the micro-kernels
// where it has them).
func TestGemmNarrowShapes(t *testing.T) {
	if tiles == nil {
		t.Log("no micro-kernels on this CPU: the products run on the BLAS")
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, s := range [][3]int{ // rows, in, out
		{1, 1, 1}, {11, 3, 33}, {29, 100, 47}, {47, 128, 100}, {61, 256, 256}, {3, 47, 128},
		{1237, 100, 128}, {2*GemmBlock + 17, 128, 47}, {kernInner + 3, 47, 19},
	} {
		rows, in, out := s[0], s[1], s[2]
		x, w := randMatrix(r, rows, in), randMatrix(r, in, out)
		g := randMatrix(r, rows, out)
		for _, p := range []struct {
			name   string
			tA, tB bool
			a, b   *Matrix
			c      *Matrix
		}{
			{"X·W", false, false, x, w, randMatrix(r, rows, out)},
			{"G·Wᵀ", false, true, g, w, randMatrix(r, rows, in)},
			{"Xᵀ·G", true, false, x, g, randMatrix(r, in, out)},
		} {
			for _, ab := range [][2]float32{{1, 0}, {1, 1}, {0.5, -0.25}} {
				k := in
				switch {
				case p.tA:
					k = rows
				case p.tB:
					k = out
				}
				c := &Matrix{Rows: p.c.Rows, Cols: p.c.Cols, Data: append([]float32(nil), p.c.Data...)}
				if ab[1] == 0 {
					c.Data[len(c.Data)-1] = float32(math.NaN()) // beta == 0 ignores c
				}
				want := naiveGemm(p.tA, p.tB, ab[0], p.a, p.b, ab[1], c)
				var work Work
				work.Gemm(p.tA, p.tB, ab[0], p.a, p.b, ab[1], c)
				for i, v := range want {
					if d := math.Abs(float64(c.Data[i]) - v); !(d <= 1e-6*float64(k)+1e-5) {
						t.Fatalf("%s %d×%d→%d alpha %g beta %g: c[%d] = %g, want %g", p.name, rows, in, out, ab[0], ab[1], i, c.Data[i], v)
					}
				}
			}
		}
	}
}

// TestKernelsMatchBLAS: on the micro-kernels, a product is the BLAS's
// within rounding (1e-6 a term of the sum), and it does not depend on the thread count.
func TestKernelsMatchBLAS(t *testing.T) {
	if tiles == nil {
		t.Skip("no micro-kernels on this CPU")
	}
	r := rand.New(rand.NewPCG(5, 6))
	const rows = 3*GemmBlock + 5
	for _, s := range [][2]int{{100, 128}, {128, 47}, {256, 256}, {47, 128}} {
		in, out := s[0], s[1]
		x, w, g := randMatrix(r, rows, in), randMatrix(r, in, out), randMatrix(r, rows, out)
		for _, tc := range []struct {
			tA   bool
			a, b *Matrix
			c    *Matrix
		}{{false, x, w, New(rows, out)}, {true, x, g, New(in, out)}} {
			name := fmt.Sprintf("%d→%d tA %v", in, out, tc.tA)
			ref := New(tc.c.Rows, tc.c.Cols)
			sgemm(nil, tc.tA, false, 1, general(tc.a), general(tc.b), 0, general(ref))
			Gemm(tc.tA, false, 1, tc.a, tc.b, 0, tc.c)
			if tc.tA { // Xᵀ·G runs on the BLAS: the kernels' own version of it
				tiles.gemm(true, 1, general(tc.a), general(tc.b), 0, general(tc.c))
			}
			k := float64(in)
			if tc.tA {
				k = rows
			}
			for i, v := range ref.Data {
				if d := math.Abs(float64(tc.c.Data[i] - v)); d > 1e-6*k {
					t.Fatalf("%s: c[%d] = %g, BLAS %g", name, i, tc.c.Data[i], v)
				}
			}
			one := New(tc.c.Rows, tc.c.Cols)
			func() {
				defer par.SetThreads(par.Threads())
				par.SetThreads(1)
				if tc.tA {
					tiles.gemm(true, 1, general(tc.a), general(tc.b), 0, general(one))
				} else {
					Gemm(false, false, 1, tc.a, tc.b, 0, one)
				}
			}()
			if !slices.Equal(one.Data, tc.c.Data) {
				t.Fatalf("%s: one thread computes another product than %d", name, par.Threads())
			}
		}
	}
}

//go:build openblas && cgo

package openblas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/supergcn/supergcn/dense"
)

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

// TestInstalled: importing the package puts OpenBLAS behind dense.Gemm.
func TestInstalled(t *testing.T) {
	if got := dense.Backend(); !strings.HasPrefix(got, "openblas (single-threaded cblas_sgemm blocks on ") {
		t.Fatalf("dense.Backend() = %q", got)
	}
	if _, ok := blas32.Implementation().(Impl); !ok {
		t.Fatalf("blas32 implementation is %T, want Impl", blas32.Implementation())
	}
}

// TestSgemmMatchesGonum: every transpose combination, with leading
// dimensions past the width, k = 0 and beta ≠ 0, agrees with gonum within
// float32 rounding; dense.Gemm's parallel paths run on it too.
func TestSgemmMatchesGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, s := range [][3]int{{7, 5, 3}, {33, 17, 65}, {4, 3, 0}} {
		m, n, k := s[0], s[1], s[2]
		for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			for _, tB := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				ar, ac := m, k
				if tA == blas.Trans {
					ar, ac = k, m
				}
				br, bc := k, n
				if tB == blas.Trans {
					br, bc = n, k
				}
				lda, ldb, ldc := ac+2, bc+1, n+3
				a, b := randSlice(r, max(1, ar*lda)), randSlice(r, max(1, br*ldb))
				c0 := randSlice(r, m*ldc)
				got, want := append([]float32(nil), c0...), append([]float32(nil), c0...)
				Impl{}.Sgemm(tA, tB, m, n, k, 1.5, a, lda, b, ldb, 0.5, got, ldc)
				gonum.Implementation{}.Sgemm(tA, tB, m, n, k, 1.5, a, lda, b, ldb, 0.5, want, ldc)
				for i := range got {
					if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*(1+math.Abs(float64(want[i]))) {
						t.Fatalf("%d×%d×%d %v %v: c[%d] = %v, gonum %v", m, n, k, tA, tB, i, got[i], want[i])
					}
				}
			}
		}
	}
	x := &dense.Matrix{Rows: 2*dense.GemmBlock + 5, Cols: 9, Data: randSlice(r, (2*dense.GemmBlock+5)*9)}
	w := &dense.Matrix{Rows: 9, Cols: 4, Data: randSlice(r, 36)}
	out := dense.New(x.Rows, 4)
	dense.Gemm(false, false, 1, x, w, 0, out)
	for i := 0; i < x.Rows; i += 1000 {
		for j := 0; j < 4; j++ {
			var ref float64
			for l := 0; l < 9; l++ {
				ref += float64(x.Data[i*9+l]) * float64(w.Data[l*4+j])
			}
			if math.Abs(float64(out.Data[i*4+j])-ref) > 1e-4*(1+math.Abs(ref)) {
				t.Fatalf("Gemm row %d col %d = %v, want %v", i, j, out.Data[i*4+j], ref)
			}
		}
	}
}

func TestArgumentChecksPanic(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("short A slice did not panic")
		}
	}()
	c := make([]float32, 4)
	Impl{}.Sgemm(blas.NoTrans, blas.NoTrans, 2, 2, 2, 1, make([]float32, 3), 2, make([]float32, 4), 2, 0, c, 2)
}

// BenchmarkSgemm pairs gonum and OpenBLAS (the backends dense.Gemm can
// run on) on the products of a GNN layer:
// the forward X·W and the weight gradient Xᵀ·G.
//
//	go test -tags openblas -run '^$' -bench Sgemm -benchtime 3x ./dense/openblas/
func BenchmarkSgemm(b *testing.B) {
	shapes := []struct {
		name    string
		tA      blas.Transpose
		m, n, k int
	}{
		{"XW_100kx128x128", blas.NoTrans, 100_000, 128, 128},
		{"XtG_128x128x100k", blas.Trans, 128, 128, 100_000},
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, s := range shapes {
		a, lda := randSlice(r, s.m*s.k), s.k
		if s.tA == blas.Trans {
			lda = s.m
		}
		bm, c := randSlice(r, s.k*s.n), make([]float32, s.m*s.n)
		for _, im := range []struct {
			name string
			impl blas.Float32
		}{{"gonum", gonum.Implementation{}}, {"openblas", Impl{}}} {
			b.Run(fmt.Sprintf("%s/%s", s.name, im.name), func(b *testing.B) {
				for b.Loop() {
					im.impl.Sgemm(s.tA, blas.NoTrans, s.m, s.n, s.k, 1, a, lda, bm, s.n, 0, c, s.n)
				}
				b.ReportMetric(2*float64(s.m)*float64(s.n)*float64(s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

package dense

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// namedImpl is one BLAS backend under benchmark.
type namedImpl struct {
	name string
	impl blas.Float32
}

// BenchmarkSgemm runs gonum's Sgemm on the products of a GNN layer: the
// forward X·W and the weight gradient Xᵀ·G (dense/openblas pairs it with
// OpenBLAS: go test -tags openblas -run '^$' -bench Sgemm ./dense/openblas/).
func BenchmarkSgemm(b *testing.B) {
	shapes := []struct {
		name    string
		tA      blas.Transpose
		m, n, k int
	}{
		{"XW_100kx128x128", blas.NoTrans, 100_000, 128, 128},
		{"XtG_128x128x100k", blas.Trans, 128, 128, 100_000},
		{"XW_100kx128x40", blas.NoTrans, 100_000, 40, 128},
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, s := range shapes {
		a := randMatrix(r, s.m, s.k)
		lda := s.k
		if s.tA == blas.Trans {
			a, lda = randMatrix(r, s.k, s.m), s.m
		}
		bm := randMatrix(r, s.k, s.n)
		c := New(s.m, s.n)
		for _, bi := range benchImpls() {
			b.Run(fmt.Sprintf("%s/%s", s.name, bi.name), func(b *testing.B) {
				flops := 2 * float64(s.m) * float64(s.n) * float64(s.k)
				for b.Loop() {
					bi.impl.Sgemm(s.tA, blas.NoTrans, s.m, s.n, s.k, 1, a.Data, lda, bm.Data, s.n, 0, c.Data, s.n)
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

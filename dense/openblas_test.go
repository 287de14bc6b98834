//go:build openblas && cgo

package dense

import (
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/gonum"
)

// benchImpls are the Sgemm implementations the benchmarks compare.
func benchImpls() []namedImpl {
	return []namedImpl{{"gonum", gonum.Implementation{}}, {"openblas", openBLAS{}}}
}

func TestBackendName(t *testing.T) {
	if got := Backend(); !strings.HasPrefix(got, "openblas (single-threaded cblas_sgemm blocks on ") {
		t.Fatalf("Backend() = %q", got)
	}
	if _, ok := blas32.Implementation().(openBLAS); !ok {
		t.Fatalf("blas32 implementation is %T, want openBLAS", blas32.Implementation())
	}
}

func TestOpenBLASArgumentChecksPanic(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("short A slice did not panic")
		}
	}()
	c := make([]float32, 4)
	openBLAS{}.Sgemm(blas.NoTrans, blas.NoTrans, 2, 2, 2, 1, make([]float32, 3), 2, make([]float32, 4), 2, 0, c, 2)
}

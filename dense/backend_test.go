package dense

import (
	"testing"

	"gonum.org/v1/gonum/blas/gonum"
)

// benchImpls are the Sgemm implementations the benchmarks compare (the
// OpenBLAS comparison lives in dense/openblas).
func benchImpls() []namedImpl {
	return []namedImpl{{"gonum", gonum.Implementation{}}}
}

// TestBackendName: without a binding installed, Gemm runs on gonum.
func TestBackendName(t *testing.T) {
	if got := Backend(); got != "gonum (pure Go)" {
		t.Fatalf("Backend() = %q", got)
	}
}

//go:build !(openblas && cgo)

package dense

import (
	"testing"

	"gonum.org/v1/gonum/blas/gonum"
)

// benchImpls are the Sgemm implementations the benchmarks compare.
func benchImpls() []namedImpl {
	return []namedImpl{{"gonum", gonum.Implementation{}}}
}

func TestBackendName(t *testing.T) {
	if got := Backend(); got != "gonum (pure Go)" {
		t.Fatalf("Backend() = %q", got)
	}
}

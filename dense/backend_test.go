package dense

import "testing"

// TestBackendName: without a binding installed, Gemm runs on gonum (the
// OpenBLAS binding and the gonum/OpenBLAS Sgemm benchmark live in
// dense/openblas).
func TestBackendName(t *testing.T) {
	if got := Backend(); got != "gonum (pure Go)" {
		t.Fatalf("Backend() = %q", got)
	}
}

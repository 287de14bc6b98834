//go:build !noasm

package aggr

import (
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestSVEVectorLength: where the OS reports SVE, CNTW gives the vector
// length in float32 lanes, a multiple of 4 (128 bits) up to 64 (2048 bits).
// The kernels themselves are checked by the shared tests in kernels_test.go.
func TestSVEVectorLength(t *testing.T) {
	if !cpu.ARM64.HasSVE {
		t.Skip("CPU has no SVE")
	}
	n := sveLen32()
	if n < 4 || n > 64 || n%4 != 0 {
		t.Fatalf("SVE vector length %d float32 lanes", n)
	}
	t.Logf("SVE vector length %d bits", 32*n)
}

// TestArm64UnweightedBitExact: the NEON and SVE kernels add the edges in k
// order in float32, as the generic twin does, so unweighted rows match it
// bit for bit (the amd64 kernels split narrow rows over two accumulator
// sets and match within rounding only, as TestKernels checks everywhere).
func TestArm64UnweightedBitExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 9))
	for _, k := range kernelTable {
		for _, width := range testWidths() {
			for _, nnz := range []int{1, 3, 17, 40} {
				stride := width + rng.IntN(5)
				rows := 9
				x := randVec(rng, (rows-1)*stride+width)
				idx := make([]int32, nnz)
				for i := range idx {
					idx[i] = int32(rng.IntN(rows))
				}
				out := randVec(rng, width)
				gen := append([]float32(nil), out...)
				k.rows(out, x, stride, idx)
				accumRowsGeneric(gen, x, stride, idx)
				for j := range out {
					if math.Float32bits(out[j]) != math.Float32bits(gen[j]) {
						t.Fatalf("%s width %d nnz %d: out[%d] = %v, generic twin %v", k.name, width, nnz, j, out[j], gen[j])
					}
				}
			}
		}
	}
}

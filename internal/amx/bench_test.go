package amx

import (
	"math/rand/v2"
	"testing"
)

// The kernels against their generic twins, on one chunk of the weight
// gradient (512 rows of 256 values).
func benchInput() ([]float32, []uint16, []uint32) {
	r := rand.New(rand.NewPCG(1, 1))
	src := make([]float32, 512*256)
	for i := range src {
		src[i] = float32(r.NormFloat64())
	}
	return src, make([]uint16, 512*256), make([]uint32, 256*256)
}

func BenchmarkTransposeRows(b *testing.B) {
	src, dst, _ := benchInput()
	b.SetBytes(int64(4 * len(src)))
	for b.Loop() {
		TransposeRows(dst, 512, src, 256, 512, 256)
	}
}

func BenchmarkTransposeGeneric(b *testing.B) {
	src, dst, _ := benchInput()
	b.SetBytes(int64(4 * len(src)))
	for b.Loop() {
		transposeGeneric(dst, 512, src, 256, 0, 512, 0, 256)
	}
}

func BenchmarkRoundRows(b *testing.B) {
	src, dst, _ := benchInput()
	b.SetBytes(int64(4 * len(src)))
	for b.Loop() {
		RoundRows(dst, 256, src, 256, 512, 256)
	}
}

func BenchmarkRoundGeneric(b *testing.B) {
	src, dst, _ := benchInput()
	b.SetBytes(int64(4 * len(src)))
	for b.Loop() {
		for r := range 512 {
			roundRowGeneric(dst[r*256:(r+1)*256], src[r*256:(r+1)*256])
		}
	}
}

func BenchmarkPairRows(b *testing.B) {
	src, _, dst := benchInput()
	b.SetBytes(int64(4 * len(src)))
	for b.Loop() {
		PairRows(dst, 256, src, 256, 512, 256)
	}
}

func BenchmarkPairGeneric(b *testing.B) {
	src, _, dst := benchInput()
	b.SetBytes(int64(4 * len(src)))
	for b.Loop() {
		for p := range 256 {
			pairRowGeneric(dst[p*256:(p+1)*256], src[2*p*256:(2*p+1)*256], src[(2*p+1)*256:(2*p+2)*256])
		}
	}
}

//go:build !noasm

package attn

// platformHeads returns the arm64 assembly kernels (heads_arm64.s):
// NEON's weighted aggregation, served to SVE CPUs too (the family's alias);
// the dot products, softmax, score gradients, dropout masks, exponentials and the prefetch hint are the pure-Go twins (the Go
// assembler has no vector FADD for the dots' pairwise sums).
func platformHeads() []headKernels {
	return []headKernels{{name: "neon", accum: accumHeads8NEON, dots: dotRowsGeneric, prefetch: prefetchRowsGeneric, softmax8: softmax8Generic, grad8: gradEdges8Generic, keepEdges: keepEdgesGeneric, exp: expAll, native: true}}
}

// accumHeads8NEON is the Advanced SIMD version of accumHeads8: 64 columns,
// 8 heads of 8, one weight per edge and head. Reference loop:
//
//	for k := range idx {
//		r := x[int(idx[k])*stride:]
//		for j := range 64 {
//			out[j] += w[k*wstride+j/8] * r[j]
//		}
//	}
//
// The caller guarantees len(out) ≥ 64, stride ≥ 64, 0 ≤ idx[k] and
// int(idx[k])*stride+64 ≤ len(x), len(w) ≥ (len(idx)−1)·wstride + 8, and
// that out does not overlap x. The 64 sums stay in sixteen registers
// (loaded from out, stored once); each weight is broadcast (LD1R) and
// multiplied into its head's two registers (FMLA); the row 8 edges ahead
// is prefetched (PRFM).
//
//go:noescape
func accumHeads8NEON(out, x []float32, stride int, idx []int32, w []float32, wstride int)

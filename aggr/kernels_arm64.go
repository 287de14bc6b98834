//go:build !noasm

package aggr

// asm_arm64.s is written by gen_asm_arm64.go (needs binutils-aarch64-linux-gnu).
//go:generate sh -c "GOARCH= go run gen_asm_arm64.go"

// The arm64 micro-kernels live in asm_arm64.s. Every one follows the contract
// of the kernel type (dispatch.go); its pure-Go twin is accumRowsGeneric /
// accumRowsWGeneric / maxRowsGeneric (and scatterMaxGeneric is the routing
// kernel here: arm64 has no scatter store). The assembly trusts its caller:
// stride ≥ len(out), every row idx[k] lies inside x (x[int(idx[k])*stride :
// ...+len(out)] is in bounds), len(w) ≥ len(idx), len(arg) ≥ len(out), and
// out (and arg) do not overlap x. Nothing outside out[:len(out)] (and
// arg[:len(out)]) is written, and no element of a source row past its first
// len(out) columns is read.

// accumRowsNEON is accumRows with Advanced SIMD (128-bit) registers:
//
//	for k := range idx {
//		r := x[int(idx[k])*stride:]
//		for j := range out {
//			out[j] += r[j]
//		}
//	}
//
// Columns are done in blocks of 64, 16 and 4 floats (16, 4 and 1
// accumulator registers, loaded once and stored once), the last len(out)%4
// columns with scalar loads. Source rows are prefetched a few edges ahead.
//
//go:noescape
func accumRowsNEON(out, x []float32, stride int, idx []int32)

// accumRowsWNEON is accumRowsW with Advanced SIMD registers (FMLA with the
// weight broadcast by LD1R):
//
//	for k := range idx {
//		r := x[int(idx[k])*stride:]
//		for j := range out {
//			out[j] += w[k] * r[j]
//		}
//	}
//
//go:noescape
func accumRowsWNEON(out, x []float32, stride int, idx []int32, w []float32)

// accumRowsSVE is accumRows for any SVE vector length (VL): blocks of 16 full
// vectors (16 accumulators) while at least 16·VL columns are left, then one
// block of 8 if 8·VL are, then at most two blocks of 4 WHILELT-predicated
// vectors (or one predicated vector when ≤ VL are left), so a row of any
// width takes no scalar code. Call it only when the CPU has SVE
// (cpu.ARM64.HasSVE).
//
//	for k := range idx {
//		r := x[int(idx[k])*stride:]
//		for j := range out {
//			out[j] += r[j]
//		}
//	}
//
//go:noescape
func accumRowsSVE(out, x []float32, stride int, idx []int32)

// accumRowsWSVE is accumRowsW with SVE (predicated FMLA, the weight broadcast
// by LD1RW); same blocking as accumRowsSVE.
//
//	for k := range idx {
//		r := x[int(idx[k])*stride:]
//		for j := range out {
//			out[j] += w[k] * r[j]
//		}
//	}
//
//go:noescape
func accumRowsWSVE(out, x []float32, stride int, idx []int32, w []float32)

// sveLen32 returns the SVE vector length in float32 lanes (CNTW). SVE only.
func sveLen32() int

// maxRowsNEON is the maxRows micro-kernel (ApplyMax's maximum with its
// argument) with Advanced SIMD registers:
//
//	for _, c := range idx {
//		r := x[int(c)*stride:]
//		for j := range out {
//			if r[j] > out[j] {
//				out[j], arg[j] = r[j], base+c
//			}
//		}
//	}
//
// len(arg) ≥ len(out), and out and arg overlap neither x nor each other.
// Columns are done in blocks of 32, 16 and 4 (values and arguments held in
// registers across the edges: FCMGT, then BIT for the value and the
// argument), the last len(out)%4 columns with scalar loads. The SVE kernel
// set uses it too (every SVE CPU has Advanced SIMD).
//
//go:noescape
func maxRowsNEON(out []float32, arg []int32, x []float32, stride int, idx []int32, base int32)

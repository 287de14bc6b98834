//go:build !linux || !amd64 || noasm

package amx

import "errors"

// Enable reports whether the tile kernel can run: never in this build
// (AMX needs linux/amd64 without the noasm tag).
func Enable() error { return errors.New("amx: no tile kernel in this build (linux/amd64 only)") }

// Tiles is the tile kernel; this build has none, and Enable says so.
func Tiles(a []uint16, lda int, b []uint32, ldb int, c []float32, ldc int, rowBlocks, colBlocks, kSteps int, accumulate bool) {
	panic("amx: Tiles called without Enable")
}

func roundRow(d []uint16, s []float32)     { roundRowGeneric(d, s) }
func pairRow(d []uint32, r0, r1 []float32) { pairRowGeneric(d, r0, r1) }

func transposeBlocks(dst []uint16, dstStride int, src []float32, srcStride, rows, cols int) (int, int) {
	return 0, 0
}

// Package amx holds the kernels of dense's bfloat16 products: float32 rows
// rounded to bfloat16, pairs of rows interleaved into the layout AMX's
// second operand takes (VNNI: element k of a column sits beside element k+1),
// a row block transposed while rounded, and the tile kernel of Intel's
// Advanced Matrix Extensions (TDPBF16PS: 16×16 float32 tiles accumulate
// products of 16×32 bfloat16 tiles).
//
// Rounding is to nearest, ties to even, on the float32 bits; a NaN stays a
// NaN (quieted); overflow goes to ±Inf; subnormals are rounded like any
// other value (the tile unit then reads bfloat16 subnormals as zero). The
// generic twins in this file define every kernel's result; the AVX2
// conversions compute the same bits. The tile kernel is assembly only: its
// reference is dense's emulated product (the same rounded operands through
// float32 BLAS), compared within a tolerance, since the tile unit's
// accumulation order is its own.
//
// The tile kernel needs the CPU's AMX-TILE and AMX-BF16 and the kernel's
// permission for the tile data state (Linux's arch_prctl
// ARCH_REQ_XCOMP_PERM, asked once per process by Enable).
package amx

import "math"

// Bits is x rounded to bfloat16 (nearest, ties to even), as the bfloat16's
// 16 bits: the top half of a float32.
func Bits(x float32) uint16 {
	b := math.Float32bits(x)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep it one (quiet bit set)
		return uint16((b | 0x00400000) >> 16)
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// Round is x rounded to bfloat16, as a float32 (exactly representable).
func Round(x float32) float32 { return math.Float32frombits(uint32(Bits(x)) << 16) }

// RoundSlice sets dst[i] = Round(src[i]) for every i < len(src) (dst may
// be src).
func RoundSlice(dst, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = Round(v)
	}
}

// RoundRows rounds rows×cols values of src (row stride srcStride) into
// dst (row stride dstStride, in bfloat16s); columns of dst past cols are
// left as they are.
func RoundRows(dst []uint16, dstStride int, src []float32, srcStride, rows, cols int) {
	if rows <= 0 || cols <= 0 {
		return
	}
	_ = dst[(rows-1)*dstStride+cols-1]
	_ = src[(rows-1)*srcStride+cols-1]
	for r := range rows {
		roundRow(dst[r*dstStride:r*dstStride+cols], src[r*srcStride:r*srcStride+cols])
	}
}

// PairRows interleaves pairs of rows of src into dst: for pair i < pairs
// and column j < cols, dst[i·dstStride+j] holds Bits(src row 2i, column j)
// in its low half and Bits(src row 2i+1, column j) in its high half (the
// VNNI layout of a tile's second operand). A missing row 2i+1 (odd rows,
// last pair) reads as zero: rows is the number of rows of src to read.
func PairRows(dst []uint32, dstStride int, src []float32, srcStride, rows, cols int) {
	if rows <= 0 || cols <= 0 {
		return
	}
	_ = src[(rows-1)*srcStride+cols-1]
	pairs := (rows + 1) / 2
	_ = dst[(pairs-1)*dstStride+cols-1]
	for i := range pairs {
		d := dst[i*dstStride : i*dstStride+cols]
		r0 := src[2*i*srcStride : 2*i*srcStride+cols]
		if 2*i+1 < rows {
			pairRow(d, r0, src[(2*i+1)*srcStride:(2*i+1)*srcStride+cols])
			continue
		}
		for j, v := range r0 {
			d[j] = uint32(Bits(v))
		}
	}
}

// TransposeRows rounds and transposes a rows×cols block of src (row stride
// srcStride) into dst: dst[j·dstStride+i] = Bits(src[i·srcStride+j]) for
// i < rows, j < cols. Columns of dst past rows are left as they are.
func TransposeRows(dst []uint16, dstStride int, src []float32, srcStride, rows, cols int) {
	if rows <= 0 || cols <= 0 {
		return
	}
	_ = src[(rows-1)*srcStride+cols-1]
	_ = dst[(cols-1)*dstStride+rows-1]
	r8, c8 := transposeBlocks(dst, dstStride, src, srcStride, rows, cols)
	// The edges the 8×8 blocks left: rows r8.., then columns c8.. of the
	// first r8 rows.
	transposeGeneric(dst, dstStride, src, srcStride, r8, rows, 0, cols)
	transposeGeneric(dst, dstStride, src, srcStride, 0, r8, c8, cols)
}

// transposeGeneric is TransposeRows for rows [i0,i1) and columns [j0,j1),
// in 8×8 blocks that keep both sides' lines in the cache.
func transposeGeneric(dst []uint16, dstStride int, src []float32, srcStride, i0, i1, j0, j1 int) {
	const b = 8
	for ib := i0; ib < i1; ib += b {
		ie := min(ib+b, i1)
		for jb := j0; jb < j1; jb += b {
			je := min(jb+b, j1)
			for i := ib; i < ie; i++ {
				s := src[i*srcStride+jb : i*srcStride+je]
				for j, v := range s {
					dst[(jb+j)*dstStride+i] = Bits(v)
				}
			}
		}
	}
}

func roundRowGeneric(d []uint16, s []float32) {
	d = d[:len(s)]
	for j, v := range s {
		d[j] = Bits(v)
	}
}

func pairRowGeneric(d []uint32, r0, r1 []float32) {
	d, r1 = d[:len(r0)], r1[:len(r0)]
	for j, v := range r0 {
		d[j] = uint32(Bits(v)) | uint32(Bits(r1[j]))<<16
	}
}

// Tile shapes of the kernel: every tile register is 16 rows of 64 bytes
// (C: 16×16 float32; A: 16×32 bfloat16; B: 16 pairs × 16 columns).
const (
	TileRows = 16
	// BlockRows is the rows of C (and A) one step of the kernel covers:
	// two row tiles.
	BlockRows = 32
	// BlockCols is the columns of C (and of B's pairs) one step covers:
	// two column tiles.
	BlockCols = 32
	// KStep is the inner dimension one tile product covers.
	KStep = 32
)

// config is the 64-byte tile configuration (palette 1): eight tiles of 16
// rows × 64 bytes.
func config() [64]byte {
	var c [64]byte
	c[0] = 1 // palette
	for t := range 8 {
		c[16+2*t] = 64 // bytes per row
		c[48+t] = 16   // rows
	}
	return c
}

//go:build linux && amd64 && !noasm

package amx

import (
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sys/cpu"
	"golang.org/x/sys/unix"
)

// Linux's arch_prctl codes for the dynamically enabled tile state.
const (
	archReqXcompPerm  = 0x1023
	xfeatureXtiledata = 18
)

var enable struct {
	once sync.Once
	err  error
}

// Enable reports whether the tile kernel can run in this process: the CPU
// has AMX-TILE and AMX-BF16, and Linux granted the tile data state (asked
// on the first call; the answer holds for the process's life).
func Enable() error {
	enable.once.Do(func() {
		if !cpu.X86.HasAMXTile || !cpu.X86.HasAMXBF16 {
			enable.err = errors.New("amx: the CPU has no AMX-BF16")
			return
		}
		if _, _, e := unix.RawSyscall(unix.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureXtiledata, 0); e != 0 {
			enable.err = fmt.Errorf("amx: Linux refused the tile state (arch_prctl ARCH_REQ_XCOMP_PERM): %v", e)
		}
	})
	return enable.err
}

// Tiles runs the tile kernel over rowBlocks blocks of BlockRows rows of C
// and colBlocks blocks of BlockCols columns: C[r][c] (+)= Σ_k A[r][k]·B[k][c]
// over kSteps·KStep values of k, with A's rows (bfloat16) lda bytes apart,
// B in pairs (row p holds k = 2p and 2p+1 of each column, as uint32s) ldb
// bytes apart, and C (float32) ldc bytes apart. With accumulate C's old
// values are the start, otherwise zero. Every block must lie inside the
// slices; Enable must have succeeded. The caller checks bounds: this is the
// bare kernel.
func Tiles(a []uint16, lda int, b []uint32, ldb int, c []float32, ldc int, rowBlocks, colBlocks, kSteps int, accumulate bool) {
	if rowBlocks <= 0 || colBlocks <= 0 || kSteps <= 0 {
		return
	}
	// Bounds of the furthest bytes touched, so that a bad call panics in
	// Go rather than faulting in the kernel.
	_ = a[((rowBlocks*BlockRows-1)*lda+kSteps*KStep*2)/2-1]
	_ = b[((kSteps*KStep/2-1)*ldb+colBlocks*BlockCols*4)/4-1]
	_ = c[((rowBlocks*BlockRows-1)*ldc+colBlocks*BlockCols*4)/4-1]
	cfg := config()
	tilesAMX(&cfg, &a[0], lda, &b[0], ldb, &c[0], ldc, rowBlocks, colBlocks, kSteps, accumulate)
}

//go:noescape
func tilesAMX(cfg *[64]byte, a *uint16, lda int, b *uint32, ldb int, c *float32, ldc int, rowBlocks, colBlocks, kSteps int, accumulate bool)

//go:noescape
func roundAVX2(dst *uint16, src *float32, n int)

//go:noescape
func transposeAVX2(dst *uint16, ds int, src *float32, ss int, rows8, cols8 int)

// transposeBlocks runs TransposeRows's whole 8×8 blocks with AVX2 and
// returns how many rows and columns they covered (0, 0 without AVX2).
func transposeBlocks(dst []uint16, dstStride int, src []float32, srcStride, rows, cols int) (int, int) {
	r8, c8 := rows&^7, cols&^7
	if r8 == 0 || c8 == 0 || !cpu.X86.HasAVX2 {
		return 0, 0
	}
	transposeAVX2(&dst[0], dstStride, &src[0], srcStride, r8/8, c8/8)
	return r8, c8
}

//go:noescape
func pairAVX2(dst *uint32, r0, r1 *float32, n int)

func roundRow(d []uint16, s []float32) {
	n := len(s)
	d = d[:n]
	m := n &^ 15
	if m > 0 && cpu.X86.HasAVX2 {
		roundAVX2(&d[0], &s[0], m)
	} else {
		m = 0
	}
	roundRowGeneric(d[m:], s[m:])
}

func pairRow(d []uint32, r0, r1 []float32) {
	n := len(r0)
	d, r1 = d[:n], r1[:n]
	m := n &^ 7
	if m > 0 && cpu.X86.HasAVX2 {
		pairAVX2(&d[0], &r0[0], &r1[0], m)
	} else {
		m = 0
	}
	pairRowGeneric(d[m:], r0[m:], r1[m:])
}

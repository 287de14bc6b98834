//go:build unix

package aggr

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"unsafe"
)

// TestKernelsGuardPage: for every kernel available here, x ends right
// before a PROT_NONE page and the last edge reads its last row, so a load
// past the row's len(out) columns (a vector tail read too wide) faults and
// kills the test; every result (sum and max) must still match the
// reference.
func TestKernelsGuardPage(t *testing.T) {
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 4*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	defer syscall.Munmap(mem)
	if err := syscall.Mprotect(mem[3*page:], syscall.PROT_NONE); err != nil {
		t.Fatalf("mprotect: %v", err)
	}
	all := unsafe.Slice((*float32)(unsafe.Pointer(&mem[0])), 3*page/4)
	rng := rand.New(rand.NewPCG(4, 4))
	for _, k := range kernelTable {
		for _, width := range []int{1, 2, 3, 5, 7, 13, 17, 31, 63, 67, 131, 602} {
			stride := width + width%3
			rows := (len(all) - width) / stride // rows-1 full strides + one width fit
			x := all[len(all)-((rows-1)*stride+width):]
			copy(x, randVec(rng, len(x)))
			idx := []int32{int32(rng.IntN(rows)), 0, int32(rng.IntN(rows)), int32(rows - 1)}
			checkRow(t, k, width, x, stride, idx, randVec(rng, len(idx)), rng, "guard page")
			out, arg := randVec(rng, width), make([]int32, width)
			refOut, refArg := append([]float32(nil), out...), append([]int32(nil), arg...)
			k.maxRows(out, arg, x, stride, idx, 1)
			refMaxRows(refOut, refArg, x, stride, idx, 1)
			for j := range out {
				if !sameBits(out[j], refOut[j]) || arg[j] != refArg[j] {
					t.Fatalf("%s guard page width %d: maxRows column %d: %v (arg %d), reference %v (arg %d)", k.name, width, j, out[j], arg[j], refOut[j], refArg[j])
				}
			}
		}
	}
}

// guarded returns n bytes that end right before a PROT_NONE page (unmapped
// at the end of the test).
func guarded(t *testing.T, n int) []byte {
	page := syscall.Getpagesize()
	size := (n + page - 1) / page * page
	mem, err := syscall.Mmap(-1, 0, size+page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	if err := syscall.Mprotect(mem[size:], syscall.PROT_NONE); err != nil {
		t.Fatalf("mprotect: %v", err)
	}
	return mem[size-n : size]
}

// TestScatterGuardPage: the gradient rows and the arguments of the last
// row end right before a PROT_NONE page, so a routing kernel that reads
// past a block's last column faults; the result must match the reference.
func TestScatterGuardPage(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	for _, k := range kernelTable {
		for _, cols := range []int{1, 3, 15, 16, 17, 33, 70} {
			rows, w, n := 9, cols+cols%4, int32(5)
			size := (rows-1)*w + cols
			g := unsafe.Slice((*float32)(unsafe.Pointer(&guarded(t, 4*size)[0])), size)
			arg := unsafe.Slice((*int32)(unsafe.Pointer(&guarded(t, 4*size)[0])), size)
			copy(g, randVec(rng, size))
			for i := range arg {
				arg[i] = int32(rng.IntN(int(n)))
			}
			dst := randVec(rng, int(n)*w)
			ref := append([]float32(nil), dst...)
			refScatter(ref, g, arg, rows, cols, w, 0, n)
			k.scatter(dst, g, arg, rows, cols, w, 0, n)
			for i := range dst {
				if !sameBits(dst[i], ref[i]) {
					t.Fatalf("%s cols %d: dst[%d] = %v, reference %v", k.name, cols, i, dst[i], ref[i])
				}
			}
		}
	}
}

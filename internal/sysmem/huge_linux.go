//go:build linux

package sysmem

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of an x86-64 and arm64 (4 KiB base pages)
// transparent huge page.
const hugePage = 2 << 20

// AdviseHugeFresh asks the kernel to back the whole 2 MiB pages inside b
// with transparent huge pages (madvise MADV_HUGEPAGE), which is what Linux
// does on its own only when THP is "always" (most distributions default to
// "madvise"). Random row gathers over multi-gigabyte activations then miss
// the TLB far less often. b must be freshly allocated and still all zero:
// its pages may already be backed by 4 KiB pages (reused heap memory that
// the runtime cleared), so they are first released (MADV_DONTNEED, after
// which they read as zero) and fault in again as huge pages on first touch.
// Buffers under 4 MiB, kernels without THP and failures are left as they
// are: this is only advice.
func AdviseHugeFresh(b []float32) {
	n := uintptr(len(b)) * 4
	if n < 2*hugePage {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (p + hugePage - 1) &^ (hugePage - 1)
	hi := (p + n) &^ (hugePage - 1)
	if hi <= lo {
		return
	}
	region := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), lo-p)), hi-lo)
	if unix.Madvise(region, unix.MADV_DONTNEED) != nil {
		return
	}
	_ = unix.Madvise(region, unix.MADV_HUGEPAGE)
}

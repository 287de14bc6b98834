package measure

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// HugeFloats returns n zeroed float32s in an anonymous mapping advised for
// transparent huge pages (MADV_HUGEPAGE), so that random row gathers miss
// the TLB less; the mapping is never unmapped (benchmark use only).
func HugeFloats(n int) ([]float32, error) {
	if n == 0 {
		return nil, nil
	}
	b, err := unix.Mmap(-1, 0, n*4, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("mmap: %w", err)
	}
	if err := unix.Madvise(b, unix.MADV_HUGEPAGE); err != nil {
		return nil, fmt.Errorf("madvise: %w", err)
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n), nil
}

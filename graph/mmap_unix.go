//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package graph

import (
	"math"
	"syscall"
)

// The mapping uses package syscall rather than golang.org/x/sys/unix: the
// x/sys version in go.mod needs a newer go directive than the module
// declares, and syscall.Mmap covers every system built here.

// binOpenImage maps the whole file privately (copy-on-write: writes through
// the mapping never reach the file). Empty files, files too large for the
// address space and file systems that refuse mmap fall back to reading the
// file into memory.
func binOpenImage(path string) (*binImage, error) {
	if img, err := mapFile(path); err == nil {
		return img, nil
	}
	return binReadImage(path)
}

// mapFile maps the whole regular, non-empty file privately, or fails.
func mapFile(path string) (*binImage, error) {
	f, st, err := openStat(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := st.Size()
	if size == 0 || size > math.MaxInt || !st.Mode().IsRegular() {
		return nil, errNoMap
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, err
	}
	return &binImage{data: data, release: func() error { return syscall.Munmap(data) }}, nil
}

//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package graph

// binOpenImage reads the whole file into memory: the portable fallback for
// systems where package syscall has no Mmap.
func binOpenImage(path string) (*binImage, error) { return binReadImage(path) }

// mapFile fails: there is no mapping on these systems.
func mapFile(string) (*binImage, error) { return nil, errNoMap }

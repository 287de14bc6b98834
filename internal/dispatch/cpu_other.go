//go:build !amd64 && !arm64

package dispatch

// cpuSupports: no SIMD kernels on this architecture.
func cpuSupports(name string) bool { return false }

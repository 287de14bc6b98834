//go:build !amd64 && !arm64 && !noasm

package aggr

// platformKernels: no assembly kernels on this architecture; the generic
// kernel is always appended by the caller.
func platformKernels() []kernel { return nil }

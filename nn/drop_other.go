//go:build !amd64 || noasm

package nn

// dropWords: no dropout kernels on this architecture (or with noasm).
func dropWords() *wordKernels { return nil }

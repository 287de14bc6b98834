//go:build noasm || !(amd64 || arm64)

package quant

func archKernels() []kernels { return nil }

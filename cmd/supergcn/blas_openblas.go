//go:build openblas && cgo

package main

// The openblas build tag puts OpenBLAS behind dense.Gemm: the binding is
// linked here, at the edge, so the libraries stay pure Go.
import _ "github.com/supergcn/supergcn/dense/openblas"

//go:build mpich && !mpienv

package metis

// #cgo pkg-config: mpich
// #cgo CFLAGS: -Wno-stringop-overflow
import "C"

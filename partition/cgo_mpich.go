//go:build mpich && !mpienv

package partition

// #cgo pkg-config: mpich
// #cgo CFLAGS: -Wno-stringop-overflow
import "C"

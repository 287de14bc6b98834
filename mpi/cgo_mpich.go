//go:build mpich && !mpienv

package mpi

// Build tag mpich: MPICH (and its derivatives: Intel MPI, Cray MPICH when they
// ship mpich.pc), found through pkg-config.

// GCC 12 warns wrongly about MPICH's MPI_STATUSES_IGNORE (a null array).

// #cgo pkg-config: mpich
// #cgo CFLAGS: -Wno-stringop-overflow
import "C"

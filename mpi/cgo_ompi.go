//go:build !mpich && !mpienv

package mpi

// Default: Open MPI, found through pkg-config (libopenmpi-dev ships ompi.pc).

// #cgo pkg-config: ompi
import "C"

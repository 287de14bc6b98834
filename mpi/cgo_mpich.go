//go:build mpich && !mpienv

package mpi

// Build tag mpich: MPICH (and its derivatives: Intel MPI, Cray MPICH when they
// ship mpich.pc), found through pkg-config.

// #cgo pkg-config: mpich
import "C"

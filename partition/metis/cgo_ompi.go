//go:build !mpich && !mpienv

package metis

// The MPI the ParMETIS binding compiles against follows package mpi's build
// tags (default Open MPI; mpich; mpienv). PT-Scotch must be built against the
// same MPI: Debian's libptscotch-dev is built against Open MPI.

// #cgo pkg-config: ompi
import "C"

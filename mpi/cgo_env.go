//go:build mpienv

package mpi

// Build tag mpienv: no pkg-config; the flags come from the environment, for
// systems whose MPI has no .pc file (vendor MPIs, compiler wrappers), e.g.
//
//	CGO_CFLAGS="$(mpicc -showme:compile)" CGO_LDFLAGS="$(mpicc -showme:link)" go build -tags mpienv
//
// (MPICH's wrapper spells it mpicc -compile_info / -link_info.)

import "C"

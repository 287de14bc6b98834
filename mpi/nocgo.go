//go:build !cgo

package mpi

// Package mpi is a cgo binding and has nothing to offer without cgo; this
// file makes a CGO_ENABLED=0 build of it, and of what imports it
// (comm/mpicomm, cmd/supergcn), fail with one clear message instead of a
// list of undefined names. Every other package builds as pure Go.
const _ = package_mpi_is_a_cgo_binding__build_with_CGO_ENABLED_1

// Package metis holds supergcn's cgo bindings to the graph partitioners:
// METIS (libmetis, Metis), ParMETIS through PT-Scotch's compatibility layer
// (ParMetis, ParMetisDistributed; MPI built as package mpi is), and OnRank0,
// which runs METIS on rank 0 and broadcasts the owners. Package partition
// (shards, splitting, random partitioning, partition directories) is pure
// Go; this package is where the C libraries are linked, so exchange and
// train never link libmetis, PT-Scotch or libmpi. Without cgo the entry
// points return ErrNoCgo.
package metis

// Package mpicomm implements comm.Comm with MPI (package mpi): the
// collectives of the exchange and the training loop on a real MPI
// communicator. The rules of package mpi apply: initialise MPI with
// mpi.InitThread first, and complete every Request before mpi.Finalize.
package mpicomm

import (
	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/mpi"
)

// New returns c as a comm.Comm. Abort calls MPI_Abort, Wtime MPI_Wtime; the
// large-message handling of package mpi applies to every call.
func New(c mpi.Comm) comm.Comm { return mpiComm{c} }

type mpiComm struct{ c mpi.Comm }

func (m mpiComm) Rank() int      { return m.c.Rank() }
func (m mpiComm) Size() int      { return m.c.Size() }
func (m mpiComm) Barrier() error { return m.c.Barrier() }
func (m mpiComm) Abort(code int) { m.c.Abort(code) }
func (m mpiComm) Wtime() float64 { return mpi.Wtime() }

// MPI returns the underlying communicator (reach it with an interface
// assertion: cc.(interface{ MPI() mpi.Comm })).
func (m mpiComm) MPI() mpi.Comm { return m.c }

func (m mpiComm) BcastBytes(buf []byte, root int) error { return mpi.Bcast(m.c, buf, root) }

func (m mpiComm) AllreduceSumF32(buf []float32) error { return mpi.Allreduce(m.c, buf, mpi.Sum) }
func (m mpiComm) AllreduceSumF64(buf []float64) error { return mpi.Allreduce(m.c, buf, mpi.Sum) }
func (m mpiComm) AllreduceSumI64(buf []int64) error   { return mpi.Allreduce(m.c, buf, mpi.Sum) }
func (m mpiComm) AllreduceMaxF64(buf []float64) error { return mpi.Allreduce(m.c, buf, mpi.Max) }

func (m mpiComm) AlltoallvI64(send []int64, sendCounts, sendDispls []int, recv []int64, recvCounts, recvDispls []int) error {
	return mpi.Alltoallv(m.c, send, sendCounts, sendDispls, recv, recvCounts, recvDispls)
}

func (m mpiComm) AlltoallvBytes(send []byte, sendCounts, sendDispls []int, recv []byte, recvCounts, recvDispls []int) error {
	return mpi.Alltoallv(m.c, send, sendCounts, sendDispls, recv, recvCounts, recvDispls)
}

func (m mpiComm) IalltoallvF32(send []float32, sendCounts, sendDispls []int, recv []float32, recvCounts, recvDispls []int) (comm.Request, error) {
	return request(mpi.Ialltoallv(m.c, send, sendCounts, sendDispls, recv, recvCounts, recvDispls))
}

func (m mpiComm) IalltoallvBytes(send []byte, sendCounts, sendDispls []int, recv []byte, recvCounts, recvDispls []int) (comm.Request, error) {
	return request(mpi.Ialltoallv(m.c, send, sendCounts, sendDispls, recv, recvCounts, recvDispls))
}

// request converts, keeping a nil *mpi.Request out of the interface.
func request(r *mpi.Request, err error) (comm.Request, error) {
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Split is MPI_Comm_split; a negative color gives a nil Comm.
func (m mpiComm) Split(color, key int) (comm.Comm, error) {
	c, err := m.c.Split(color, key)
	if err != nil || c.IsNull() {
		return nil, err
	}
	return mpiComm{c}, nil
}

// SplitShared is MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) keyed by rank.
func (m mpiComm) SplitShared() (comm.Comm, error) {
	c, err := m.c.SplitTypeShared(m.c.Rank())
	if err != nil {
		return nil, err
	}
	return mpiComm{c}, nil
}

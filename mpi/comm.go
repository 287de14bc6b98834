package mpi

// #include "binding.h"
import "C"

import (
	"fmt"
	"math"
)

// Comm is a communicator. It is a small value: copies refer to the same MPI
// communicator. The zero Comm is the null communicator (MPI_COMM_NULL): Size
// 0, Rank -1, and every operation returns an error.
type Comm struct {
	f    C.MPI_Fint // Fortran handle; MPI_Comm_f2c recovers the C handle
	rank int
	size int
}

// World returns MPI_COMM_WORLD, or the null Comm when MPI is not active.
func World() Comm {
	var c Comm
	var rank, size C.int
	err := locked("MPI_Comm_rank", func() C.int {
		c.f = C.sg_world()
		return C.sg_comm_adopt(c.f, &rank, &size)
	})
	if err != nil {
		return Comm{}
	}
	c.rank, c.size = int(rank), int(size)
	return c
}

// FromFortran returns the communicator with Fortran handle f (as made by
// MPI_Comm_c2f in other cgo code), with MPI_ERRORS_RETURN set on it.
func FromFortran(f int) (Comm, error) {
	if f < math.MinInt32 || f > math.MaxInt32 {
		return Comm{}, fmt.Errorf("mpi: FromFortran: handle %d out of range", f)
	}
	c := Comm{f: C.MPI_Fint(f)}
	var rank, size C.int
	if err := locked("MPI_Comm_rank", func() C.int { return C.sg_comm_adopt(c.f, &rank, &size) }); err != nil {
		return Comm{}, err
	}
	c.rank, c.size = int(rank), int(size)
	return c, nil
}

// IsNull reports whether c is the null communicator.
func (c Comm) IsNull() bool { return c.size == 0 }

// Rank is the calling process's rank in c (-1 for the null Comm).
func (c Comm) Rank() int {
	if c.size == 0 {
		return -1
	}
	return c.rank
}

// Size is the number of ranks of c (0 for the null Comm).
func (c Comm) Size() int { return c.size }

// Fortran is the communicator's Fortran handle (MPI_Comm_c2f). C code
// recovers the MPI_Comm with MPI_Comm_f2c; it must call MPI inside Serialize.
func (c Comm) Fortran() int { return int(c.f) }

// call runs one MPI call on c with the package mutex held.
func (c Comm) call(name string, f func() C.int) error {
	if c.size == 0 {
		return errNull(name)
	}
	return locked(name, f)
}

func errNull(call string) error { return fmt.Errorf("mpi: %s: null communicator", call) }

// Split is MPI_Comm_split: ranks with the same color form a communicator,
// ordered by key (ties by rank in c). A negative color (MPI_UNDEFINED)
// leaves the rank out: it gets the null Comm and a nil error. Collective.
func (c Comm) Split(color, key int) (Comm, error) {
	if color > math.MaxInt32 || key < math.MinInt32 || key > math.MaxInt32 {
		return Comm{}, fmt.Errorf("mpi: Split: color %d or key %d out of the C int range", color, key)
	}
	if color < 0 {
		color = -1
	}
	return c.newComm("MPI_Comm_split", func(out *C.MPI_Fint, rank, size *C.int) C.int {
		return C.sg_comm_split(c.f, C.int(color), C.int(key), out, rank, size)
	})
}

// SplitTypeShared is MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): the ranks
// that share memory (one node), ordered by key. Collective.
func (c Comm) SplitTypeShared(key int) (Comm, error) {
	if key < math.MinInt32 || key > math.MaxInt32 {
		return Comm{}, fmt.Errorf("mpi: SplitTypeShared: key %d out of the C int range", key)
	}
	return c.newComm("MPI_Comm_split_type", func(out *C.MPI_Fint, rank, size *C.int) C.int {
		return C.sg_comm_split_shared(c.f, C.int(key), out, rank, size)
	})
}

func (c Comm) newComm(name string, f func(out *C.MPI_Fint, rank, size *C.int) C.int) (Comm, error) {
	var out C.MPI_Fint
	var rank, size C.int
	if err := c.call(name, func() C.int { return f(&out, &rank, &size) }); err != nil {
		return Comm{}, err
	}
	return Comm{f: out, rank: int(rank), size: int(size)}, nil
}

// Free is MPI_Comm_free. Collective; c and its copies must not be used
// after. Freeing World is an error.
func (c Comm) Free() error {
	return c.call("MPI_Comm_free", func() C.int { return C.sg_comm_free(c.f) })
}

// Barrier is MPI_Barrier.
func (c Comm) Barrier() error {
	return c.call("MPI_Barrier", func() C.int { return C.sg_barrier(c.f) })
}

// Abort is MPI_Abort: it ends every rank of the job (of c's job; for the
// null Comm, of MPI_COMM_WORLD) with the exit code, and does not return. It
// does not wait for the package mutex. Without an active MPI it exits the
// process.
func (c Comm) Abort(code int) { abort(c.f, c.size == 0, code) }

package mpi

// #include "binding.h"
import "C"

import (
	"fmt"
	"unsafe"
)

// Bcast is MPI_Bcast of buf from root; len(buf) must be the same on every
// rank.
func Bcast[T Elem](c Comm, buf []T, root int) error { return bcast(c, buf, root, defaultLimits()) }

func bcast[T Elem](c Comm, buf []T, root int, l limits) error {
	croot, err := cRank("MPI_Bcast", root)
	if err != nil {
		return err
	}
	return inPieces(buf, l, func(piece []T) error {
		return c.call("MPI_Bcast", func() C.int {
			return C.sg_bcast(ptr(piece), C.int(len(piece)), dtype[T](), croot, c.f)
		})
	})
}

// Allreduce is MPI_Allreduce in place (MPI_IN_PLACE): buf becomes the
// element-wise reduction of every rank's buf. len(buf) must be the same on
// every rank.
func Allreduce[T Elem](c Comm, buf []T, op Op) error { return allreduce(c, buf, op, defaultLimits()) }

func allreduce[T Elem](c Comm, buf []T, op Op, l limits) error {
	if op != Sum && op != Max && op != Min {
		return fmt.Errorf("mpi: MPI_Allreduce: unknown %v", op)
	}
	return inPieces(buf, l, func(piece []T) error {
		return c.call("MPI_Allreduce", func() C.int {
			return C.sg_allreduce(ptr(piece), C.int(len(piece)), dtype[T](), C.int(op), c.f)
		})
	})
}

// inPieces calls f on buf whole, or, when buf is longer than l.maxCount, on
// consecutive pieces of at most l.chunkBytes.
func inPieces[T Elem](buf []T, l limits, f func(piece []T) error) error {
	if len(buf) <= l.maxCount {
		return f(buf)
	}
	k := l.chunk(elemSize[T]())
	for off := 0; off < len(buf); off += k {
		if err := f(buf[off:min(off+k, len(buf))]); err != nil {
			return err
		}
	}
	return nil
}

// Allgather is MPI_Allgather: recv has Size()*len(send) elements, rank r's
// send at r*len(send). len(send) must be the same on every rank.
func Allgather[T Elem](c Comm, send, recv []T) error {
	return allgather(c, send, recv, defaultLimits())
}

func allgather[T Elem](c Comm, send, recv []T, l limits) error {
	n, p := len(send), c.size
	if len(recv) != p*n {
		return fmt.Errorf("mpi: MPI_Allgather: recv has %d elements, want %d ranks × %d", len(recv), p, n)
	}
	if n > l.maxCount {
		counts, displs := make([]int, p), make([]int, p)
		for r := range p {
			counts[r], displs[r] = n, r*n
		}
		return allgathervBcast(c, send, recv, counts, displs, l)
	}
	return c.call("MPI_Allgather", func() C.int {
		return C.sg_allgather(ptr(send), C.int(n), ptr(recv), dtype[T](), c.f)
	})
}

// Allgatherv is MPI_Allgatherv: rank r's send lands in
// recv[displs[r]:displs[r]+counts[r]]; counts[r] is len(send) on rank r and
// counts is the same on every rank (displs may differ).
func Allgatherv[T Elem](c Comm, send []T, recv []T, counts, displs []int) error {
	return allgatherv(c, send, recv, counts, displs, defaultLimits())
}

func allgatherv[T Elem](c Comm, send []T, recv []T, counts, displs []int, l limits) error {
	const call = "MPI_Allgatherv"
	if c.size == 0 {
		return errNull(call)
	}
	large, err := checkLayout("mpi: "+call+": recv", len(recv), counts, displs, c.size, l)
	if err == nil && counts[c.rank] != len(send) {
		err = fmt.Errorf("mpi: %s: counts[%d] is %d, len(send) %d", call, c.rank, counts[c.rank], len(send))
	}
	large, err = agree(c, call, large || len(send) > l.maxCount, err)
	if err != nil {
		return err
	}
	if large {
		return allgathervBcast(c, send, recv, counts, displs, l)
	}
	p := c.size
	ints := make([]C.int, 2*p)
	cInts(ints[:p], counts)
	cInts(ints[p:], displs)
	return c.call(call, func() C.int {
		return C.sg_allgatherv(ptr(send), C.int(len(send)), ptr(recv), &ints[0], &ints[p], dtype[T](), c.f)
	})
}

// allgathervBcast is Allgatherv for counts or displacements beyond
// l.maxCount: each rank's block is broadcast from it, in pieces.
func allgathervBcast[T Elem](c Comm, send []T, recv []T, counts, displs []int, l limits) error {
	copy(recv[displs[c.rank]:displs[c.rank]+counts[c.rank]], send)
	for r := range c.size {
		if err := bcast(c, recv[displs[r]:displs[r]+counts[r]], r, l); err != nil {
			return err
		}
	}
	return nil
}

// Alltoall is MPI_Alltoall with equal blocks: send and recv have the same
// length, a multiple of Size(); block j of send goes to rank j, block i of
// recv comes from rank i.
func Alltoall[T Elem](c Comm, send, recv []T) error { return alltoall(c, send, recv, defaultLimits()) }

func alltoall[T Elem](c Comm, send, recv []T, l limits) error {
	p := c.size
	if p == 0 {
		return errNull("MPI_Alltoall")
	}
	if len(send) != len(recv) || len(send)%p != 0 {
		return fmt.Errorf("mpi: MPI_Alltoall: send has %d elements and recv %d, want equal multiples of %d ranks",
			len(send), len(recv), p)
	}
	b := len(send) / p
	if b > l.maxCount {
		counts, displs := make([]int, p), make([]int, p)
		for r := range p {
			counts[r], displs[r] = b, r*b
		}
		r, err := pairwise(c, send, counts, displs, recv, counts, displs, l)
		if err != nil {
			return err
		}
		return r.Wait()
	}
	return c.call("MPI_Alltoall", func() C.int {
		return C.sg_alltoall(ptr(send), C.int(b), ptr(recv), dtype[T](), c.f)
	})
}

// Alltoallv is MPI_Alltoallv: send[sendDispls[j]:][:sendCounts[j]] goes to
// rank j, recv[recvDispls[i]:][:recvCounts[i]] comes from rank i.
// recvCounts[i] on rank j must equal sendCounts[j] on rank i.
func Alltoallv[T Elem](c Comm, send []T, sendCounts, sendDispls []int, recv []T, recvCounts, recvDispls []int) error {
	return alltoallv(c, send, sendCounts, sendDispls, recv, recvCounts, recvDispls, defaultLimits())
}

func alltoallv[T Elem](c Comm, send []T, sc, sd []int, recv []T, rc, rd []int, l limits) error {
	const call = "MPI_Alltoallv"
	large, err := checkAlltoallv(c, call, len(send), sc, sd, len(recv), rc, rd, l)
	if err != nil {
		return err
	}
	if large {
		r, err := pairwise(c, send, sc, sd, recv, rc, rd, l)
		if err != nil {
			return err
		}
		return r.Wait()
	}
	p := c.size
	ints := make([]C.int, 4*p)
	for i, a := range [][]int{sc, sd, rc, rd} {
		cInts(ints[i*p:], a)
	}
	return c.call(call, func() C.int {
		return C.sg_alltoallv(ptr(send), &ints[0], &ints[p], ptr(recv), &ints[2*p], &ints[3*p], dtype[T](), c.f)
	})
}

// Ialltoallv is the non-blocking Alltoallv (MPI_Ialltoallv). It first agrees
// with the other ranks on the method (see the package doc), so it returns
// once every rank has called it. The buffers must not be touched until the
// Request completes.
func Ialltoallv[T Elem](c Comm, send []T, sendCounts, sendDispls []int, recv []T, recvCounts, recvDispls []int) (*Request, error) {
	return ialltoallv(c, send, sendCounts, sendDispls, recv, recvCounts, recvDispls, defaultLimits())
}

func ialltoallv[T Elem](c Comm, send []T, sc, sd []int, recv []T, rc, rd []int, l limits) (*Request, error) {
	const call = "MPI_Ialltoallv"
	large, err := checkAlltoallv(c, call, len(send), sc, sd, len(recv), rc, rd, l)
	if err != nil {
		return nil, err
	}
	if large {
		return pairwise(c, send, sc, sd, recv, rc, rd, l)
	}
	p := c.size
	r, err := newRequest(call, 1, 4*p)
	if err != nil {
		return nil, err
	}
	ints := unsafe.Slice(r.q.ints, 4*p)
	for i, a := range [][]int{sc, sd, rc, rd} {
		cInts(ints[i*p:], a)
	}
	r.hold(ptr(send))
	r.hold(ptr(recv))
	return r.post(c, call, func() (string, C.int) {
		return call, C.sg_ialltoallv(ptr(send), ptr(recv), dtype[T](), c.f, r.q)
	})
}

// checkAlltoallv checks an Alltoallv's arguments and agrees with the other
// ranks on whether any rank's are invalid or need the large path.
func checkAlltoallv(c Comm, call string, ns int, sc, sd []int, nr int, rc, rd []int, l limits) (bool, error) {
	if c.size == 0 {
		return false, errNull(call)
	}
	large, err := checkLayout("mpi: "+call+": send", ns, sc, sd, c.size, l)
	if err == nil {
		var lr bool
		lr, err = checkLayout("mpi: "+call+": recv", nr, rc, rd, c.size, l)
		large = large || lr
	}
	if err == nil && sc[c.rank] != rc[c.rank] {
		err = fmt.Errorf("mpi: %s: rank %d sends itself %d elements but receives %d", call, c.rank, sc[c.rank], rc[c.rank])
	}
	return agree(c, call, large, err)
}

// agree combines, over the ranks of c, whether any rank needs the large path
// and whether any rank's arguments are invalid (local is this rank's
// argument error), with one MPI_Allreduce (max) of an int32.
func agree(c Comm, call string, large bool, local error) (bool, error) {
	flag := []int32{0}
	if large {
		flag[0] = 1
	}
	if local != nil {
		flag[0] = 2
	}
	if err := allreduce(c, flag, Max, defaultLimits()); err != nil {
		return false, fmt.Errorf("mpi: %s: agreeing on the method: %w", call, err)
	}
	if local != nil {
		return false, local
	}
	if flag[0] >= 2 {
		return false, fmt.Errorf("mpi: %s: invalid arguments on another rank", call)
	}
	return flag[0] == 1, nil
}

// pairwise posts an Alltoallv as point-to-point messages (tag ReservedTag),
// each in pieces of at most l.chunk elements; the block to itself is copied
// at once. Arguments are checked.
func pairwise[T Elem](c Comm, send []T, sc, sd []int, recv []T, rc, rd []int, l limits) (*Request, error) {
	const call = "MPI_Isend/MPI_Irecv"
	p, me, k := c.size, c.rank, l.chunk(elemSize[T]())
	n := 0
	for j := range p {
		if j != me {
			n += (sc[j]+k-1)/k + (rc[j]+k-1)/k
		}
	}
	copy(recv[rd[me]:rd[me]+rc[me]], send[sd[me]:sd[me]+sc[me]])
	r, err := newRequest(call, n, 0)
	if err != nil {
		return nil, err
	}
	r.hold(ptr(send))
	r.hold(ptr(recv))
	return r.post(c, call, func() (string, C.int) {
		for i := 1; i < p; i++ {
			src := (me - i + p) % p
			for off := 0; off < rc[src]; off += k {
				piece := recv[rd[src]+off : rd[src]+min(off+k, rc[src])]
				if e := postOne(c, r, piece, C.int(src), ReservedTag, false); e != 0 {
					return "MPI_Irecv", e
				}
			}
		}
		for i := 1; i < p; i++ {
			dst := (me + i) % p
			for off := 0; off < sc[dst]; off += k {
				piece := send[sd[dst]+off : sd[dst]+min(off+k, sc[dst])]
				if e := postOne(c, r, piece, C.int(dst), ReservedTag, true); e != 0 {
					return "MPI_Isend", e
				}
			}
		}
		return call, 0
	})
}

package mpi

// #include "binding.h"
import "C"

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"time"
	"unsafe"
)

// Request is an outstanding non-blocking operation (Isend, Irecv,
// Ialltoallv). It pins the operation's Go buffers and owns the C memory MPI
// reads until completion; Wait, or a Test that reports completion, releases
// both. Every Request must be completed (see the package doc). A Request is
// used by one goroutine at a time.
type Request struct {
	q   *C.sg_req // C memory: MPI requests (and Ialltoallv's counts)
	pin runtime.Pinner
}

// newRequest allocates room for n MPI requests and nints C ints.
func newRequest(call string, n, nints int) (*Request, error) {
	if n > math.MaxInt32 || nints > math.MaxInt32 {
		return nil, fmt.Errorf("mpi: %s: %d requests is too many", call, n)
	}
	q := C.sg_req_new(C.int(n), C.int(nints))
	if q == nil {
		return nil, fmt.Errorf("mpi: %s: out of C memory", call)
	}
	return &Request{q: q}, nil
}

// hold pins the Go object p points into (nothing for nil or non-Go memory).
func (r *Request) hold(p unsafe.Pointer) {
	if p != nil {
		r.pin.Pin(p)
	}
}

// post runs f, which posts the request's MPI operations, under the package
// mutex. If a post fails, the ones already posted are cancelled and the
// request is released.
func (r *Request) post(c Comm, call string, f func() (string, C.int)) (*Request, error) {
	err := errNull(call)
	if c.size > 0 {
		err = lockedNamed(call, func() (string, C.int) {
			name, rc := f()
			if rc != 0 {
				C.sg_req_cancel(r.q)
			}
			return name, rc
		})
	}
	if err != nil {
		r.release()
		return nil, err
	}
	return r, nil
}

// release frees the C side and unpins the buffers.
func (r *Request) release() {
	C.sg_req_free(r.q)
	r.q = nil
	r.pin.Unpin()
}

// Wait blocks until the operation completes; the buffers may be reused
// after. Waiting again, or on a nil Request, returns nil at once.
//
// It polls (MPI_Testall) and releases the package mutex between polls, so
// that other goroutines of the rank can post their operations while it
// waits: a Wait holding the mutex inside MPI_Waitall could deadlock a job
// in which another goroutine's send, not yet posted, is what some other
// rank's wait needs. Polls back off from immediate retries to waitPollMax.
func (r *Request) Wait() error {
	if r == nil || r.q == nil {
		return nil
	}
	pause := time.Duration(0)
	for {
		done, err := r.Test()
		if done || err != nil {
			return err
		}
		if pause == 0 {
			runtime.Gosched()
			pause = time.Microsecond
			continue
		}
		time.Sleep(pause)
		if pause < waitPollMax {
			pause *= 2
		}
	}
}

// waitPollMax is the longest pause between two polls of Wait.
const waitPollMax = 64 * time.Microsecond

// Test reports whether the operation has completed (MPI_Testall), without
// blocking; once it reports true the Request is finished like after Wait.
// Calling Test now and then while computing also lets MPI progress a
// non-blocking collective.
func (r *Request) Test() (bool, error) {
	if r == nil || r.q == nil {
		return true, nil
	}
	var done C.int
	err := locked("MPI_Testall", func() C.int { return C.sg_req_test(r.q, &done) })
	if err == nil && done == 0 {
		return false, nil
	}
	r.release()
	return true, err
}

// Waitall waits for every request (nil entries are skipped) and returns
// their errors joined.
func Waitall(reqs []*Request) error {
	var errs []error
	for _, r := range reqs {
		errs = append(errs, r.Wait())
	}
	return errors.Join(errs...)
}

// Isend is MPI_Isend of buf to rank dest with tag (0..ReservedTag-1).
// buf must not be touched until the Request completes. A message longer
// than math.MaxInt32 elements goes in pieces (see the package doc).
func Isend[T Elem](c Comm, buf []T, dest, tag int) (*Request, error) {
	return p2p(c, "MPI_Isend", buf, dest, tag, true, defaultLimits())
}

// Irecv is MPI_Irecv into buf from rank src with tag (0..ReservedTag-1).
// For a message longer than math.MaxInt32 elements len(buf) must equal the
// message's length.
func Irecv[T Elem](c Comm, buf []T, src, tag int) (*Request, error) {
	return p2p(c, "MPI_Irecv", buf, src, tag, false, defaultLimits())
}

func p2p[T Elem](c Comm, call string, buf []T, peer, tag int, send bool, l limits) (*Request, error) {
	if tag < 0 || tag >= ReservedTag {
		return nil, fmt.Errorf("mpi: %s: tag %d outside 0..%d", call, tag, ReservedTag-1)
	}
	cpeer, err := cRank(call, peer)
	if err != nil {
		return nil, err
	}
	n, k := l.pieces(len(buf), elemSize[T]()), len(buf)
	if n > 1 {
		k = l.chunk(elemSize[T]())
	}
	r, err := newRequest(call, n, 0)
	if err != nil {
		return nil, err
	}
	r.hold(ptr(buf))
	return r.post(c, call, func() (string, C.int) {
		for i := range n {
			piece := buf[min(i*k, len(buf)):min((i+1)*k, len(buf))]
			if rc := postOne(c, r, piece, cpeer, tag, send); rc != 0 {
				return call, rc
			}
		}
		return call, 0
	})
}

// postOne posts an Isend (send) or Irecv of piece into r; call it with the
// package mutex held.
func postOne[T Elem](c Comm, r *Request, piece []T, peer C.int, tag int, send bool) C.int {
	if send {
		return C.sg_isend(ptr(piece), C.int(len(piece)), dtype[T](), peer, C.int(tag), c.f, r.q)
	}
	return C.sg_irecv(ptr(piece), C.int(len(piece)), dtype[T](), peer, C.int(tag), c.f, r.q)
}

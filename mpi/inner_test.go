package mpi

// The TestInner tests run on every rank under mpirun (see TestMPI).

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/mpi/mpitest"
)

// testLimits: the default, and lowered limits that send the same small
// buffers through the large-message paths (pieces of one or a few elements).
var testLimits = []limits{defaultLimits(), {maxCount: 2, chunkBytes: 1 << 30}, {maxCount: 3, chunkBytes: 4}}

// world returns MPI_COMM_WORLD, skipping t outside MPI.
func world(t *testing.T) Comm {
	n := mpitest.Skip(t)
	c := World()
	if c.Size() != n || c.Rank() < 0 || c.Rank() >= n {
		t.Fatalf("World: rank %d size %d, want size %d", c.Rank(), c.Size(), n)
	}
	return c
}

// code is the value element k of the block from rank src to rank dst
// carries (fits int8 for src, dst, k < 4).
func code(src, dst, k int) int { return src*16 + dst*4 + k }

func TestInnerWorld(t *testing.T) {
	c := world(t)
	if !Initialized() || Finalized() {
		t.Errorf("Initialized %v Finalized %v", Initialized(), Finalized())
	}
	if _, err := InitThread(ThreadSerialized); err == nil {
		t.Error("second InitThread succeeded")
	}
	if LibraryVersion() == "" {
		t.Error("empty LibraryVersion")
	}
	f, err := FromFortran(c.Fortran())
	if err != nil || f.Rank() != c.Rank() || f.Size() != c.Size() {
		t.Fatalf("FromFortran(%d): rank %d size %d err %v", c.Fortran(), f.Rank(), f.Size(), err)
	}
	buf := []int64{1}
	if err := Allreduce(f, buf, Sum); err != nil || buf[0] != int64(c.Size()) {
		t.Errorf("Allreduce over FromFortran(World): %d, %v", buf[0], err)
	}
	if err := c.Barrier(); err != nil {
		t.Error(err)
	}
	t0 := Wtime()
	if t1 := Wtime(); t1 < t0 {
		t.Errorf("Wtime went back: %v then %v", t0, t1)
	}
	if err := Serialize(func() error { return nil }); err != nil {
		t.Error(err)
	}
	done := make(chan error)
	go func() { done <- Finalize() }()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "goroutine") {
		t.Errorf("Finalize from another goroutine: %v, want an error", err)
	}
}

func TestInnerBcast(t *testing.T) {
	c := world(t)
	testBcast[int8](t, c)
	testBcast[uint8](t, c)
	testBcast[int32](t, c)
	testBcast[int64](t, c)
	testBcast[float32](t, c)
	testBcast[float64](t, c)
}

func testBcast[T Elem](t *testing.T, c Comm) {
	for _, l := range testLimits {
		for _, root := range []int{0, c.Size() - 1} {
			for _, n := range []int{0, 1, 7} {
				buf := make([]T, n)
				if c.Rank() == root {
					for i := range buf {
						buf[i] = T(3*i + root)
					}
				}
				if err := bcast(c, buf, root, l); err != nil {
					t.Fatalf("%T %+v root %d n %d: %v", buf, l, root, n, err)
				}
				for i, v := range buf {
					if v != T(3*i+root) {
						t.Errorf("%T %+v root %d: buf[%d] = %v, want %v", buf, l, root, i, v, 3*i+root)
					}
				}
			}
		}
	}
}

func TestInnerAllreduce(t *testing.T) {
	c := world(t)
	testAllreduce[int8](t, c)
	testAllreduce[uint8](t, c)
	testAllreduce[int32](t, c)
	testAllreduce[int64](t, c)
	testAllreduce[float32](t, c)
	testAllreduce[float64](t, c)
	if err := Allreduce(c, []float64{1}, Op(9)); err == nil {
		t.Error("Allreduce with an unknown Op succeeded")
	}
}

func testAllreduce[T Elem](t *testing.T, c Comm) {
	p, r := c.Size(), c.Rank()
	for _, l := range testLimits {
		for _, op := range []Op{Sum, Max, Min} {
			buf := make([]T, 9)
			for i := range buf {
				buf[i] = T(r*(i%3) + i) // the extreme rank depends on i
			}
			if err := allreduce(c, buf, op, l); err != nil {
				t.Fatalf("%T %v %+v: %v", buf, op, l, err)
			}
			for i, v := range buf {
				var want int
				switch op {
				case Sum:
					want = (i%3)*p*(p-1)/2 + p*i
				case Max:
					want = (p-1)*(i%3) + i
				case Min:
					want = i
				}
				if v != T(want) {
					t.Errorf("%T %v %+v: buf[%d] = %v, want %d", buf, op, l, i, v, want)
				}
			}
		}
	}
}

func TestInnerAllgather(t *testing.T) {
	c := world(t)
	testAllgather[int8](t, c)
	testAllgather[uint8](t, c)
	testAllgather[int32](t, c)
	testAllgather[int64](t, c)
	testAllgather[float32](t, c)
	testAllgather[float64](t, c)
	if err := Allgather(c, []int64{1, 2}, make([]int64, 2*c.Size()+1)); err == nil {
		t.Error("Allgather into a recv of the wrong length succeeded")
	}
}

func testAllgather[T Elem](t *testing.T, c Comm) {
	p, r := c.Size(), c.Rank()
	for _, l := range testLimits {
		for _, n := range []int{0, 3} {
			send := make([]T, n)
			for k := range send {
				send[k] = T(code(r, 0, k))
			}
			recv := make([]T, p*n)
			if err := allgather(c, send, recv, l); err != nil {
				t.Fatalf("%T %+v: %v", send, l, err)
			}
			for i, v := range recv {
				if want := T(code(i/n, 0, i%n)); v != want {
					t.Errorf("%T %+v: recv[%d] = %v, want %v", send, l, i, v, want)
				}
			}
		}
	}
}

func TestInnerAllgatherv(t *testing.T) {
	c := world(t)
	testAllgatherv[int8](t, c)
	testAllgatherv[uint8](t, c)
	testAllgatherv[int32](t, c)
	testAllgatherv[int64](t, c)
	testAllgatherv[float32](t, c)
	testAllgatherv[float64](t, c)
}

// sentinel marks elements no block may write.
const sentinel = 99

func testAllgatherv[T Elem](t *testing.T, c Comm) {
	p, r := c.Size(), c.Rank()
	for _, l := range testLimits {
		// Rank i sends i%3 elements (zeros included); the blocks land in
		// reverse rank order with gaps that differ between ranks, so that
		// with lowered limits only some ranks need the large path.
		counts, displs := make([]int, p), make([]int, p)
		off := 0
		for i := p - 1; i >= 0; i-- {
			counts[i], displs[i] = i%3, off
			off += i%3 + r
		}
		send := make([]T, counts[r])
		for k := range send {
			send[k] = T(code(r, 0, k))
		}
		recv := make([]T, off)
		for i := range recv {
			recv[i] = sentinel
		}
		if err := allgatherv(c, send, recv, counts, displs, l); err != nil {
			t.Fatalf("%T %+v: %v", send, l, err)
		}
		want := make([]T, off)
		for i := range want {
			want[i] = sentinel
		}
		for i := range p {
			for k := range counts[i] {
				want[displs[i]+k] = T(code(i, 0, k))
			}
		}
		if fmt.Sprint(recv) != fmt.Sprint(want) {
			t.Errorf("%T %+v: recv %v, want %v", send, l, recv, want)
		}
	}
}

func TestInnerAlltoall(t *testing.T) {
	c := world(t)
	testAlltoall[int8](t, c)
	testAlltoall[uint8](t, c)
	testAlltoall[int32](t, c)
	testAlltoall[int64](t, c)
	testAlltoall[float32](t, c)
	testAlltoall[float64](t, c)
	if err := Alltoall(c, make([]int32, c.Size()+1), make([]int32, c.Size()+1)); c.Size() > 1 && err == nil {
		t.Error("Alltoall with a length that is not a multiple of the size succeeded")
	}
}

func testAlltoall[T Elem](t *testing.T, c Comm) {
	p, r := c.Size(), c.Rank()
	const b = 3
	for _, l := range testLimits {
		send, recv := make([]T, p*b), make([]T, p*b)
		for j := range p {
			for k := range b {
				send[j*b+k] = T(code(r, j, k))
			}
		}
		if err := alltoall(c, send, recv, l); err != nil {
			t.Fatalf("%T %+v: %v", send, l, err)
		}
		for i := range p {
			for k := range b {
				if v, want := recv[i*b+k], T(code(i, r, k)); v != want {
					t.Errorf("%T %+v: recv[%d] = %v, want %v", send, l, i*b+k, v, want)
				}
			}
		}
	}
}

// v is an Alltoallv case: rank-dependent counts (with zeros), send blocks in
// reverse peer order with gaps, receive blocks in peer order with gaps.
type v[T Elem] struct {
	send, recv, want []T
	sc, sd, rc, rd   []int
}

// count is the number of elements rank i sends rank j: 0..3, zeros included.
func count(i, j int) int { return (i + 2*j + 1) % 4 }

func newV[T Elem](c Comm) *v[T] {
	p, r := c.Size(), c.Rank()
	x := &v[T]{sc: make([]int, p), sd: make([]int, p), rc: make([]int, p), rd: make([]int, p)}
	ns := 0
	for j := p - 1; j >= 0; j-- {
		x.sc[j], x.sd[j] = count(r, j), ns
		ns += count(r, j) + 1
	}
	nr := 1
	for i := range p {
		x.rc[i], x.rd[i] = count(i, r), nr
		nr += count(i, r) + 2
	}
	x.send, x.recv, x.want = make([]T, ns), make([]T, nr), make([]T, nr)
	for i := range x.recv {
		x.recv[i], x.want[i] = sentinel, sentinel
	}
	for j := range p {
		for k := range x.sc[j] {
			x.send[x.sd[j]+k] = T(code(r, j, k))
		}
	}
	for i := range p {
		for k := range x.rc[i] {
			x.want[x.rd[i]+k] = T(code(i, r, k))
		}
	}
	return x
}

func (x *v[T]) check(t *testing.T, what string) {
	t.Helper()
	if fmt.Sprint(x.recv) != fmt.Sprint(x.want) {
		t.Errorf("%s %T: recv %v, want %v", what, x.recv, x.recv, x.want)
	}
}

func TestInnerAlltoallv(t *testing.T) {
	c := world(t)
	testAlltoallv[int8](t, c)
	testAlltoallv[uint8](t, c)
	testAlltoallv[int32](t, c)
	testAlltoallv[int64](t, c)
	testAlltoallv[float32](t, c)
	testAlltoallv[float64](t, c)
}

func testAlltoallv[T Elem](t *testing.T, c Comm) {
	for _, l := range testLimits {
		x := newV[T](c)
		if err := alltoallv(c, x.send, x.sc, x.sd, x.recv, x.rc, x.rd, l); err != nil {
			t.Fatalf("%+v: %v", l, err)
		}
		x.check(t, fmt.Sprintf("Alltoallv %+v", l))
	}
}

func TestInnerIalltoallv(t *testing.T) {
	c := world(t)
	testIalltoallv[int8](t, c)
	testIalltoallv[uint8](t, c)
	testIalltoallv[int32](t, c)
	testIalltoallv[int64](t, c)
	testIalltoallv[float32](t, c)
	testIalltoallv[float64](t, c)
}

func testIalltoallv[T Elem](t *testing.T, c Comm) {
	for _, l := range testLimits {
		// Two operations in flight at once, completed by Test and Wait;
		// computation and garbage collections happen meanwhile, with the
		// send buffers reachable only through the requests.
		x, y := newV[T](c), newV[T](c)
		rx, ry := startI(t, c, x, l), startI(t, c, y, l)
		sum := 0.0
		for i := range 200000 {
			sum += float64(i % 7)
		}
		runtime.GC()
		for done := false; !done; runtime.Gosched() {
			var err error
			if done, err = ry.Test(); err != nil {
				t.Fatal(err)
			}
		}
		if err := rx.Wait(); err != nil || sum == 0 {
			t.Fatal(err)
		}
		if err := rx.Wait(); err != nil {
			t.Errorf("second Wait: %v", err)
		}
		x.check(t, fmt.Sprintf("Ialltoallv %+v", l))
		y.check(t, fmt.Sprintf("Ialltoallv (Test) %+v", l))
	}
}

// startI starts an Ialltoallv of x and drops x's send buffer.
func startI[T Elem](t *testing.T, c Comm, x *v[T], l limits) *Request {
	t.Helper()
	r, err := ialltoallv(c, x.send, x.sc, x.sd, x.recv, x.rc, x.rd, l)
	if err != nil {
		t.Fatalf("%+v: %v", l, err)
	}
	x.send = nil
	return r
}

func TestInnerAlltoallvErrors(t *testing.T) {
	c := world(t)
	r := c.Rank()
	x := newV[float32](c)
	// Every rank passes a short count array.
	if err := Alltoallv(c, x.send, x.sc[1:], x.sd, x.recv, x.rc, x.rd); err == nil {
		t.Error("Alltoallv with a short count array succeeded")
	}
	// Rank 0's displacement is beyond its buffer: every rank must fail,
	// rank 0 with its own error, the others hearing of it.
	sd := append([]int(nil), x.sd...)
	if r == 0 {
		sd[0] = len(x.send) + 1
	}
	req, err := Ialltoallv(c, x.send, x.sc, sd, x.recv, x.rc, x.rd)
	switch {
	case err == nil:
		t.Error("Ialltoallv with a bad displacement on rank 0 succeeded")
		req.Wait()
	case r == 0 && !strings.Contains(err.Error(), "outside the buffer"):
		t.Errorf("rank 0: %v", err)
	case r != 0 && !strings.Contains(err.Error(), "another rank"):
		t.Errorf("rank %d: %v", r, err)
	}
}

func TestInnerSplit(t *testing.T) {
	c := world(t)
	p, r := c.Size(), c.Rank()
	s, err := c.Split(r%2, -r)
	if err != nil {
		t.Fatal(err)
	}
	wantSize, wantRank, wantSum := 0, 0, int64(0)
	for i := r % 2; i < p; i += 2 {
		wantSize++
		wantSum += int64(i)
		if i > r {
			wantRank++ // key -i orders higher world ranks first
		}
	}
	if s.Size() != wantSize || s.Rank() != wantRank || s.Fortran() == c.Fortran() {
		t.Errorf("Split: rank %d size %d fortran %d, want %d %d", s.Rank(), s.Size(), s.Fortran(), wantRank, wantSize)
	}
	buf := []int64{int64(r)}
	if err := Allreduce(s, buf, Sum); err != nil || buf[0] != wantSum {
		t.Errorf("Allreduce over the split: %d %v, want %d", buf[0], err, wantSum)
	}
	if err := s.Free(); err != nil {
		t.Error(err)
	}

	// Rank 0 stays out.
	color := 0
	if r == 0 {
		color = -1
	}
	s, err = c.Split(color, r)
	if err != nil {
		t.Fatal(err)
	}
	if r == 0 {
		if !s.IsNull() || s.Barrier() == nil {
			t.Errorf("rank 0 with color -1 got %+v", s)
		}
		return
	}
	if s.Size() != p-1 || s.Rank() != r-1 {
		t.Errorf("Split without rank 0: rank %d size %d", s.Rank(), s.Size())
	}
	if err := s.Barrier(); err != nil {
		t.Error(err)
	}
	if err := s.Free(); err != nil {
		t.Error(err)
	}
}

func TestInnerSplitTypeShared(t *testing.T) {
	c := world(t)
	s, err := c.SplitTypeShared(c.Rank())
	if err != nil {
		t.Fatal(err)
	}
	// Every rank of the test runs on this machine.
	if s.Size() != c.Size() || s.Rank() != c.Rank() {
		t.Errorf("SplitTypeShared: rank %d size %d, want %d %d", s.Rank(), s.Size(), c.Rank(), c.Size())
	}
	buf := []float64{1}
	if err := Allreduce(s, buf, Sum); err != nil || buf[0] != float64(c.Size()) {
		t.Errorf("Allreduce over the node: %v %v", buf[0], err)
	}
	if err := s.Free(); err != nil {
		t.Error(err)
	}
}

func TestInnerIsendIrecv(t *testing.T) {
	c := world(t)
	testRing[int8](t, c)
	testRing[uint8](t, c)
	testRing[int32](t, c)
	testRing[int64](t, c)
	testRing[float32](t, c)
	testRing[float64](t, c)
	for _, tag := range []int{-1, ReservedTag} {
		if _, err := Isend(c, []byte{1}, 0, tag); err == nil {
			t.Errorf("Isend with tag %d succeeded", tag)
		}
		if _, err := Irecv(c, []byte{1}, 0, tag); err == nil {
			t.Errorf("Irecv with tag %d succeeded", tag)
		}
	}
}

// testRing sends to the right neighbour and receives from the left (with
// one rank, to itself), with two goroutines doing so at once on different
// tags to exercise the serialisation.
func testRing[T Elem](t *testing.T, c Comm) {
	p, r := c.Size(), c.Rank()
	right, left := (r+1)%p, (r+p-1)%p
	for _, l := range testLimits {
		errs := make(chan error, 2)
		for tag := range 2 {
			go func() {
				n := 5 + tag
				send, recv := make([]T, n), make([]T, n)
				for k := range send {
					send[k] = T(code(r, tag, k%4))
				}
				rr, err := p2p(c, "MPI_Irecv", recv, left, tag, false, l)
				if err != nil {
					errs <- err
					return
				}
				rs, err := p2p(c, "MPI_Isend", send, right, tag, true, l)
				if err != nil {
					errs <- errors.Join(err, rr.Wait())
					return
				}
				if err := Waitall([]*Request{rs, nil, rr}); err != nil {
					errs <- err
					return
				}
				for k, v := range recv {
					if v != T(code(left, tag, k%4)) {
						errs <- fmt.Errorf("%T %+v tag %d: recv[%d] = %v, want %v", recv, l, tag, k, v, code(left, tag, k%4))
						return
					}
				}
				errs <- nil
			}()
		}
		for range 2 {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
	}
}

func TestInnerErrors(t *testing.T) {
	c := world(t)
	var e *Error
	err := Bcast(c, []int32{1}, c.Size())
	if !errors.As(err, &e) || e.Call != "MPI_Bcast" || e.Msg == "" || e.Code == 0 {
		t.Errorf("Bcast with root %d: %v, want an *Error from MPI_Bcast", c.Size(), err)
	}
	err = c.Free()
	if !errors.As(err, &e) || e.Call != "MPI_Comm_free" {
		t.Errorf("freeing World: %v, want an *Error from MPI_Comm_free", err)
	}
	if err := c.Barrier(); err != nil {
		t.Errorf("World after the failed Free: %v", err)
	}
	t.Logf("errors as reported: %v", err)
}

package mpicomm

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/mpi"
	"github.com/supergcn/supergcn/mpi/mpitest"
)

func TestMain(m *testing.M) {
	if mpitest.Ranks() == 0 {
		os.Exit(m.Run())
	}
	if _, err := mpi.InitThread(mpi.ThreadSerialized); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := mpi.Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// TestMPI runs the TestInner tests under mpirun with 1, 2 and 4 ranks.
func TestMPI(t *testing.T) {
	mpitest.RunRanks(t, "^TestInner", 1, 2, 4)
}

// TestAbort: Abort on rank 0 ends the job while rank 1 waits in a barrier.
func TestAbort(t *testing.T) {
	mpitest.ExpectAbort(t, "^TestAbortRank$")
}

func TestAbortRank(t *testing.T) {
	if os.Getenv(mpitest.EnvAbort) == "" {
		t.Skip("runs only under TestAbort")
	}
	c := world(t)
	if c.Rank() == 0 {
		c.Abort(3)
		t.Fatal("Abort returned")
	}
	t.Fatalf("Barrier returned (%v) although rank 0 aborted", c.Barrier())
}

func world(t *testing.T) comm.Comm {
	n := mpitest.Skip(t)
	c := New(mpi.World())
	if c.Size() != n || c.Rank() < 0 || c.Rank() >= n {
		t.Fatalf("rank %d size %d, want size %d", c.Rank(), c.Size(), n)
	}
	if w, ok := c.(interface{ MPI() mpi.Comm }); !ok || w.MPI().Fortran() != mpi.World().Fortran() {
		t.Fatal("MPI() is not World")
	}
	return c
}

func TestInnerBasics(t *testing.T) {
	c := world(t)
	if err := c.Barrier(); err != nil {
		t.Error(err)
	}
	if t0, t1 := c.Wtime(), c.Wtime(); t1 < t0 {
		t.Errorf("Wtime went back: %v then %v", t0, t1)
	}
}

func TestInnerBcastBytes(t *testing.T) {
	c := world(t)
	root := c.Size() - 1
	buf := []byte("........")
	if c.Rank() == root {
		copy(buf, "from the")
	}
	if err := c.BcastBytes(buf, root); err != nil || string(buf) != "from the" {
		t.Errorf("BcastBytes: %q %v", buf, err)
	}
	if err := c.BcastBytes(buf, -1); err == nil {
		t.Error("BcastBytes from root -1 succeeded")
	}
}

func TestInnerAllreduce(t *testing.T) {
	c := world(t)
	p, r := c.Size(), c.Rank()
	tri := p * (p - 1) / 2
	f32 := []float32{float32(r), 0.5}
	if err := c.AllreduceSumF32(f32); err != nil || f32[0] != float32(tri) || f32[1] != 0.5*float32(p) {
		t.Errorf("AllreduceSumF32: %v %v", f32, err)
	}
	f64 := []float64{float64(r), -1}
	if err := c.AllreduceSumF64(f64); err != nil || f64[0] != float64(tri) || f64[1] != -float64(p) {
		t.Errorf("AllreduceSumF64: %v %v", f64, err)
	}
	i64 := []int64{int64(r) << 40, 1}
	if err := c.AllreduceSumI64(i64); err != nil || i64[0] != int64(tri)<<40 || i64[1] != int64(p) {
		t.Errorf("AllreduceSumI64: %v %v", i64, err)
	}
	mx := []float64{float64(r), -float64(r)}
	if err := c.AllreduceMaxF64(mx); err != nil || mx[0] != float64(p-1) || mx[1] != 0 {
		t.Errorf("AllreduceMaxF64: %v %v", mx, err)
	}
}

// layout is an Alltoallv layout: rank i sends rank j (i+j)%3 elements
// (zeros included), the value 16i+4j+k; blocks packed in peer order.
type layout struct {
	sc, sd, rc, rd []int
	ns, nr         int
}

func newLayout(c comm.Comm) layout {
	p, r := c.Size(), c.Rank()
	l := layout{sc: make([]int, p), sd: make([]int, p), rc: make([]int, p), rd: make([]int, p)}
	for j := range p {
		l.sc[j], l.sd[j] = (r+j)%3, l.ns
		l.ns += l.sc[j]
		l.rc[j], l.rd[j] = (j+r)%3, l.nr
		l.nr += l.rc[j]
	}
	return l
}

func (l layout) send(r int) []int {
	v := make([]int, l.ns)
	for j := range l.sc {
		for k := range l.sc[j] {
			v[l.sd[j]+k] = 16*r + 4*j + k
		}
	}
	return v
}

func (l layout) want(r int) []int {
	v := make([]int, l.nr)
	for i := range l.rc {
		for k := range l.rc[i] {
			v[l.rd[i]+k] = 16*i + 4*r + k
		}
	}
	return v
}

func conv[T int64 | float32 | byte](v []int) []T {
	out := make([]T, len(v))
	for i, x := range v {
		out[i] = T(x)
	}
	return out
}

func TestInnerAlltoallv(t *testing.T) {
	c := world(t)
	r := c.Rank()
	l := newLayout(c)
	send := l.send(r)
	want := fmt.Sprint(l.want(r))
	wantB := fmt.Sprint(conv[byte](l.want(r)))

	i64 := make([]int64, l.nr)
	if err := c.AlltoallvI64(conv[int64](send), l.sc, l.sd, i64, l.rc, l.rd); err != nil || fmt.Sprint(i64) != want {
		t.Errorf("AlltoallvI64: %v %v, want %v", i64, err, want)
	}
	f32 := make([]float32, l.nr)
	rf, err := c.IalltoallvF32(conv[float32](send), l.sc, l.sd, f32, l.rc, l.rd)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, l.nr)
	rb, err := c.IalltoallvBytes(conv[byte](send), l.sc, l.sd, b, l.rc, l.rd)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(rb.Wait(), rf.Wait()); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(f32) != want || fmt.Sprint(b) != wantB {
		t.Errorf("Ialltoallv: %v and %v, want %v", f32, b, want)
	}

	// Bad arguments are errors on every rank, and no Request comes back.
	req, err := c.IalltoallvF32(nil, l.sc, l.sd, f32, l.rc, l.rd)
	if l.ns > 0 && (err == nil || req != nil) {
		t.Errorf("IalltoallvF32 with a short send buffer: %v, %v", req, err)
	}
}

// TestInnerSplitAndNodes: Split by parity gives communicators of the right
// size whose collectives stay inside them; under one mpirun on one host
// NodeLayout sees one node of every rank.
func TestInnerSplitAndNodes(t *testing.T) {
	c := world(t)
	sub, err := c.Split(c.Rank()%2, -c.Rank())
	if err != nil {
		t.Fatal(err)
	}
	want := (c.Size() + 1 - c.Rank()%2) / 2
	if sub.Size() != want {
		t.Fatalf("rank %d: split size %d, want %d", c.Rank(), sub.Size(), want)
	}
	buf := []int64{1}
	if err := sub.AllreduceSumI64(buf); err != nil || buf[0] != int64(want) {
		t.Fatalf("rank %d: sum over the split %v (%v), want %d", c.Rank(), buf, err, want)
	}
	none, err := c.Split(-1, 0)
	if err != nil || none != nil {
		t.Fatalf("negative color: %v, %v", none, err)
	}
	nl, err := comm.NodeLayout(c)
	if err != nil {
		t.Fatal(err)
	}
	if nl.NumNodes() != 1 || nl.Local.Size() != c.Size() || nl.Local.Rank() != c.Rank() {
		t.Fatalf("one host: %d nodes, node communicator rank %d of %d", nl.NumNodes(), nl.Local.Rank(), nl.Local.Size())
	}
}

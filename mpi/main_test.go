package mpi

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/supergcn/supergcn/mpi/mpitest"
)

// TestMain initialises MPI when the process is a rank started by a launcher
// test, and checks the state after Finalize.
func TestMain(m *testing.M) {
	if mpitest.Ranks() == 0 {
		os.Exit(m.Run())
	}
	if _, err := InitThread(ThreadSerialized); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	w := World()
	if err := Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, "Finalize:", err)
		code = 1
	}
	if err := afterFinalize(w); err != nil {
		fmt.Fprintln(os.Stderr, "after Finalize:", err)
		code = 1
	}
	os.Exit(code)
}

// afterFinalize checks that calls after Finalize fail cleanly.
func afterFinalize(w Comm) error {
	if !Finalized() || !Initialized() {
		return fmt.Errorf("Initialized %v, Finalized %v; want both true", Initialized(), Finalized())
	}
	if !World().IsNull() {
		return errors.New("World is not null after Finalize")
	}
	if err := w.Barrier(); !errors.Is(err, errNotActive) {
		return fmt.Errorf("Barrier after Finalize: %v, want %v", err, errNotActive)
	}
	if err := Finalize(); err == nil {
		return errors.New("second Finalize succeeded")
	}
	return nil
}

// TestMPI runs the TestInner tests under mpirun with 1, 2 and 4 ranks.
func TestMPI(t *testing.T) {
	mpitest.RunRanks(t, "^TestInner", 1, 2, 4)
}

// TestAbort checks that Abort on one rank ends the whole job, with a
// non-zero status, while the other rank is blocked in a collective.
func TestAbort(t *testing.T) {
	mpitest.ExpectAbort(t, "^TestAbortRank$")
}

// TestAbortRank is TestAbort's job: the last rank aborts, the others wait
// in a barrier that never completes.
func TestAbortRank(t *testing.T) {
	mpitest.Skip(t)
	if os.Getenv(mpitest.EnvAbort) == "" {
		t.Skip("runs only under TestAbort")
	}
	c := World()
	if c.Rank() == c.Size()-1 {
		c.Abort(7)
		t.Fatal("Abort returned")
	}
	err := c.Barrier()
	t.Fatalf("Barrier returned (%v) although a rank aborted", err)
}

// TestNotInitialised runs outside MPI: every call fails cleanly.
func TestNotInitialised(t *testing.T) {
	if mpitest.Ranks() != 0 {
		t.Skip("runs outside MPI")
	}
	if Initialized() {
		t.Fatal("Initialized outside MPI")
	}
	w := World()
	if !w.IsNull() || w.Size() != 0 || w.Rank() != -1 {
		t.Errorf("World outside MPI: %+v, want the null Comm", w)
	}
	if err := w.Barrier(); err == nil {
		t.Error("Barrier on the null Comm succeeded")
	}
	if err := Bcast(w, []int64{1}, 0); err == nil {
		t.Error("Bcast on the null Comm succeeded")
	}
	if _, err := Ialltoallv(w, nil, nil, nil, []float32(nil), nil, nil); err == nil {
		t.Error("Ialltoallv on the null Comm succeeded")
	}
	if err := Finalize(); !errors.Is(err, errNotActive) {
		t.Errorf("Finalize before InitThread: %v", err)
	}
	if Wtime() != 0 {
		t.Error("Wtime without MPI is not 0")
	}
	if err := Serialize(func() error { return nil }); err == nil {
		t.Error("Serialize without MPI succeeded")
	}
}

func TestLimits(t *testing.T) {
	d := defaultLimits()
	if d.chunk(4) != 1<<28 || d.chunk(1) != 1<<30 || d.pieces(1<<31-1, 1) != 1 || d.pieces(1<<31, 1) != 2 {
		t.Errorf("default limits: chunk(4) %d chunk(1) %d pieces %d %d", d.chunk(4), d.chunk(1),
			d.pieces(1<<31-1, 1), d.pieces(1<<31, 1))
	}
	l := limits{maxCount: 3, chunkBytes: 8}
	for _, c := range []struct{ n, elem, chunk, pieces int }{
		{0, 8, 1, 1}, {3, 8, 1, 1}, {4, 8, 1, 4}, {4, 4, 2, 2}, {7, 1, 3, 3}, {6, 2, 3, 2},
	} {
		if k, p := l.chunk(c.elem), l.pieces(c.n, c.elem); k != c.chunk || p != c.pieces {
			t.Errorf("n %d elem %d: chunk %d pieces %d, want %d %d", c.n, c.elem, k, p, c.chunk, c.pieces)
		}
	}
}

func TestCheckLayout(t *testing.T) {
	l := limits{maxCount: 4, chunkBytes: 8}
	for _, c := range []struct {
		n              int
		counts, displs []int
		large, bad     bool
	}{
		{10, []int{2, 3}, []int{0, 2}, false, false},
		{10, []int{0, 5}, []int{10, 5}, true, false},
		{10, []int{2, 3}, []int{0, 8}, true, true},
		{10, []int{-1, 3}, []int{0, 2}, false, true},
		{10, []int{2}, []int{0}, false, true},
		{10, []int{2, 3}, []int{0, -2}, false, true},
	} {
		large, err := checkLayout("x", c.n, c.counts, c.displs, 2, l)
		if (err != nil) != c.bad || (err == nil && large != c.large) {
			t.Errorf("%v %v in %d: large %v err %v", c.counts, c.displs, c.n, large, err)
		}
	}
}

package comm

import (
	"fmt"
	"os"
	"time"
)

// Single returns the communicator of a one-rank job: reductions, broadcasts
// and barriers leave their buffers as they are, gathers and all-to-alls copy
// the rank's own block, and Abort exits the process.
func Single() Comm { return &single{t0: time.Now()} }

type single struct{ t0 time.Time }

func (s *single) Rank() int      { return 0 }
func (s *single) Size() int      { return 1 }
func (s *single) Barrier() error { return nil }

// Abort exits the process with the given code (the whole "job").
func (s *single) Abort(code int) { os.Exit(code) }

func (s *single) Wtime() float64 { return time.Since(s.t0).Seconds() }

func (s *single) BcastBytes(buf []byte, root int) error { return checkRoot(root, 1) }

func (s *single) AllreduceSumF32(buf []float32) error { return nil }
func (s *single) AllreduceSumF64(buf []float64) error { return nil }
func (s *single) AllreduceSumI64(buf []int64) error   { return nil }
func (s *single) AllreduceMaxF64(buf []float64) error { return nil }

func (s *single) AlltoallvI64(send []int64, sc, sd []int, recv []int64, rc, rd []int) error {
	return selfBlock(send, sc, sd, recv, rc, rd)
}

func (s *single) AlltoallvBytes(send []byte, sc, sd []int, recv []byte, rc, rd []int) error {
	return selfBlock(send, sc, sd, recv, rc, rd)
}

// IalltoallvF32 completes at once; the returned request's Wait is a no-op.
func (s *single) IalltoallvF32(send []float32, sc, sd []int, recv []float32, rc, rd []int) (Request, error) {
	if err := selfBlock(send, sc, sd, recv, rc, rd); err != nil {
		return nil, err
	}
	return doneRequest{}, nil
}

// IalltoallvBytes completes at once; the returned request's Wait is a no-op.
func (s *single) IalltoallvBytes(send []byte, sc, sd []int, recv []byte, rc, rd []int) (Request, error) {
	if err := selfBlock(send, sc, sd, recv, rc, rd); err != nil {
		return nil, err
	}
	return doneRequest{}, nil
}

// Split returns a new one-rank communicator (nil for a negative color).
func (s *single) Split(color, key int) (Comm, error) {
	if color < 0 {
		return nil, nil
	}
	return Single(), nil
}

// SplitShared returns a new one-rank communicator.
func (s *single) SplitShared() (Comm, error) { return Single(), nil }

type doneRequest struct{}

func (doneRequest) Wait() error { return nil }

// selfBlock copies the one block of a size-1 all-to-all.
func selfBlock[T any](send []T, sc, sd []int, recv []T, rc, rd []int) error {
	if err := checkLayout("send", len(send), sc, sd, 1); err != nil {
		return err
	}
	if err := checkLayout("recv", len(recv), rc, rd, 1); err != nil {
		return err
	}
	if sc[0] != rc[0] {
		return fmt.Errorf("comm: alltoallv: rank 0 sends %d elements to itself but expects %d", sc[0], rc[0])
	}
	copy(recv[rd[0]:rd[0]+rc[0]], send[sd[0]:sd[0]+sc[0]])
	return nil
}

// checkLayout validates one side of an all-to-all: size counts and
// displacements, every block inside a buffer of n elements.
func checkLayout(what string, n int, counts, displs []int, size int) error {
	if len(counts) != size || len(displs) != size {
		return fmt.Errorf("comm: alltoallv: %s counts/displs have %d/%d entries, want %d", what, len(counts), len(displs), size)
	}
	for q := range counts {
		if counts[q] < 0 || displs[q] < 0 || displs[q]+counts[q] > n {
			return fmt.Errorf("comm: alltoallv: %s block %d [%d,+%d) outside buffer of %d", what, q, displs[q], counts[q], n)
		}
	}
	return nil
}

func checkRoot(root, size int) error {
	if root < 0 || root >= size {
		return fmt.Errorf("comm: root %d outside [0,%d)", root, size)
	}
	return nil
}

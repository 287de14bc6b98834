package measure

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/supergcn/supergcn/perfmodel"
)

// Stepper keeps a measuring copy in step with the other copies: before
// each timed pass it tells the parent it is ready and waits until every
// copy is. So the copies time the same pass at once, as the ranks of a node
// run the same phase at once in train (every exchange lines them up). Out
// of step, a copy timing a memory-bound pass shares the node with copies in
// other passes, and the shared window finds free cores (without the
// lockstep: factors of 0.76 and 0.83 with 16 one-thread copies on 16
// cores, below the 1 that full cores allow). A nil Stepper, or one whose
// parent stopped stepping, does not wait.
type Stepper struct {
	ready, next *os.File
}

// Worker descriptors: a copy started by Copies finds its ends of the
// lockstep pipes at these file descriptors.
const (
	readyFD = 3
	nextFD  = 4
)

// WorkerStepper is the Stepper of a copy that Copies started (its pipes on
// file descriptors 3 and 4).
func WorkerStepper() *Stepper {
	return &Stepper{ready: os.NewFile(readyFD, "lockstep-ready"), next: os.NewFile(nextFD, "lockstep-go")}
}

// Sync waits until every copy is ready.
func (s *Stepper) Sync() {
	if s == nil || s.ready == nil {
		return
	}
	b := []byte{1}
	if _, err := s.ready.Write(b); err == nil {
		if _, err = io.ReadFull(s.next, b); err == nil {
			return
		}
	}
	s.ready, s.next = nil, nil // a copy ended early: go on alone
}

// timeStep is Time with the copies in step: each run starts with every copy.
func (s *Stepper) timeStep(fn func(), reps int) float64 {
	ms, _ := Time(s.Sync, fn, reps)
	return ms
}

// stepCopies is the parent's side of the copies' steppers: each round it
// reads a byte from every ready pipe, then writes one to every next pipe.
// It returns when a ready pipe ends (its copy exited: the copies end
// together, or one failed) and closes the next pipes, so that copies still
// waiting go on alone.
func stepCopies(ready, next []*os.File) {
	defer func() {
		for _, f := range next {
			f.Close()
		}
	}()
	b := []byte{1}
	for {
		for _, f := range ready {
			if _, err := io.ReadFull(f, b); err != nil {
				return
			}
		}
		for _, f := range next {
			if _, err := f.Write(b); err != nil {
				return
			}
		}
	}
}

// Copies runs copies measuring processes at once, kept in step, and
// returns the rates each printed. worker(i) is copy i's command: a process
// that measures with WorkerStepper (Rates) and writes the rates as one JSON
// object to its standard output; Copies sets its output and its lockstep
// pipes.
func Copies(copies int, worker func(i int) *exec.Cmd) ([]perfmodel.Rates, error) {
	type res struct {
		out, err bytes.Buffer
		cmd      *exec.Cmd
	}
	rs := make([]*res, copies)
	// each copy writes to ready[i] and reads next[i]; this process keeps
	// the other ends
	ready, next := make([]*os.File, 0, copies), make([]*os.File, 0, copies)
	defer func() {
		for _, f := range slices.Concat(ready, next) {
			f.Close()
		}
	}()
	for i := range rs {
		r := &res{cmd: worker(i)}
		readyR, readyW, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("lockstep pipe: %w", err)
		}
		nextR, nextW, err := os.Pipe()
		if err != nil {
			readyR.Close()
			readyW.Close()
			return nil, fmt.Errorf("lockstep pipe: %w", err)
		}
		ready, next = append(ready, readyR), append(next, nextW)
		r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.err
		r.cmd.ExtraFiles = []*os.File{readyW, nextR} // fds readyFD and nextFD
		err = r.cmd.Start()
		readyW.Close() // the copy's ends: an ended copy closes its ready pipe
		nextR.Close()
		if err != nil {
			for _, s := range rs[:i] {
				s.cmd.Process.Kill()
				s.cmd.Wait()
			}
			return nil, fmt.Errorf("starting a measuring copy: %w", err)
		}
		rs[i] = r
	}
	stepped := make(chan struct{})
	go func() {
		defer close(stepped)
		stepCopies(ready, next)
	}()
	defer func() { <-stepped }()
	var failed error
	for _, r := range rs {
		if err := r.cmd.Wait(); err != nil && failed == nil {
			failed = fmt.Errorf("measuring copy: %v: %s", err, strings.TrimSpace(r.err.String()))
		}
	}
	if failed != nil {
		return nil, failed
	}
	out := make([]perfmodel.Rates, copies)
	for i, r := range rs {
		if err := json.Unmarshal(r.out.Bytes(), &out[i]); err != nil {
			return nil, fmt.Errorf("measuring copy's output: %w", err)
		}
	}
	return out, nil
}

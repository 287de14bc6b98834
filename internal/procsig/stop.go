package procsig

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/supergcn/supergcn/internal/container"
)

// Stopper turns SIGTERM and SIGUSR1 (and, once armed, a deadline) into a
// stop request that a long computation polls (Requested). A second signal
// ends the process at once; any other signal goes to other. Its lines go
// to w (nil: none, as for an MPI rank: the launcher forwards a user's
// signal to every rank, and MPI_Abort, after another rank failed with its
// own message, signals the rest).
type Stopper struct {
	stop  atomic.Bool
	w     io.Writer
	other func(os.Signal)
	prev  func(os.Signal)
	timer *time.Timer
}

// NewStopper makes a Stopper the handler of the stop signals.
func NewStopper(w io.Writer, other func(os.Signal)) *Stopper {
	st := &Stopper{w: w, other: other}
	st.prev = Handle(st.signal)
	return st
}

func (st *Stopper) signal(s os.Signal) {
	if s != syscall.SIGTERM && s != syscall.SIGUSR1 {
		st.other(s)
	}
	if st.stop.Swap(true) {
		st.say("supergcn: second signal (%v): exiting now\n", s)
		os.Exit(Status(s))
	}
	st.say("supergcn: %v: stopping after this epoch with a checkpoint (a second signal exits at once)\n", s)
}

func (st *Stopper) say(format string, a ...any) {
	if st.w != nil {
		fmt.Fprintf(st.w, format, a...)
	}
}

// After requests the stop d from now (none for d ≤ 0), writing line to
// stderr then unless a stop came first.
func (st *Stopper) After(d time.Duration, line string) {
	if d <= 0 {
		return
	}
	st.timer = time.AfterFunc(d, func() {
		if !st.stop.Swap(true) {
			fmt.Fprintln(os.Stderr, line)
		}
	})
}

// Requested reports whether a stop was requested.
func (st *Stopper) Requested() bool { return st.stop.Load() }

// Release gives the signals back to the handler before and stops the timer.
func (st *Stopper) Release() {
	Handle(st.prev)
	if st.timer != nil {
		st.timer.Stop()
	}
}

// RemoveTempsOnSignal makes the stop signals end a command that writes
// outputs (files through container.WriteFile, directories through a
// DIR.tmp-* renamed when complete) after removing the temporaries this
// process made for them, so a stopped command leaves neither a
// half-written output nor a stray .tmp; its line goes to w (nil: none, as
// under an MPI launcher, which signals every rank when one fails, and that
// rank has said why).
//
// The returned commit marks the outputs complete: a signal after it ends
// the command with status 0 (what is left is only its summary), so a
// stopped command never leaves an output behind a non-zero status.
func RemoveTempsOnSignal(w io.Writer, outputs ...string) (commit func()) {
	start := time.Now()
	var done, once atomic.Bool
	Handle(func(s os.Signal) {
		if done.Load() || completeSince(outputs, start) {
			os.Exit(0)
		}
		if once.Swap(true) {
			return // the first one is removing the temporaries
		}
		for _, out := range outputs {
			if out != "" {
				container.RemoveTemps(out, start)
			}
		}
		if w != nil {
			fmt.Fprintf(w, "supergcn: %v: stopped; temporary files removed\n", s)
		}
		os.Exit(Status(s))
	})
	return func() { done.Store(true) }
}

// completeSince reports whether every non-empty output exists, renamed
// into place since start: another rank of the job completed it (outputs
// appear only by rename), so the signal comes after the work.
func completeSince(outputs []string, start time.Time) bool {
	any := false
	for _, out := range outputs {
		if out == "" {
			continue
		}
		st, err := os.Stat(out)
		if err != nil || st.ModTime().Before(start) {
			return false
		}
		any = true
	}
	return any
}

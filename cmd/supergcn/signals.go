package main

import (
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/internal/procsig"
)

// exitStopped is the exit status of a training that stopped on SIGTERM,
// SIGUSR1 or --stop-after before its last epoch, after writing its
// checkpoint: job scripts requeue or resubmit on it (75 is EX_TEMPFAIL of
// sysexits.h, "try again later").
const exitStopped = 75

// stopper turns SIGTERM and SIGUSR1 (and, once armed, the end of
// --stop-after) into a stop request that training polls once per epoch; it
// is set first in train, before the flags are read, so that a signal from
// the start on stops the run after its first epoch with a checkpoint. A
// second signal ends the process at once, and so do SIGINT and SIGHUP.
// With quiet (an MPI rank) the first signal prints nothing: the launcher
// forwards a user's signal to every rank, and MPI_Abort, after another rank
// failed with its own message, signals the rest; rank 0 reports the agreed
// stop.
type stopper struct {
	stop  atomic.Bool
	quiet bool
	prev  func(os.Signal)
	timer *time.Timer
}

func newStopper(quiet bool) *stopper {
	st := &stopper{quiet: quiet}
	st.prev = procsig.Handle(st.signal)
	return st
}

func (st *stopper) signal(s os.Signal) {
	if s != syscall.SIGTERM && s != syscall.SIGUSR1 {
		exitOnSignal(s)
	}
	if st.stop.Swap(true) {
		if !st.quiet {
			fmt.Fprintf(os.Stderr, "supergcn: second signal (%v): exiting now\n", s)
		}
		os.Exit(procsig.Status(s))
	}
	if !st.quiet {
		fmt.Fprintf(os.Stderr, "supergcn: %v: stopping after this epoch with a checkpoint (a second signal exits at once)\n", s)
	}
}

// after arms the --stop-after timer (none for d ≤ 0).
func (st *stopper) after(d time.Duration) {
	if d <= 0 {
		return
	}
	st.timer = time.AfterFunc(d, func() {
		if !st.stop.Swap(true) {
			fmt.Fprintf(os.Stderr, "supergcn: --stop-after %v reached: stopping after this epoch\n", d)
		}
	})
}

func (st *stopper) requested() bool { return st.stop.Load() }

// release gives the signals back to the handler before and stops the timer.
func (st *stopper) release() {
	procsig.Handle(st.prev)
	if st.timer != nil {
		st.timer.Stop()
	}
}

// exitOnSignal is the stop signals' outcome outside training and the
// output-writing commands: the process ends at once, status 128 + the
// signal's number, having written nothing more. Under an MPI launcher it
// prints nothing (the launcher signals every rank when one fails).
func exitOnSignal(s os.Signal) {
	if !launchedByMPI() {
		fmt.Fprintf(os.Stderr, "supergcn: %v: stopped\n", s)
	}
	os.Exit(procsig.Status(s))
}

// removeTempsOnSignal makes SIGTERM, SIGINT, SIGHUP and SIGUSR1 end a command that
// writes outputs (files through container.WriteFile, directories through
// a DIR.tmp-* renamed when complete) after removing the temporaries this
// process made for them, so a stopped convert, gen or partition leaves
// neither a half-written output nor a stray .tmp. Under an MPI launcher it
// prints nothing: the launcher signals every rank when one fails, and that
// rank has said why.
//
// The returned commit marks the outputs complete: a signal after it ends
// the command with status 0 (what is left is only its summary), so a
// stopped command never leaves an output behind a non-zero status.
func removeTempsOnSignal(outputs ...string) (commit func()) {
	start := time.Now()
	var done, once atomic.Bool
	procsig.Handle(func(s os.Signal) {
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
		if !launchedByMPI() { // mpirun signals the other ranks when one fails: no line from them
			fmt.Fprintf(os.Stderr, "supergcn: %v: stopped; temporary files removed\n", s)
		}
		os.Exit(procsig.Status(s))
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

package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/supergcn/supergcn/internal/procsig"
)

// exitStopped is the exit status of a training that stopped on SIGTERM,
// SIGUSR1 or --stop-after before its last epoch, after writing its
// checkpoint: job scripts requeue or resubmit on it (75 is EX_TEMPFAIL of
// sysexits.h, "try again later").
const exitStopped = 75

// stopper is train's procsig.Stopper, set first in train, before the flags
// are read, so that a signal from the start on stops the run after its
// first epoch with a checkpoint; SIGINT and SIGHUP end the process at once.
// With quiet (an MPI rank) the first signal prints nothing; rank 0 reports
// the agreed stop.
type stopper struct{ *procsig.Stopper }

func newStopper(quiet bool) *stopper {
	return &stopper{procsig.NewStopper(stderrUnless(quiet), exitOnSignal)}
}

// after arms --stop-after (none for d ≤ 0).
func (st *stopper) after(d time.Duration) {
	st.After(d, fmt.Sprintf("supergcn: --stop-after %v reached: stopping after this epoch", d))
}

func (st *stopper) requested() bool { return st.Requested() }

func (st *stopper) release() { st.Release() }

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

// removeTempsOnSignal is procsig.RemoveTempsOnSignal with its line on
// stderr, none under an MPI launcher.
func removeTempsOnSignal(outputs ...string) (commit func()) {
	return procsig.RemoveTempsOnSignal(stderrUnless(launchedByMPI()), outputs...)
}

// stderrUnless is stderr, or nil when quiet.
func stderrUnless(quiet bool) io.Writer {
	if quiet {
		return nil
	}
	return os.Stderr
}

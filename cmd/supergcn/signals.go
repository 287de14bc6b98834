package main

import (
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/supergcn/supergcn/internal/container"
)

// exitStopped is the exit status of a training that stopped on SIGTERM,
// SIGUSR1 or --stop-after before its last epoch, after writing its
// checkpoint: job scripts requeue or resubmit on it (75 is EX_TEMPFAIL of
// sysexits.h, "try again later").
const exitStopped = 75

// stopRequests turns SIGTERM and SIGUSR1 (and, with after > 0, the end of
// that duration) into a stop request that training polls once per epoch.
// A second signal ends the process at once. With quiet (an MPI rank) the
// first signal prints nothing: the launcher forwards a user's signal to
// every rank, and MPI_Abort, after another rank failed with its own
// message, signals the rest; rank 0 reports the agreed stop. The returned
// func releases the signals and the timer.
func stopRequests(after time.Duration, quiet bool) (requested func() bool, release func()) {
	var stop atomic.Bool
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGUSR1)
	done := make(chan struct{})
	var timer <-chan time.Time
	t := time.NewTimer(after)
	if after > 0 {
		timer = t.C
	} else {
		t.Stop()
	}
	go func() {
		for {
			select {
			case <-done:
				return
			case <-timer:
				timer = nil
				if !stop.Swap(true) {
					fmt.Fprintf(os.Stderr, "supergcn: --stop-after %v reached: stopping after this epoch\n", after)
				}
			case s := <-sigs:
				if stop.Swap(true) {
					if !quiet {
						fmt.Fprintf(os.Stderr, "supergcn: second signal (%v): exiting now\n", s)
					}
					signal.Stop(sigs)
					os.Exit(128 + int(s.(syscall.Signal)))
				}
				if !quiet {
					fmt.Fprintf(os.Stderr, "supergcn: %v: stopping after this epoch with a checkpoint (a second signal exits at once)\n", s)
				}
			}
		}
	}()
	return stop.Load, func() {
		signal.Stop(sigs)
		t.Stop()
		close(done)
	}
}

// removeTempsOnSignal makes SIGTERM, SIGINT and SIGHUP end a command that
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
	var done atomic.Bool
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		s := <-sigs
		if done.Load() {
			os.Exit(0)
		}
		for _, out := range outputs {
			if out != "" {
				container.RemoveTemps(out, start)
			}
		}
		if !launchedByMPI() { // mpirun signals the other ranks when one fails: no line from them
			fmt.Fprintf(os.Stderr, "supergcn: %v: stopped; temporary files removed\n", s)
		}
		os.Exit(128 + int(s.(syscall.Signal)))
	}()
	return func() { done.Store(true) }
}

package main

import (
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
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

// Package procsig owns the signals that stop a run — SIGTERM, SIGINT,
// SIGHUP and SIGUSR1, what a user, an MPI launcher or a batch system sends
// — from the process's first instruction to its exit, so that one landing
// at any moment (start-up, the OpenBLAS restart, loading, training) gets
// the command's documented outcome instead of the default action.
//
// How: a start-up hook in the executable's .preinit_array, which the
// dynamic loader runs before any library's constructor (OpenBLAS's thread
// server, MPI), installs a handler that records them, and holds the
// handlers the Go runtime installs at its start (sigaction is interposed:
// with cgo the runtime installs them through the C library) until Start,
// which installs them, asks os/signal for the signals and hands everything
// recorded, and all that follows, to the handler the command sets. Exec
// replaces the process with those signals blocked on the exec'ing thread
// (and passed to it from the others), so that one landing during the exec
// is pending in the new process, which starts the same way.
//
// What no process can catch: a signal that lands while the dynamic loader
// is still mapping the shared libraries (the first milliseconds after the
// exec, before the hook runs) ends the process by the signal's default
// action (killed by it: shell status 128 + its number), having written
// nothing.
//
// The signal state is process-wide by nature (like os/signal's): one hub,
// one handler at a time.
package procsig

import (
	"errors"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Stop lists the signals procsig handles.
var Stop = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGUSR1}

// ErrSignalled is Exec's answer when a stop signal had already arrived:
// the process goes on as it is, and Start hands the signal to its handler.
var ErrSignalled = errors.New("procsig: a stop signal arrived before the exec")

// hub queues the signals until a handler is set, then calls it.
type hub struct {
	mu      sync.Mutex
	started bool
	held    int // Hold calls not released
	handler func(os.Signal)
	queue   []os.Signal
}

var the = &hub{}

// Start makes the Go runtime deliver the stop signals to this package and
// sets h as their handler; every signal that arrived before (recorded since
// the process started) goes to h first, in the order recorded. Later calls
// only set the handler (see Handle).
func Start(h func(os.Signal)) {
	the.mu.Lock()
	first := !the.started
	the.started = true
	the.mu.Unlock()
	if first {
		ch := make(chan os.Signal, 8)
		signal.Notify(ch, Stop...)
		for _, s := range takeOver() {
			the.deliver(s)
		}
		go func() {
			for s := range ch {
				the.deliver(s)
			}
		}()
	}
	Handle(h)
}

// Handle sets h as the handler of the stop signals and returns the one it
// replaces (nil before any). Signals queued while none was set go to h at
// once (after Hold's release, while held); with h nil they stay queued. h
// runs on the package's own goroutine (or the caller's, for the queued
// ones) and must not block.
func Handle(h func(os.Signal)) (previous func(os.Signal)) {
	the.mu.Lock()
	previous, the.handler = the.handler, h
	the.mu.Unlock()
	the.flush()
	return previous
}

// Hold queues the stop signals until release is called, for a moment that
// must not be cut short (an MPI rank's start-up, after which the launcher
// can tear the job down cleanly); release hands the queued ones to the
// handler.
func Hold() (release func()) {
	the.mu.Lock()
	the.held++
	the.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			the.mu.Lock()
			the.held--
			the.mu.Unlock()
			the.flush()
		})
	}
}

// flush hands the queue to the handler when there is one and nothing holds.
func (hb *hub) flush() {
	hb.mu.Lock()
	h, queued := hb.handler, hb.queue
	if h == nil || hb.held > 0 {
		hb.mu.Unlock()
		return
	}
	hb.queue = nil
	hb.mu.Unlock()
	for _, s := range queued {
		h(s)
	}
}

func (hb *hub) isStarted() bool {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	return hb.started
}

// deliver hands s to the handler, or queues it while none is set or held.
func (hb *hub) deliver(s os.Signal) {
	hb.mu.Lock()
	h := hb.handler
	if h == nil || hb.held > 0 {
		hb.queue = append(hb.queue, s)
		h = nil
	}
	hb.mu.Unlock()
	if h != nil {
		h(s)
	}
}

// Status is the exit status of a process ended by s, as a shell reports a
// process killed by it: 128 + the signal's number.
func Status(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 1
}

var errStarted = errors.New("procsig: Exec after Start")

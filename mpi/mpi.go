package mpi

// #include <stdlib.h>
// #include "binding.h"
import "C"

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
)

// ThreadLevel is an MPI thread-support level, ordered like MPI's.
type ThreadLevel int

// The MPI thread-support levels.
const (
	ThreadSingle ThreadLevel = iota
	ThreadFunneled
	ThreadSerialized
	ThreadMultiple
)

func (l ThreadLevel) String() string {
	switch l {
	case ThreadSingle:
		return "MPI_THREAD_SINGLE"
	case ThreadFunneled:
		return "MPI_THREAD_FUNNELED"
	case ThreadSerialized:
		return "MPI_THREAD_SERIALIZED"
	case ThreadMultiple:
		return "MPI_THREAD_MULTIPLE"
	}
	return fmt.Sprintf("ThreadLevel(%d)", int(l))
}

// mu serialises every MPI call of the process (MPI_THREAD_SERIALIZED); see
// the package doc. Together with MPI's own state it is the only package state.
var mu sync.Mutex

// Error is a failed MPI call.
type Error struct {
	Call string // the MPI function, e.g. "MPI_Alltoallv"
	Code int    // MPI's error code
	Msg  string // MPI_Error_string's text
}

func (e *Error) Error() string { return "mpi: " + e.Call + ": " + e.Msg }

// errNotActive is returned by calls made before InitThread or after Finalize.
var errNotActive = errors.New("MPI is not initialised (or already finalised)")

// mpiError converts an MPI return code; call it with mu held.
func mpiError(call string, rc C.int) error {
	if rc == 0 { // MPI_SUCCESS is 0 in every MPI
		return nil
	}
	var buf [512]C.char
	C.sg_error_string(rc, &buf[0], C.int(len(buf)))
	return &Error{Call: call, Code: int(rc), Msg: C.GoString(&buf[0])}
}

// locked runs f, an MPI call named call, with mu held, once MPI is active.
func locked(call string, f func() C.int) error {
	return lockedNamed(call, func() (string, C.int) { return call, f() })
}

// lockedNamed is locked for an f that makes several MPI calls and returns
// the name of the one that failed.
func lockedNamed(call string, f func() (string, C.int)) error {
	mu.Lock()
	defer mu.Unlock()
	if C.sg_state() != C.SG_STATE_ACTIVE {
		return fmt.Errorf("mpi: %s: %w", call, errNotActive)
	}
	name, rc := f()
	return mpiError(name, rc)
}

// InitThread initialises MPI (MPI_Init_thread) and returns the thread level
// the library provides. A required level below ThreadSerialized is raised to
// it (see the package doc); if the library provides less, MPI is initialised
// but InitThread returns an error, and Finalize must still be called. The
// calling goroutine stays locked to its OS thread until Finalize, which must
// be called from the same goroutine.
func InitThread(required ThreadLevel) (provided ThreadLevel, err error) {
	if required < ThreadSerialized {
		required = ThreadSerialized
	}
	if required > ThreadMultiple {
		return ThreadSingle, fmt.Errorf("mpi: InitThread: unknown thread level %d", int(required))
	}
	mu.Lock()
	defer mu.Unlock()
	if C.sg_initialized() != 0 {
		return ThreadSingle, errors.New("mpi: InitThread: MPI is already initialised")
	}
	runtime.LockOSThread()
	var p C.int
	if err := mpiError("MPI_Init_thread", C.sg_init_thread(C.int(required), &p)); err != nil {
		runtime.UnlockOSThread()
		return ThreadSingle, err
	}
	provided = ThreadLevel(p)
	if provided < ThreadSerialized {
		return provided, fmt.Errorf("mpi: InitThread: the MPI library provides only %v, at least %v is needed",
			provided, ThreadSerialized)
	}
	return provided, nil
}

// Finalize ends MPI (MPI_Finalize). It must be called from the goroutine
// that called InitThread, after every Request has completed.
func Finalize() error {
	mu.Lock()
	defer mu.Unlock()
	if C.sg_state() != C.SG_STATE_ACTIVE {
		return fmt.Errorf("mpi: MPI_Finalize: %w", errNotActive)
	}
	rc := C.sg_finalize()
	if rc == C.SG_ERR_THREAD {
		return errors.New("mpi: Finalize: called from a goroutine other than the one that called InitThread")
	}
	runtime.UnlockOSThread()
	return mpiError("MPI_Finalize", rc)
}

// Initialized reports whether MPI has been initialised (MPI_Initialized),
// by this package or by anyone else.
func Initialized() bool { return C.sg_initialized() != 0 }

// Finalized reports whether MPI has been finalised (MPI_Finalized).
func Finalized() bool { return C.sg_finalized() != 0 }

// Wtime is MPI_Wtime: wall-clock seconds since an arbitrary origin. It
// returns 0 when MPI is not active. Like every call it takes the package
// mutex, so it waits while another goroutine is blocked inside MPI.
func Wtime() float64 {
	var t C.double
	if locked("MPI_Wtime", func() C.int { t = C.sg_wtime(); return 0 }) != nil {
		return 0
	}
	return float64(t)
}

// LibraryVersion is MPI_Get_library_version's text (callable at any time).
func LibraryVersion() string {
	var buf [8192]C.char
	C.sg_library_version(&buf[0], C.int(len(buf)))
	return C.GoString(&buf[0])
}

// Serialize runs f while holding the mutex that serialises this package's
// MPI calls. Other cgo code that calls MPI directly (with a communicator
// recovered from Comm.Fortran) must do so inside Serialize. f must not call
// this package (that would deadlock).
func Serialize(f func() error) error {
	mu.Lock()
	defer mu.Unlock()
	if C.sg_state() != C.SG_STATE_ACTIVE {
		return fmt.Errorf("mpi: Serialize: %w", errNotActive)
	}
	return f()
}

// abort is Comm.Abort's body: MPI_Abort without the mutex, then os.Exit
// should MPI return (or not be active).
func abort(f C.MPI_Fint, useWorld bool, code int) {
	if C.sg_state() == C.SG_STATE_ACTIVE {
		w := C.int(0)
		if useWorld {
			w = 1
		}
		C.sg_abort(f, w, C.int(code))
	}
	os.Exit(code)
}

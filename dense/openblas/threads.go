package openblas

import (
	"strconv"
	"strings"
)

// ThreadsEnv is the variable OpenBLAS reads, once, in its library
// constructor (before any Go code runs) for the size of its thread server;
// it wins over GOTO_NUM_THREADS and OMP_NUM_THREADS there.
const ThreadsEnv = "OPENBLAS_NUM_THREADS"

// Parallel modes of openblas_get_parallel.
const (
	parallelNone    = 0 // sequential build
	parallelPthread = 1 // OpenBLAS's own pthreads server, started at load
	parallelOpenMP  = 2 // the OpenMP runtime's threads, started on first use
)

// restartThreads reports whether a process should restart itself with
// ThreadsEnv=1: this OpenBLAS's pthreads server (parallel, from
// openblas_get_parallel) was started at load with loaded > 1 threads (one a
// core by default), each holding a buffer of address space (BUFFER_SIZE,
// 128 MiB on x86-64 and arm64) and a stack, while supergcn calls OpenBLAS
// single-threaded from its own goroutines and never wakes them. env is
// ThreadsEnv's value; once it says 1, the server starts with no threads,
// so a process restarts at most once.
func restartThreads(parallel, loaded int, env string) bool {
	return parallel == parallelPthread && loaded > 1 && strings.TrimSpace(env) != "1"
}

// threadsNote says what OpenBLAS's thread server holds in a process whose
// library constructor started it with loaded threads (parallel as
// restartThreads).
func threadsNote(parallel, loaded int) string {
	switch {
	case parallel == parallelOpenMP:
		return "OpenMP build: OpenBLAS runs single-threaded, the OpenMP runtime starts no threads for it"
	case parallel != parallelPthread:
		return "sequential build: no thread server"
	case loaded <= 1:
		return "thread server started with one thread (" + ThreadsEnv + "=1): no idle threads or buffers"
	}
	return "thread server started with " + strconv.Itoa(loaded) + " threads at load (idle: supergcn calls OpenBLAS single-threaded)"
}

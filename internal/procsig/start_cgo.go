//go:build cgo && linux

package procsig

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

// The stop signals, recorded by sgcn_record until Start. None is blocked:
// a blocked signal would stay blocked in the Go runtime's threads and in
// every process they start (os/exec restores the start-up mask).
#define SGCN_NSIG 4
static const int sgcn_recorded[SGCN_NSIG] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1};

static int sgcn_slot(int sig) {
	for (int i = 0; i < SGCN_NSIG; i++)
		if (sgcn_recorded[i] == sig)
			return i;
	return -1;
}

// The signals recorded before the Go side took over, in arrival order.
#define SGCN_RING 16
static volatile sig_atomic_t sgcn_ring[SGCN_RING];
static int sgcn_count; // atomic

// While Exec runs: the thread that calls execve, which has the stop
// signals blocked; a signal taken on another thread is passed to it there,
// so that it is pending across the exec.
static volatile pid_t sgcn_exec_tid;

static void sgcn_record(int sig) {
	pid_t t = sgcn_exec_tid;
	if (t != 0 && (pid_t)syscall(SYS_gettid) != t) {
		syscall(SYS_tgkill, getpid(), t, sig);
		return;
	}
	int i = __atomic_fetch_add(&sgcn_count, 1, __ATOMIC_SEQ_CST);
	if (i < SGCN_RING)
		sgcn_ring[i] = sig;
}

// From the start-up hook until Start, the stop signals are held: the
// process's handler is sgcn_record, and what anyone else (the Go runtime
// installing its handlers) sets or reads is the virtual action in
// sgcn_virtual, installed for real by sgcn_release. sigaction is
// interposed for that: the Go runtime installs its handlers through the C
// library's sigaction when cgo is linked.
static int sgcn_holding; // atomic
static struct sigaction sgcn_virtual[SGCN_NSIG];
static int (*sgcn_real)(int, const struct sigaction *, struct sigaction *);

static int sgcn_sigaction_real(int sig, const struct sigaction *act, struct sigaction *old) {
	if (!sgcn_real)
		sgcn_real = (int (*)(int, const struct sigaction *, struct sigaction *))dlsym(RTLD_NEXT, "sigaction");
	return sgcn_real(sig, act, old);
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
	int k = sgcn_slot(sig);
	if (k < 0 || !__atomic_load_n(&sgcn_holding, __ATOMIC_SEQ_CST))
		return sgcn_sigaction_real(sig, act, old);
	if (old)
		*old = sgcn_virtual[k];
	if (act)
		sgcn_virtual[k] = *act;
	return 0;
}

static void sgcn_mask(int how) {
	sigset_t set;
	sigemptyset(&set);
	for (int i = 0; i < SGCN_NSIG; i++)
		sigaddset(&set, sgcn_recorded[i]);
	pthread_sigmask(how, &set, NULL);
}

// sgcn_preinit runs before any library constructor: the stop signals held
// (unless the launcher left them ignored), and those left pending across
// an exec (see Exec), blocked until now, taken.
static void sgcn_preinit(int argc, char **argv, char **envp) {
	(void)argc; (void)argv; (void)envp;
	struct sigaction rec;
	memset(&rec, 0, sizeof rec);
	rec.sa_handler = sgcn_record;
	rec.sa_flags = SA_RESTART | SA_ONSTACK;
	sigfillset(&rec.sa_mask);
	for (int i = 0; i < SGCN_NSIG; i++) {
		sgcn_sigaction_real(sgcn_recorded[i], NULL, &sgcn_virtual[i]);
		if (sgcn_virtual[i].sa_handler != SIG_IGN)
			sgcn_sigaction_real(sgcn_recorded[i], &rec, NULL);
	}
	__atomic_store_n(&sgcn_holding, 1, __ATOMIC_SEQ_CST);
	sgcn_mask(SIG_UNBLOCK);
}
__attribute__((section(".preinit_array"), used)) static void (*sgcn_preinit_entry)(int, char **, char **) = sgcn_preinit;

// sgcn_release installs the held actions (the Go runtime's handlers) and
// returns how many signals were recorded (the first SGCN_RING in sgcn_ring).
static int sgcn_release(void) {
	if (__atomic_exchange_n(&sgcn_holding, 0, __ATOMIC_SEQ_CST))
		for (int i = 0; i < SGCN_NSIG; i++)
			sgcn_sigaction_real(sgcn_recorded[i], &sgcn_virtual[i], NULL);
	return __atomic_load_n(&sgcn_count, __ATOMIC_SEQ_CST);
}

static int sgcn_ring_at(int i) { return sgcn_ring[i]; }

// sgcn_exec_begin blocks the stop signals on the calling thread and routes
// those taken elsewhere to it; it returns the count recorded so far.
static int sgcn_exec_begin(void) {
	sgcn_mask(SIG_BLOCK);
	sgcn_exec_tid = (pid_t)syscall(SYS_gettid);
	return __atomic_load_n(&sgcn_count, __ATOMIC_SEQ_CST);
}

// sgcn_exec_end undoes sgcn_exec_begin after a failed exec: the signals
// passed to this thread are recorded when it unblocks them.
static void sgcn_exec_end(void) {
	sgcn_exec_tid = 0;
	sgcn_mask(SIG_UNBLOCK);
}
*/
import "C"

import (
	"os"
	"runtime"
	"syscall"
)

// takeOver gives the signals back to the Go runtime (os/signal, which
// Start has asked for them) and returns those recorded until then.
func takeOver() []os.Signal {
	n := int(C.sgcn_release())
	if n > int(C.SGCN_RING) {
		n = int(C.SGCN_RING)
	}
	out := make([]os.Signal, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, syscall.Signal(C.sgcn_ring_at(C.int(i))))
	}
	return out
}

// Exec replaces the process by path with argv and env (execve) — unless a
// stop signal has already arrived: then it returns ErrSignalled, and the
// process goes on and hands it to Start's handler. A stop signal landing
// during the exec stays pending and reaches the new process's start. Call
// it before Start; after, it returns ErrSignalled's sibling error at once.
func Exec(path string, argv, env []string) error {
	if the.isStarted() {
		return errStarted
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if C.sgcn_exec_begin() > 0 {
		C.sgcn_exec_end()
		return ErrSignalled
	}
	err := syscall.Exec(path, argv, env)
	C.sgcn_exec_end()
	return err
}

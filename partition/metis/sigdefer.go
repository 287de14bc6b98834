//go:build cgo

package metis

/*
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

// METIS (its GKlib) installs, for the length of every call, a SIGTERM and a
// SIGABRT handler with signal() that longjmps back into the call: its own
// error path (gk_errexit raises the signal on the thread running METIS).
// A SIGTERM from outside (kill, a batch system's time limit) lands on any
// thread of the process, and the longjmp onto another thread's stack
// crashes it; the handlers restored afterwards with signal() have lost the
// flags the Go runtime's need. So, while METIS runs:
//  - the handlers METIS asks for are recorded per thread, not installed
//    (__sysv_signal, what signal() is in glibc, is interposed here);
//  - the process's handler is sgcn_sig_region: a signal raised by METIS on
//    its own thread goes to METIS's handler (its error path works as
//    before); one from outside is held back until the call returns, and a
//    second one ends the process at once;
//  - the Go runtime's handlers are restored exactly (sigaction) afterwards.

static __thread int sgcn_in_metis;
static __thread void (*sgcn_gk_handler[2])(int);
static volatile sig_atomic_t sgcn_deferred;
static pthread_mutex_t sgcn_mu = PTHREAD_MUTEX_INITIALIZER;
static int sgcn_depth;
static struct sigaction sgcn_saved[2];
static const int sgcn_sigs[2] = {SIGTERM, SIGABRT};

static int sgcn_slot(int sig) {
	return sig == SIGTERM ? 0 : sig == SIGABRT ? 1 : -1;
}

typedef void (*sgcn_handler)(int);

sgcn_handler __sysv_signal(int sig, sgcn_handler h) {
	int k = sgcn_slot(sig);
	if (sgcn_in_metis && k >= 0) {
		sgcn_handler old = sgcn_gk_handler[k];
		sgcn_gk_handler[k] = h;
		return old;
	}
	static sgcn_handler (*real)(int, sgcn_handler);
	if (!real)
		real = (sgcn_handler (*)(int, sgcn_handler))dlsym(RTLD_NEXT, "__sysv_signal");
	return real ? real(sig, h) : SIG_ERR;
}

static void sgcn_sig_region(int sig, siginfo_t *si, void *ctx) {
	int k = sgcn_slot(sig);
	(void)ctx;
	if (k >= 0 && sgcn_in_metis && si->si_code == SI_TKILL && si->si_pid == getpid() &&
			sgcn_gk_handler[k] != SIG_DFL && sgcn_gk_handler[k] != SIG_IGN && sgcn_gk_handler[k] != SIG_ERR) {
		sgcn_gk_handler[k](sig); // METIS's own error path: longjmp on this thread
		return;
	}
	if (sgcn_deferred) {
		static const char msg[] = "supergcn: second signal during METIS: exiting now\n";
		write(2, msg, sizeof msg - 1);
		_exit(128 + sig);
	}
	sgcn_deferred = sig;
	static const char held[] = "supergcn: signal held until METIS returns (a second one exits at once)\n";
	write(2, held, sizeof held - 1);
}

void sgcn_sig_enter(void) {
	pthread_mutex_lock(&sgcn_mu);
	if (sgcn_depth++ == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = sgcn_sig_region;
		sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
		sigfillset(&sa.sa_mask);
		for (int k = 0; k < 2; k++)
			sigaction(sgcn_sigs[k], &sa, &sgcn_saved[k]);
	}
	pthread_mutex_unlock(&sgcn_mu);
	sgcn_in_metis = 1;
}

// sgcn_sig_leave ends the region and returns the signal held back (0 if
// none) once the last concurrent METIS call has returned.
int sgcn_sig_leave(void) {
	int sig = 0;
	sgcn_in_metis = 0;
	pthread_mutex_lock(&sgcn_mu);
	if (--sgcn_depth == 0) {
		for (int k = 0; k < 2; k++)
			sigaction(sgcn_sigs[k], &sgcn_saved[k], NULL);
		sig = sgcn_deferred;
		sgcn_deferred = 0;
	}
	pthread_mutex_unlock(&sgcn_mu);
	return sig;
}
*/
import "C"

import "syscall"

// redeliver sends a signal held back during a METIS call to this process
// again, now that the Go runtime's handlers are back: it takes its usual
// course (a stop request, or the end of the process) at a safe point.
func redeliver(sig C.int) {
	if sig != 0 {
		syscall.Kill(syscall.Getpid(), syscall.Signal(sig))
	}
}

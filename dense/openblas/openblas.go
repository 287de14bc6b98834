//go:build openblas && cgo

package openblas

/*
#cgo pkg-config: openblas
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <cblas.h>

// sgcn_switch_core re-runs OpenBLAS's run-time core selection (DYNAMIC_ARCH
// builds export gotoblas_dynamic_quit/init; OPENBLAS_CORETYPE, which the
// caller has set, then names the core) when this OpenBLAS has the kernel
// table sym (gotoblas_<CORE>). It returns 0 when a symbol is missing and
// nothing was done. Call it before any BLAS routine runs.
static int sgcn_switch_core(const char *sym) {
	void (*quit)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gotoblas_dynamic_quit");
	void (*init)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gotoblas_dynamic_init");
	if (quit == NULL || init == NULL || dlsym(RTLD_DEFAULT, sym) == NULL) {
		return 0;
	}
	quit();
	init();
	return 1;
}
*/
import "C"

import (
	"os"
	"strings"
	"unsafe"

	"gonum.org/v1/gonum/blas/blas32"
)

// init installs OpenBLAS as the process-wide blas32 implementation, which
// dense.Gemm calls; only the command (cmd/supergcn, under the openblas tag)
// imports this package, so the libraries stay pure Go. blas32 keeps its
// implementation in a package variable and has no other seam.
// OpenBLAS's own threads are switched off: Gemm splits products into
// blocks on its own goroutines (see GemmBlock), and idle OpenBLAS threads
// spin on sched_yield, stealing the cores the aggregation runs on.
//
// It also selects OpenBLAS's core type from the CPU's features (see
// CoreFor) when OpenBLAS's own detection, which goes by CPU model numbers,
// picked a weaker class and the user set no OPENBLAS_CORETYPE: it sets
// OPENBLAS_CORETYPE (and AutoEnv) and re-runs OpenBLAS's selection, before
// any BLAS routine has run. Child processes inherit the variables and start
// with that core directly. Where this OpenBLAS lacks the entry points,
// ReexecEnv tells the command how to restart instead.
//
// It records the thread server OpenBLAS's constructor started (see
// restartThreads) before switching it to one thread.
func init() {
	parallel, loadThreads = int(C.openblas_get_parallel()), int(C.openblas_get_num_threads())
	blas32.Use(Impl{})
	C.openblas_set_num_threads(1)
	switchCore()
}

// parallel and loadThreads are openblas_get_parallel() and the thread
// server's size as the library constructor left them, set once by init.
var parallel, loadThreads int

// switchCore switches OpenBLAS to the core type plan selects, in process;
// it reports whether it did.
func switchCore() bool {
	running := C.GoString(C.openblas_get_corename())
	target, _ := plan(HostFeatures(), os.Getenv(CoreTypeEnv), os.Getenv(AutoEnv), running, dynamicArch())
	if target == "" {
		return false
	}
	sym := C.CString("gotoblas_" + strings.ToUpper(target))
	defer C.free(unsafe.Pointer(sym))
	// os.Setenv also sets the C environment (cgo), which OpenBLAS reads.
	prevType, hadType := os.LookupEnv(CoreTypeEnv)
	prevAuto, hadAuto := os.LookupEnv(AutoEnv)
	os.Setenv(CoreTypeEnv, target)
	os.Setenv(AutoEnv, target+","+running)
	if C.sgcn_switch_core(sym) == 0 {
		restore(CoreTypeEnv, prevType, hadType)
		restore(AutoEnv, prevAuto, hadAuto)
		return false
	}
	return true
}

func restore(key, val string, had bool) {
	if had {
		os.Setenv(key, val)
	} else {
		os.Unsetenv(key)
	}
}

// library names the backend in Impl.Name.
const library = "openblas"

// Info names the BLAS library, its build configuration (version and
// options) and the CPU core kernel set it selected; dense.BLAS reports it.
func (Impl) Info() (name, config, core string) {
	return "OpenBLAS", C.GoString(C.openblas_get_config()), C.GoString(C.openblas_get_corename())
}

// Choice says which core type OpenBLAS runs and why (see ReexecEnv);
// dense.BLASChoice reports it.
func (Impl) Choice() string {
	running := C.GoString(C.openblas_get_corename())
	_, choice := plan(HostFeatures(), os.Getenv(CoreTypeEnv), os.Getenv(AutoEnv), running, dynamicArch())
	if choice == "" {
		choice = "OpenBLAS's own detection; supergcn would restart with " + CoreTypeEnv + " set (see ReexecEnv)"
	}
	return choice
}

// ReexecEnv returns the environment under which the process should
// replace itself (syscall.Exec of its own executable, same arguments), for
// what OpenBLAS reads only once, in its library constructor, before any Go
// code runs:
//
//   - OPENBLAS_CORETYPE, the fallback of the in-process core switch (init)
//     for an OpenBLAS without gotoblas_dynamic_quit/init, so that OpenBLAS
//     runs the core type the CPU's features select (its own detection goes
//     by CPU model numbers, falling back to its slowest kernels on CPUs it
//     does not know); not when OpenBLAS already runs a core of that class,
//     when the user set OPENBLAS_CORETYPE, or after such a restart (the
//     environment then names the core);
//   - OPENBLAS_NUM_THREADS=1 when the pthreads server started with several
//     threads (restartThreads): on a node of 64 cores, 63 idle threads and
//     about 8 GiB of address space a process.
//
// ok is false when neither applies; a process restarts at most once.
func ReexecEnv() (env []string, ok bool) {
	running := C.GoString(C.openblas_get_corename())
	restart, _ := plan(HostFeatures(), os.Getenv(CoreTypeEnv), os.Getenv(AutoEnv), running, dynamicArch())
	threads := restartThreads(parallel, loadThreads, os.Getenv(ThreadsEnv))
	if restart == "" && !threads {
		return nil, false
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		replaced := (restart != "" && (name == CoreTypeEnv || name == AutoEnv)) || (threads && name == ThreadsEnv)
		if !replaced {
			env = append(env, kv)
		}
	}
	if restart != "" {
		env = append(env, CoreTypeEnv+"="+restart, AutoEnv+"="+restart+","+running)
	}
	if threads {
		env = append(env, ThreadsEnv+"=1")
	}
	return env, true
}

// Threads says what OpenBLAS's thread server holds in this process;
// dense.BLASThreads reports it.
func (Impl) Threads() string { return threadsNote(parallel, loadThreads) }

// dynamicArch reports whether this OpenBLAS selects its core at run time.
func dynamicArch() bool {
	return strings.Contains(C.GoString(C.openblas_get_config()), "DYNAMIC_ARCH")
}

// cSgemm is cblas_sgemm on row-major operands, transposed where said.
func cSgemm(transA, transB bool, m, n, k int, alpha float32, a *float32, lda int, b *float32, ldb int, beta float32, c *float32, ldc int) {
	C.cblas_sgemm(C.CblasRowMajor, cblasTrans(transA), cblasTrans(transB),
		C.blasint(m), C.blasint(n), C.blasint(k),
		C.float(alpha), (*C.float)(a), C.blasint(lda),
		(*C.float)(b), C.blasint(ldb),
		C.float(beta), (*C.float)(c), C.blasint(ldc))
}

func cblasTrans(t bool) C.enum_CBLAS_TRANSPOSE {
	if !t {
		return C.CblasNoTrans
	}
	return C.CblasTrans
}

// Package mpitest runs a package's tests under mpirun from "go test".
//
// The pattern: a launcher test (run by go test, outside MPI) calls Run,
// which starts `mpirun -np P <this test binary> -test.run PATTERN` with
// EnvRanks=P in the environment; the tests matching PATTERN call Ranks and
// skip unless it is non-zero, and the package's TestMain initialises MPI
// when it is. mpirun's exit status is the verdict. Run skips the test when
// mpirun is not in PATH (SUPERGCN_MPIRUN names another launcher).
//
// Run adds, unless already set, the Open MPI settings a container needs:
// running as root, oversubscription (more ranks than cores), yielding when
// idle, and no CMA single-copy transport. MPICH ignores them.
package mpitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// EnvRanks is the environment variable that tells a test process it runs
// under MPI, and with how many ranks.
const EnvRanks = "SUPERGCN_MPI_TEST"

// Ranks is the number of ranks the process was started with by Run, or 0
// when it was not.
func Ranks() int {
	n, err := strconv.Atoi(os.Getenv(EnvRanks))
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// defaults are the Open MPI settings Run adds when unset.
var defaults = []string{
	"OMPI_ALLOW_RUN_AS_ROOT=1",
	"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
	"OMPI_MCA_rmaps_base_oversubscribe=1",
	"OMPI_MCA_mpi_yield_when_idle=1",
	"OMPI_MCA_btl_vader_single_copy_mechanism=none",
}

// Launcher returns the mpirun command, skipping t when there is none.
func Launcher(t testing.TB) string {
	name := os.Getenv("SUPERGCN_MPIRUN")
	if name == "" {
		name = "mpirun"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("skipping MPI test: %s not found in PATH", name)
	}
	return path
}

// Launch runs this test binary under `mpirun -np np` with -test.run pattern
// and the extra environment entries env, ending it after timeout (SIGTERM,
// then SIGKILL 10 s later). It returns the combined output and mpirun's
// error (nil for exit status 0); timedOut reports a timeout.
func Launch(t testing.TB, np int, pattern string, timeout time.Duration, env ...string) (out []byte, timedOut bool, err error) {
	mpirun := Launcher(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := []string{"-np", strconv.Itoa(np), os.Args[0], "-test.run", pattern, "-test.count=1",
		"-test.timeout=" + (timeout - 5*time.Second).String()}
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	cmd := exec.CommandContext(ctx, mpirun, args...)
	cmd.Env = os.Environ()
	for _, kv := range defaults {
		if k, _, _ := strings.Cut(kv, "="); os.Getenv(k) == "" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, EnvRanks+"="+strconv.Itoa(np))
	cmd.Env = append(cmd.Env, env...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	err = cmd.Run()
	return buf.Bytes(), errors.Is(ctx.Err(), context.DeadlineExceeded), err
}

// Run runs the tests matching pattern under `mpirun -np np` and fails t
// unless every rank passes.
func Run(t *testing.T, np int, pattern string) {
	t.Helper()
	out, timedOut, err := Launch(t, np, pattern, 3*time.Minute)
	switch {
	case timedOut:
		t.Fatalf("mpirun -np %d: timed out\n%s", np, out)
	case err != nil:
		t.Fatalf("mpirun -np %d %s: %v\n%s", np, pattern, err, out)
	case !bytes.Contains(out, []byte("PASS")):
		t.Fatalf("mpirun -np %d: no PASS in the output\n%s", np, out)
	}
	if testing.Verbose() {
		t.Logf("mpirun -np %d output:\n%s", np, out)
	}
}

// RunRanks is a package's launcher test: it runs the tests matching
// pattern under mpirun at each rank count in nps. Under MPI it skips.
func RunRanks(t *testing.T, pattern string, nps ...int) {
	if Ranks() != 0 {
		t.Skip("launcher: already under MPI")
	}
	for _, np := range nps {
		t.Run(fmt.Sprintf("np=%d", np), func(t *testing.T) { Run(t, np, pattern) })
	}
}

// EnvAbort is set for the job ExpectAbort starts.
const EnvAbort = "SUPERGCN_MPI_ABORT"

// ExpectAbort runs the test matching pattern on 2 ranks with EnvAbort set
// (that test makes one rank call Abort while the other waits in a
// collective) and fails t unless the job ends with a non-zero status
// within 60 s. Under MPI it skips.
func ExpectAbort(t *testing.T, pattern string) {
	if Ranks() != 0 {
		t.Skip("launcher: already under MPI")
	}
	out, timedOut, err := Launch(t, 2, pattern, 60*time.Second, EnvAbort+"=1")
	if timedOut {
		t.Fatalf("the job did not end within 60 s of Abort:\n%s", out)
	}
	var exit interface{ ExitCode() int }
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("mpirun: %v, want a non-zero exit status\n%s", err, out)
	}
}

// Skip skips t unless the process runs under Run, and otherwise returns the
// number of ranks.
func Skip(t testing.TB) int {
	n := Ranks()
	if n == 0 {
		t.Skip(fmt.Sprintf("runs only under mpirun (%s unset); the launcher test starts it", EnvRanks))
	}
	return n
}

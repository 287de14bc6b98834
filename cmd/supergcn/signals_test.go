package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/supergcn/supergcn/internal/testdataset"
)

// catching reports whether process pid has a handler for SIGTERM (the
// SigCgt mask of /proc/PID/status), or has ended.
func catching(pid int) bool {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return true
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "SigCgt:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && mask&(1<<(uint(syscall.SIGTERM)-1)) != 0
		}
	}
	return false
}

// signalAfterStart waits (polling, bounded by the run's limit) until p
// can catch signals — the start-up hook has run — then sends s after d.
// Before that moment the kernel's default action applies (procsig's doc).
func signalAfterStart(s syscall.Signal, d time.Duration) func(*os.Process) {
	return func(p *os.Process) {
		for !catching(p.Pid) {
			time.Sleep(50 * time.Microsecond)
		}
		time.Sleep(d)
		p.Signal(s)
	}
}

var startDelays = []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond, 100 * time.Millisecond, 500 * time.Millisecond}

// TestCLISignalsAtStartup: SIGTERM or SIGUSR1 at any moment of a command's
// life, start-up and the OpenBLAS restart included, gets the documented
// outcome: train stops after its epoch with a checkpoint and exits 75;
// convert and partition end with 128 + the signal's number, nothing written
// (or 0 with the whole output, when they finished first).
func TestCLISignalsAtStartup(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	for _, s := range []syscall.Signal{syscall.SIGTERM, syscall.SIGUSR1} {
		for _, d := range startDelays {
			name := fmt.Sprintf("%v after %v", s, d)
			ck := filepath.Join(dir, fmt.Sprintf("t%d-%d.ckpt", s, d.Microseconds()))
			r := runWith(t, 2*time.Minute, nil, signalAfterStart(s, d), nil,
				"train", "--data", cora, "--epochs", "1000000", "--quiet", "--save", ck)
			if r.code != exitStopped || !strings.Contains(r.stderr, "stopped on request") {
				t.Errorf("train, %s: exit %d, want %d\n%s", name, r.code, exitStopped, r.stderr)
			} else if _, err := os.Stat(ck); err != nil {
				t.Errorf("train, %s: no checkpoint: %v", name, err)
			}
			for cmd, args := range map[string][]string{
				"convert":   {"convert", "--data", cora, "--out", filepath.Join(dir, "c.sgb")},
				"partition": {"partition", "--data", cora, "--parts", "2", "--out", filepath.Join(dir, "p")},
			} {
				out := args[len(args)-1]
				r := runWith(t, 2*time.Minute, nil, signalAfterStart(s, d), nil, args...)
				_, err := os.Stat(out)
				switch {
				case r.code == 0 && err == nil: // finished before the signal
					os.RemoveAll(out)
				case r.code == 128+int(s) && os.IsNotExist(err) && !goroutineTrace.MatchString(r.stderr):
				default:
					t.Errorf("%s, %s: exit %d, output %v\n%s", cmd, name, r.code, err, r.stderr)
				}
				if tmps, _ := filepath.Glob(out + ".tmp*"); len(tmps) > 0 {
					t.Errorf("%s, %s: left %v", cmd, name, tmps)
				}
			}
		}
	}
}

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

// signalWhenRanksCatch sends s to p (mpirun, or the process itself when
// ranks is 1) once ranks processes — p's children under mpirun — can catch
// signals.
func signalWhenRanksCatch(s syscall.Signal, ranks int) func(*os.Process) {
	return signalWhenRanksCatchAfter(s, ranks, 0)
}

// signalWhenRanksCatchAfter is signalWhenRanksCatch sending d later.
func signalWhenRanksCatchAfter(s syscall.Signal, ranks int, d time.Duration) func(*os.Process) {
	return func(p *os.Process) {
		if ranks == 1 {
			signalAfterStart(s, d)(p)
			return
		}
		for {
			n := 0
			for _, c := range children(p.Pid) {
				// A child not yet exec'd is mpirun's copy, with its handlers.
				if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", c)); string(comm) == "supergcn\n" && catching(c) {
					n++
				}
			}
			if n >= ranks || !catching(p.Pid) && processGone(p.Pid) {
				break
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(d)
		p.Signal(s)
	}
}

// children lists the processes whose parent is pid (/proc/*/stat).
func children(pid int) []int {
	var out []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
		i := strings.LastIndexByte(string(b), ')')
		fields := strings.Fields(string(b[i+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			c, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			out = append(out, c)
		}
	}
	return out
}

func processGone(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return err != nil
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

// TestCLISignalsAtStartupMPI: SIGUSR1 to mpirun (which forwards it to the
// ranks it has started) at any moment of the ranks' lives: train stops
// with a checkpoint (75), partition ends with 138 and no output.
func TestCLISignalsAtStartupMPI(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	dir := t.TempDir()
	launcher := mpirun(t, 2)
	for _, d := range startDelays {
		during := signalWhenRanksCatchAfter(syscall.SIGUSR1, 2, d)
		ck := filepath.Join(dir, fmt.Sprintf("m%d.ckpt", d.Microseconds()))
		r := runWith(t, 2*time.Minute, nil, during, launcher, "train", "--data", cora, "--epochs", "1000000", "--quiet", "--threads", "1", "--save", ck)
		if r.code != exitStopped {
			t.Errorf("train, SIGUSR1 %v after the ranks start: exit %d, want %d\n%s", d, r.code, exitStopped, r.stderr)
		} else if _, err := os.Stat(ck); err != nil {
			t.Errorf("train, SIGUSR1 %v after the ranks start: no checkpoint: %v", d, err)
		}
		out := filepath.Join(dir, "p")
		r = runWith(t, 2*time.Minute, nil, during, launcher, "partition", "--data", cora, "--parts", "2", "--method", "ldg", "--out", out)
		_, err := os.Stat(out)
		if !(r.code == 0 && err == nil) && !(r.code == 138 && os.IsNotExist(err)) || goroutineTrace.MatchString(r.stderr) {
			t.Errorf("partition, SIGUSR1 %v after the ranks start: exit %d, output %v\n%s", d, r.code, err, r.stderr)
		}
		os.RemoveAll(out)
	}
}

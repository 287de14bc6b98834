package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/internal/affinity"
	"github.com/supergcn/supergcn/internal/par"
)

// threadsHelp is the help of every --threads that takes one count.
const threadsHelp = "threads per rank for every parallel step: auto (the cores this rank may run on: the smallest of its affinity mask, its cgroup CPU quota, SLURM_CPUS_PER_TASK and OMP_NUM_THREADS; cores that ranks of a node share are divided among them; supergcn info shows it) or a count ≥ 1"

// threadsFlag is a --threads value: 0 for auto, else the count.
type threadsFlag int

func (t *threadsFlag) String() string {
	if t == nil || *t == 0 {
		return "auto"
	}
	return strconv.Itoa(int(*t))
}

func (t *threadsFlag) Set(s string) error {
	if strings.EqualFold(s, "auto") {
		*t = 0
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return fmt.Errorf("%q is not auto or a count ≥ 1", s)
	}
	if n > maxThreads {
		return fmt.Errorf("%d, more than %d (more goroutines calling cgo BLAS exhaust the OS threads)", n, maxThreads)
	}
	*t = threadsFlag(n)
	return nil
}

// threadsVar registers --threads (auto by default) into p (0: auto).
func threadsVar(fs *flag.FlagSet, p *int) { fs.Var((*threadsFlag)(p), "threads", threadsHelp) }

// aloneThreads is affinity.Alone, its warnings on stderr.
func aloneThreads(n int) (int, string, error) {
	ch, err := affinity.Alone(n)
	warnLayout(os.Stderr, ch.Warnings)
	return ch.Threads, ch.Why, err
}

// jobThreads is affinity.Job (collective), rank 0's warnings written to warn.
func jobThreads(c comm.Comm, n int, warn io.Writer) (int, string, error) {
	ch, err := affinity.Job(c, func() (affinity.Layout, error) {
		nodes, err := comm.NodeLayout(c)
		if err != nil {
			return affinity.Layout{}, err
		}
		return affinity.Layout{Local: nodes.Local, Node: nodes.Node}, nil
	}, n)
	warnLayout(warn, ch.Warnings)
	return ch.Threads, ch.Why, err
}

// warnLayout writes each layout warning as a line.
func warnLayout(w io.Writer, lines []string) {
	if w == nil {
		return
	}
	for _, l := range lines {
		fmt.Fprintf(w, "supergcn: warning: %s\n", l)
	}
}

// maxThreads bounds --threads: more goroutines calling cgo BLAS than this
// exhaust the runtime's OS threads long before they add speed.
const maxThreads = 1024

// setThreadBudget makes n (≥ 1) the rank's thread budget, which every
// parallel loop (aggregation, dense products and elementwise passes,
// quantisation, preprocessing) stays within: internal/par reads it as
// GOMAXPROCS. Commands call it once, from --threads, before any work.
func setThreadBudget(n int) int {
	par.SetThreads(n)
	runtime.GOMAXPROCS(n)
	return n
}

// setAloneThreads resolves *n (0: auto, see aloneThreads) for a process
// that works alone, stores it in *n and makes it the thread budget.
func setAloneThreads(n *int) error {
	t, _, err := aloneThreads(*n)
	if err != nil {
		return err
	}
	*n = setThreadBudget(t)
	return nil
}

// rank0Stderr is stderr on rank 0, nil elsewhere.
func rank0Stderr(c comm.Comm) io.Writer {
	if c.Rank() == 0 {
		return os.Stderr
	}
	return nil
}

// autoNote says which limit set --threads auto (rank 0's), or nothing.
func autoNote(auto bool, why string) string {
	if !auto {
		return ""
	}
	return " (auto: " + why + ")"
}

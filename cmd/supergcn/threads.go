package main

import (
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"strconv"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/internal/affinity"
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
	if s == "auto" {
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

// rankCPUs is what a rank reads about its own cores.
type rankCPUs struct {
	mask   affinity.Set
	quota  affinity.Quota
	limits affinity.Limits
}

// readRankCPUs reads this process's affinity mask, cgroup CPU quota and
// SLURM_CPUS_PER_TASK / OMP_NUM_THREADS.
func readRankCPUs() (rankCPUs, error) {
	var r rankCPUs
	var err error
	if r.mask, err = affinity.Self(); err != nil {
		return r, err
	}
	if r.quota, err = affinity.CgroupQuota(os.DirFS("/")); err != nil {
		return r, err
	}
	r.limits = affinity.Limits{Mask: r.mask.Count(), Sharers: 1, Quota: r.quota.CPUs, QuotaFile: r.quota.File, QuotaShare: 1}
	return r, r.limits.Env(os.Getenv)
}

// shareFromEnv divides the mask among the ranks a launcher says it put on
// this node when the mask is the whole node (the ranks are not bound), for
// a process that does not talk to the other ranks (--mpi off, bench).
func (r *rankCPUs) shareFromEnv() error {
	local, key := affinity.LocalRanksFromEnv(os.Getenv)
	if local < 2 {
		return nil
	}
	online, err := affinity.Online(os.DirFS("/"))
	if err != nil {
		return err
	}
	if online == nil || r.mask.Count() >= online.Count() {
		r.limits.Sharers, r.limits.LocalSource = float64(local), key
	}
	return nil
}

// aloneThreads returns the threads of a process that runs without other
// ranks' help: n, or with n = 0 (auto) what its cores allow; it warns on
// stderr when n exceeds the cores of its affinity mask or quota.
func aloneThreads(n int) (int, string, error) {
	r, err := readRankCPUs()
	if err == nil {
		err = r.shareFromEnv()
	}
	if err != nil {
		return 0, "", err
	}
	if n == 0 {
		t, why := r.limits.Threads()
		return t, why, nil
	}
	warnLayout(os.Stderr, []affinity.Rank{{Threads: n, Mask: r.limits.Mask, Quota: quotaCores(r.limits)}})
	return n, "--threads", nil
}

// jobThreads returns this rank's threads (n, or with n = 0 what its cores
// allow, the cores its node's ranks share divided among them) and which
// limit decided; rank 0 writes to warn a line for each problem in the job's
// layout (oversubscribed nodes, ranks with more threads than cores).
// Collective.
func jobThreads(c comm.Comm, n int, warn io.Writer) (int, string, error) {
	if c.Size() == 1 {
		return aloneThreads(n)
	}
	r, err := readRankCPUs()
	if err != nil {
		return 0, "", err
	}
	nodes, err := comm.NodeLayout(c)
	if err != nil {
		return 0, "", err
	}
	masks, quotaShare, err := gatherNode(nodes.Local, r)
	if err != nil {
		return 0, "", err
	}
	lr := nodes.Local.Rank()
	r.limits.Sharers = affinity.Sharers(masks, lr)
	r.limits.LocalSource = "MPI_COMM_TYPE_SHARED"
	r.limits.QuotaShare = quotaShare
	why := "--threads"
	if n == 0 {
		n, why = r.limits.Threads()
	}
	// Every rank's threads and cores to rank 0, which checks the layout.
	const k = 4
	all := make([]int64, k*c.Size())
	me := all[k*c.Rank():]
	me[0], me[1], me[2], me[3] = int64(n), int64(r.limits.Mask), int64(quotaCores(r.limits)), int64(affinity.Union(masks).Count())
	if err := c.AllreduceSumI64(all); err != nil {
		return 0, "", err
	}
	if c.Rank() == 0 {
		ranks := make([]affinity.Rank, c.Size())
		for i := range ranks {
			v := all[k*i:]
			ranks[i] = affinity.Rank{Node: nodes.Node[i], Threads: int(v[0]), Mask: int(v[1]), Quota: int(v[2]), NodeCPUs: int(v[3])}
		}
		warnLayout(warn, ranks)
	}
	return n, why, nil
}

// quotaCores is the rank's share of its cgroup quota in whole CPUs (0: none).
func quotaCores(l affinity.Limits) int {
	return affinity.Limits{Quota: l.Quota, QuotaShare: l.QuotaShare}.Cores()
}

// gatherNode returns the affinity masks of the ranks of this node (by
// local rank) and how many of them share this rank's cgroup CPU quota.
// Collective over local.
func gatherNode(local comm.Comm, r rankCPUs) ([]affinity.Set, int, error) {
	words := []float64{float64(len(r.mask))}
	if err := local.AllreduceMaxF64(words); err != nil {
		return nil, 0, err
	}
	w := int(words[0]) + 1 // the mask's words, then the quota's cgroup
	buf := make([]int64, w*local.Size())
	me := buf[w*local.Rank():]
	for i, x := range r.mask {
		me[i] = int64(x)
	}
	if r.quota.CPUs > 0 {
		h := fnv.New64a()
		h.Write([]byte(r.quota.Dir))
		me[w-1] = int64(h.Sum64() | 1) // never 0, which means no quota
	}
	if err := local.AllreduceSumI64(buf); err != nil {
		return nil, 0, err
	}
	masks := make([]affinity.Set, local.Size())
	share := 0
	for i := range masks {
		v := buf[w*i : w*(i+1)]
		masks[i] = make(affinity.Set, w-1)
		for j := range masks[i] {
			masks[i][j] = uint64(v[j])
		}
		if v[w-1] != 0 && v[w-1] == me[w-1] {
			share++
		}
	}
	return masks, max(share, 1), nil
}

// warnLayout writes a warning line for each problem Check finds.
func warnLayout(w io.Writer, ranks []affinity.Rank) {
	if w == nil {
		return
	}
	for _, l := range affinity.Check(ranks) {
		fmt.Fprintf(w, "supergcn: warning: %s\n", l)
	}
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

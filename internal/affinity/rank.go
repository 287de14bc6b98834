package affinity

import (
	"hash/fnv"
	"os"
)

// Choice is the threads a rank runs and why.
type Choice struct {
	Threads int
	// Why names the limit that decided an automatic count ("" when the
	// count was given).
	Why string
	// Warnings are Check's lines for the job's layout (on rank 0 of Job).
	Warnings []string
}

// rankCPUs is what a rank reads about its own cores.
type rankCPUs struct {
	mask   Set
	quota  Quota
	limits Limits
}

// readRankCPUs reads this process's affinity mask, cgroup CPU quota and
// SLURM_CPUS_PER_TASK / OMP_NUM_THREADS.
func readRankCPUs() (rankCPUs, error) {
	var r rankCPUs
	var err error
	if r.mask, err = Self(); err != nil {
		return r, err
	}
	if r.quota, err = CgroupQuota(os.DirFS("/")); err != nil {
		return r, err
	}
	r.limits = Limits{Mask: r.mask.Count(), Sharers: 1, Quota: r.quota.CPUs, QuotaFile: r.quota.File, QuotaShare: 1}
	return r, r.limits.Env(os.Getenv)
}

// shareFromEnv divides the mask among the ranks a launcher says it put on
// this node when the mask is the whole node (the ranks are not bound), for
// a process that does not talk to the other ranks.
func (r *rankCPUs) shareFromEnv() error {
	local, key := LocalRanksFromEnv(os.Getenv)
	if local < 2 {
		return nil
	}
	online, err := Online(os.DirFS("/"))
	if err != nil {
		return err
	}
	if online == nil || r.mask.Count() >= online.Count() {
		r.limits.Sharers, r.limits.LocalSource = float64(local), key
	}
	return nil
}

// Alone returns the threads of a process that runs without other ranks'
// help: n, or with n = 0 (auto) what its cores allow, the cores of a
// whole node divided by the ranks its launcher says share it; with n > 0
// the warnings say when n exceeds the cores of its affinity mask or quota.
func Alone(n int) (Choice, error) {
	r, err := readRankCPUs()
	if err == nil {
		err = r.shareFromEnv()
	}
	if err != nil {
		return Choice{}, err
	}
	if n == 0 {
		t, why := r.limits.Threads()
		return Choice{Threads: t, Why: why}, nil
	}
	return Choice{Threads: n, Warnings: Check([]Rank{{Threads: n, Mask: r.limits.Mask, Quota: quotaCores(r.limits)}})}, nil
}

// Comm is what Job uses of a communicator (comm.Comm has it).
type Comm interface {
	Rank() int
	Size() int
	AllreduceSumI64(x []int64) error
	AllreduceMaxF64(x []float64) error
}

// Layout is the node layout Job reads (comm.NodeLayout's): this rank's
// node communicator and the node of every rank.
type Layout struct {
	Local Comm
	Node  []int
}

// Job returns this rank's threads: n, or with n = 0 what its cores allow,
// the cores its node's ranks share divided among them. Rank 0's Warnings
// hold a line for each problem in the job's layout (oversubscribed nodes,
// ranks with more threads than cores). Collective; layout (collective
// too) is called only when c has several ranks.
func Job(c Comm, layout func() (Layout, error), n int) (Choice, error) {
	if c.Size() == 1 {
		return Alone(n)
	}
	r, err := readRankCPUs()
	if err != nil {
		return Choice{}, err
	}
	nodes, err := layout()
	if err != nil {
		return Choice{}, err
	}
	masks, quotaShare, err := gatherNode(nodes.Local, r)
	if err != nil {
		return Choice{}, err
	}
	lr := nodes.Local.Rank()
	r.limits.Sharers = Sharers(masks, lr)
	r.limits.LocalSource = "MPI_COMM_TYPE_SHARED"
	r.limits.QuotaShare = quotaShare
	ch := Choice{Threads: n}
	if n == 0 {
		ch.Threads, ch.Why = r.limits.Threads()
	}
	// Every rank's threads and cores to rank 0, which checks the layout.
	const k = 4
	all := make([]int64, k*c.Size())
	me := all[k*c.Rank():]
	me[0], me[1], me[2], me[3] = int64(ch.Threads), int64(r.limits.Mask), int64(quotaCores(r.limits)), int64(Union(masks).Count())
	if err := c.AllreduceSumI64(all); err != nil {
		return Choice{}, err
	}
	if c.Rank() == 0 {
		ranks := make([]Rank, c.Size())
		for i := range ranks {
			v := all[k*i:]
			ranks[i] = Rank{Node: nodes.Node[i], Threads: int(v[0]), Mask: int(v[1]), Quota: int(v[2]), NodeCPUs: int(v[3])}
		}
		ch.Warnings = Check(ranks)
	}
	return ch, nil
}

// quotaCores is the rank's share of its cgroup quota in whole CPUs (0: none).
func quotaCores(l Limits) int {
	return Limits{Quota: l.Quota, QuotaShare: l.QuotaShare}.Cores()
}

// gatherNode returns the affinity masks of the ranks of this node (by
// local rank) and how many of them share this rank's cgroup CPU quota.
// Collective over local.
func gatherNode(local Comm, r rankCPUs) ([]Set, int, error) {
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
	masks := make([]Set, local.Size())
	share := 0
	for i := range masks {
		v := buf[w*i : w*(i+1)]
		masks[i] = make(Set, w-1)
		for j := range masks[i] {
			masks[i][j] = uint64(v[j])
		}
		if v[w-1] != 0 && v[w-1] == me[w-1] {
			share++
		}
	}
	return masks, max(share, 1), nil
}

// Package affinity finds how many threads one rank should run: the cores it
// may run on, from its affinity mask, its cgroup's CPU quota, the
// scheduler's per-task CPU count (SLURM_CPUS_PER_TASK) and OMP_NUM_THREADS,
// with cores that several ranks of a node share divided among them. It also
// checks a job's layout for oversubscribed nodes and ranks running more
// threads than their cores.
package affinity

import (
	"fmt"
	"io/fs"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// Set is a set of CPU numbers, a bit per CPU (bit i of word i/64).
type Set []uint64

// Count returns the number of CPUs in s.
func (s Set) Count() int {
	n := 0
	for _, w := range s {
		n += bits.OnesCount64(w)
	}
	return n
}

// Has reports whether CPU i is in s.
func (s Set) Has(i int) bool { return i >= 0 && i/64 < len(s) && s[i/64]>>(i%64)&1 == 1 }

// add puts CPU i into s, growing it as needed.
func (s *Set) add(i int) {
	for len(*s) <= i/64 {
		*s = append(*s, 0)
	}
	(*s)[i/64] |= 1 << (i % 64)
}

// String is the set in the kernel's list format ("0-3,8").
func (s Set) String() string {
	var parts []string
	for i := 0; i < 64*len(s); i++ {
		if !s.Has(i) {
			continue
		}
		j := i
		for s.Has(j + 1) {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(i))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", i, j))
		}
		i = j
	}
	return strings.Join(parts, ",")
}

// ParseList reads the kernel's CPU list format ("0-3,8-11", as in
// /sys/devices/system/cpu/online or a cpuset).
func ParseList(text string) (Set, error) {
	var s Set
	text = strings.TrimSpace(text)
	if text == "" {
		return s, nil
	}
	for _, r := range strings.Split(text, ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a || b >= 1<<20 {
			return nil, fmt.Errorf("%q is not a CPU or CPU range", r)
		}
		for i := a; i <= b; i++ {
			s.add(i)
		}
	}
	return s, nil
}

// Limits are the bounds on the threads of one rank; a zero field is no bound.
type Limits struct {
	Mask        int     // CPUs in the rank's affinity mask
	Sharers     float64 // Mask divided by this is the rank's own share (1: no other rank of the node shares its CPUs)
	Quota       float64 // CPUs of the cgroup's quota (cpu.max, cfs_quota_us / cfs_period_us)
	QuotaFile   string  // the file the quota came from
	QuotaShare  int     // ranks of the node in the quota's cgroup (≥ 1 with a quota)
	SlurmCPUs   int     // SLURM_CPUS_PER_TASK
	OMPThreads  int     // OMP_NUM_THREADS (its first level)
	LocalSource string  // how the ranks sharing the mask were counted (for Sharers > 1)
}

// Threads returns the thread count the limits allow (≥ 1) and which limit
// decided it, in words.
func (l Limits) Threads() (int, string) {
	n, why := smallest(append(l.hardware(), l.requests()...))
	if n == 0 {
		return 1, "nothing known: one thread"
	}
	return n, why
}

// Cores returns the CPUs the hardware and the cgroup give the rank (its
// share of the mask, its share of the quota), ignoring the requests in the
// environment, or 0 when neither is known: more threads than this
// oversubscribe the rank's cores.
func (l Limits) Cores() int {
	n, _ := smallest(l.hardware())
	return n
}

// bound is one limit on the threads and where it comes from.
type bound struct {
	n   int
	why string
}

// smallest returns the least positive bound (0 and "" when none is).
func smallest(bs []bound) (int, string) {
	best := bound{}
	for _, b := range bs {
		if b.n >= 1 && (best.n == 0 || b.n < best.n) {
			best = b
		}
	}
	return best.n, best.why
}

// hardware is the affinity mask's bound (the rank's share of it) and the
// cgroup quota's.
func (l Limits) hardware() []bound {
	var bs []bound
	if l.Mask > 0 {
		b := bound{l.Mask, "affinity mask of " + plural(l.Mask, "CPU")}
		if l.Sharers > 1 {
			b = bound{max(1, int(float64(l.Mask)/l.Sharers+1e-9)),
				fmt.Sprintf("affinity mask of %s shared by %.3g ranks (from %s)", plural(l.Mask, "CPU"), l.Sharers, l.LocalSource)}
		}
		bs = append(bs, b)
	}
	if l.Quota > 0 {
		share := max(l.QuotaShare, 1)
		b := bound{max(1, int(math.Ceil(l.Quota/float64(share)-1e-9))), fmt.Sprintf("cgroup CPU quota of %.3g CPUs (%s)", l.Quota, l.QuotaFile)}
		if share > 1 {
			b.why += fmt.Sprintf(" shared by %d ranks", share)
		}
		bs = append(bs, b)
	}
	return bs
}

// requests are the environment's bounds.
func (l Limits) requests() []bound {
	return []bound{
		{l.SlurmCPUs, fmt.Sprintf("SLURM_CPUS_PER_TASK=%d", l.SlurmCPUs)},
		{l.OMPThreads, fmt.Sprintf("OMP_NUM_THREADS=%d", l.OMPThreads)},
	}
}

// Env reads SLURM_CPUS_PER_TASK and OMP_NUM_THREADS into l; an unset or
// empty variable sets no bound, a malformed one is an error naming it.
func (l *Limits) Env(getenv func(string) string) error {
	var err error
	if l.SlurmCPUs, err = envCount(getenv, "SLURM_CPUS_PER_TASK"); err != nil {
		return err
	}
	l.OMPThreads, err = envCount(getenv, "OMP_NUM_THREADS")
	return err
}

// envCount parses a positive count from variable k; OMP_NUM_THREADS may be a
// list of nesting levels ("8,2"), whose first is the count.
func envCount(getenv func(string) string, k string) (int, error) {
	v := strings.TrimSpace(getenv(k))
	if v == "" {
		return 0, nil
	}
	first, _, _ := strings.Cut(v, ",")
	n, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("environment variable %s=%q is not a thread count ≥ 1", k, v)
	}
	return n, nil
}

// LocalRanksFromEnv is the number of ranks a launcher placed on this node,
// from its environment (OpenMPI, MPICH/Hydra, Slurm), or 1 when none says.
func LocalRanksFromEnv(getenv func(string) string) (int, string) {
	for _, k := range []string{"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"} {
		if v, err := strconv.Atoi(getenv(k)); err == nil && v > 0 {
			return v, k
		}
	}
	return 1, ""
}

// Sharers returns, for the rank self among the ranks of one node whose
// affinity masks are masks, how many ways its CPUs are shared: its mask's
// size divided by its fair share, where a CPU in the masks of k ranks counts
// 1/k towards each. Disjoint masks (ranks bound to their own cores) give 1;
// n ranks with the same mask give n.
func Sharers(masks []Set, self int) float64 {
	mine := masks[self]
	share := 0.0
	for i := 0; i < 64*len(mine); i++ {
		if !mine.Has(i) {
			continue
		}
		k := 0
		for _, m := range masks {
			if m.Has(i) {
				k++
			}
		}
		share += 1 / float64(k)
	}
	if share == 0 {
		return 1
	}
	return float64(mine.Count()) / share
}

// Union returns the CPUs in any of the masks.
func Union(masks []Set) Set {
	var u Set
	for _, m := range masks {
		for len(u) < len(m) {
			u = append(u, 0)
		}
		for i, w := range m {
			u[i] |= w
		}
	}
	return u
}

// Online returns the node's online CPUs (/sys/devices/system/cpu/online
// under fsys, rooted at "/"), or nil when the file does not exist.
func Online(fsys fs.FS) (Set, error) {
	b, err := readOptional(fsys, "sys/devices/system/cpu/online")
	if b == nil {
		return nil, err
	}
	s, err := ParseList(string(b))
	if err != nil {
		return nil, fmt.Errorf("/sys/devices/system/cpu/online:1: %w", err)
	}
	return s, nil
}

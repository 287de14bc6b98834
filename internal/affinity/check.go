package affinity

import (
	"fmt"
	"strings"
)

// Rank is one rank's placement and threads, as Check reads them.
type Rank struct {
	Node     int // node index (ranks with the same index share a node)
	Threads  int // threads the rank runs
	Mask     int // CPUs in its affinity mask (0: unknown)
	Quota    int // its share of its cgroup's CPU quota, rounded up (0: none)
	NodeCPUs int // CPUs in the union of the affinity masks of its node's ranks (0: unknown)
}

// Check returns a line for each kind of problem in a job's layout (none
// when it has none): nodes whose ranks run more threads in all than the
// node's CPUs (oversubscription), and ranks running more threads than the
// CPUs of their affinity mask or their cgroup quota. Each line names the
// first case and counts the others.
func Check(ranks []Rank) []string {
	var lines []string
	if l := checkNodes(ranks); l != "" {
		lines = append(lines, l)
	}
	if l := checkRanks(ranks); l != "" {
		lines = append(lines, l)
	}
	return lines
}

// checkNodes reports the nodes whose threads exceed their CPUs.
func checkNodes(ranks []Rank) string {
	type node struct{ first, ranks, threads, minT, maxT, cpus int }
	nodes := map[int]*node{}
	var order []int
	for r, k := range ranks {
		n := nodes[k.Node]
		if n == nil {
			n = &node{first: r, minT: k.Threads, maxT: k.Threads, cpus: k.NodeCPUs}
			nodes[k.Node] = n
			order = append(order, k.Node)
		}
		n.ranks, n.threads = n.ranks+1, n.threads+k.Threads
		n.minT, n.maxT = min(n.minT, k.Threads), max(n.maxT, k.Threads)
	}
	var bad []*node
	for _, i := range order {
		if n := nodes[i]; n.cpus > 0 && n.threads > n.cpus {
			bad = append(bad, n)
		}
	}
	if len(bad) == 0 {
		return ""
	}
	n := bad[0]
	what := fmt.Sprintf("%d ranks × %d threads", n.ranks, n.minT)
	if n.minT != n.maxT {
		what = fmt.Sprintf("%d ranks with %d threads in all", n.ranks, n.threads)
	}
	return fmt.Sprintf("oversubscribed: the node of rank %d runs %s on %d CPUs%s; threads then wait for each other's time slices: run fewer ranks per node or fewer threads per rank",
		n.first, what, n.cpus, more(len(bad)-1, "node"))
}

// checkRanks reports the ranks with more threads than their own CPUs.
func checkRanks(ranks []Rank) string {
	first, count := -1, 0
	for r, k := range ranks {
		if (k.Mask > 0 && k.Threads > k.Mask) || (k.Quota > 0 && k.Threads > k.Quota) {
			if first < 0 {
				first = r
			}
			count++
		}
	}
	if first < 0 {
		return ""
	}
	k := ranks[first]
	var has []string
	if k.Mask > 0 && k.Threads > k.Mask {
		has = append(has, fmt.Sprintf("an affinity mask of %s", plural(k.Mask, "CPU")))
	}
	if k.Quota > 0 && k.Threads > k.Quota {
		has = append(has, fmt.Sprintf("a cgroup CPU quota of %s", plural(k.Quota, "CPU")))
	}
	return fmt.Sprintf("rank %d has %s for its %s%s: bind each rank to as many cores as its threads (srun --cpus-per-task, mpirun --map-by ppr:R:node:pe=T) or run fewer threads",
		first, strings.Join(has, " and "), plural(k.Threads, "thread"), more(count-1, "rank"))
}

func more(n int, what string) string {
	if n == 0 {
		return ""
	}
	if n > 1 {
		what += "s"
	}
	return fmt.Sprintf(" (and %d more %s)", n, what)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

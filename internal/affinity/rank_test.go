package affinity

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/supergcn/supergcn/comm"
)

// runJob runs Job on p emulated ranks, perNode to a node, each asking for
// n threads; it returns every rank's threads and rank 0's warnings, a line
// each.
func runJob(t *testing.T, p, perNode, n int) ([]int, string) {
	t.Helper()
	cs := comm.NewGroupNodes(p, perNode)
	got := make([]int, p)
	var warn []string
	var wg sync.WaitGroup
	errs := make([]error, p)
	for r, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ch, err := Job(c, func() (Layout, error) {
				nodes, err := comm.NodeLayout(c)
				if err != nil {
					return Layout{}, err
				}
				return Layout{Local: nodes.Local, Node: nodes.Node}, nil
			}, n)
			got[r], errs[r] = ch.Threads, err
			if r == 0 {
				warn = ch.Warnings
			} else if len(ch.Warnings) > 0 {
				errs[r] = fmt.Errorf("warnings on rank %d: %q", r, ch.Warnings)
			}
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	return got, strings.Join(warn, "\n") + strings.Repeat("\n", min(len(warn), 1))
}

func TestJob(t *testing.T) {
	t.Setenv("OMP_NUM_THREADS", "")
	t.Setenv("SLURM_CPUS_PER_TASK", "")
	mask, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	cpus := mask.Count()
	// The emulated ranks share this process's mask: auto divides it among
	// the ranks of each node, and the layout fits.
	got, warn := runJob(t, 4, 2, 0)
	for r, n := range got {
		if n != max(1, cpus/2) {
			t.Errorf("auto, 2 ranks a node on %d CPUs: rank %d runs %d threads, want %d", cpus, r, n, max(1, cpus/2))
		}
	}
	if cpus >= 2 && warn != "" {
		t.Errorf("auto layout warned: %s", warn)
	}
	// Each rank asking for all the CPUs oversubscribes both nodes: one line
	// from rank 0 for the job.
	got, warn = runJob(t, 4, 2, cpus)
	if got[3] != cpus {
		t.Errorf("%d given: rank 3 runs %d", cpus, got[3])
	}
	want := "oversubscribed: the node of rank 0 runs 2 ranks × "
	if !strings.HasPrefix(warn, want) || !strings.Contains(warn, "(and 1 more node)") || strings.Count(warn, "\n") != 1 {
		t.Errorf("oversubscribed job warned %q, want one line starting %q", warn, want)
	}
	// More threads than the mask: the rank warning as well.
	_, warn = runJob(t, 2, 2, cpus+1)
	if !strings.Contains(warn, "rank 0 has an affinity mask of") || strings.Count(warn, "\n") != 2 {
		t.Errorf("threads beyond the mask warned %q", warn)
	}
}

// A process that talks to no other rank divides its mask by the launcher's
// ranks on the node only when the mask is the whole node.
func TestAloneShareFromEnv(t *testing.T) {
	t.Setenv("OMP_NUM_THREADS", "")
	t.Setenv("SLURM_CPUS_PER_TASK", "")
	t.Setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2")
	mask, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	online, err := Online(os.DirFS("/"))
	if err != nil || online == nil {
		t.Skipf("no online CPU list: %v", err)
	}
	ch, err := Alone(0)
	if err != nil {
		t.Fatal(err)
	}
	n, why := ch.Threads, ch.Why
	want, source := mask.Count(), "affinity mask of"
	if mask.Count() >= online.Count() {
		want, source = max(1, mask.Count()/2), "shared by 2 ranks (from OMPI_COMM_WORLD_LOCAL_SIZE)"
	}
	if n != want || !strings.Contains(why, source) {
		t.Errorf("auto with 2 local ranks: %d (%s), want %d (%s)", n, why, want, source)
	}
	// An explicit count is kept.
	if ch, _ := Alone(3); ch.Threads != 3 || ch.Why != "" {
		t.Errorf("3 given: %+v", ch)
	}
}

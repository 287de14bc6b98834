package affinity

import (
	"os"
	"strings"
	"testing"
)

func TestCgroupQuota(t *testing.T) {
	for _, c := range []struct {
		dir  string
		cpus float64
		file string
	}{
		{"v2", 2.5, "/sys/fs/cgroup/job/cpu.max"}, // the parent's quota binds the leaf with none
		{"v2ns", 1.5, "/sys/fs/cgroup/cpu.max"},
		{"v1", 4, "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us"}, // the v1 cpu controller wins over the v2 line
		{"v1none", 0, ""},
		{"v1ns", 2, "/sys/fs/cgroup/cpu/cpu.cfs_quota_us"}, // the cgroup lies outside the mounted subtree: the mount's quota
		{"online", 0, ""}, // no /proc/self/cgroup: no quota
	} {
		q, err := CgroupQuota(os.DirFS("testdata/" + c.dir))
		if err != nil {
			t.Fatalf("%s: %v", c.dir, err)
		}
		if q.CPUs != c.cpus || q.File != c.file {
			t.Errorf("%s: quota %g from %q, want %g from %q", c.dir, q.CPUs, q.File, c.cpus, c.file)
		}
	}
	_, err := CgroupQuota(os.DirFS("testdata/bad"))
	if err == nil || !strings.Contains(err.Error(), "/sys/fs/cgroup/cpu.max:1:") {
		t.Errorf("malformed cpu.max: error %v, want one naming /sys/fs/cgroup/cpu.max:1", err)
	}
}

func TestParseListOnline(t *testing.T) {
	s, err := Online(os.DirFS("testdata/online"))
	if err != nil || s.Count() != 8 || s.String() != "0-3,8-11" || !s.Has(9) || s.Has(5) {
		t.Fatalf("online: %v (%d CPUs, %q), want 0-3,8-11", err, s.Count(), s.String())
	}
	if s, err := Online(os.DirFS("testdata/v2")); err != nil || s != nil {
		t.Errorf("no online file: %v %v, want nil, nil", s, err)
	}
	for _, bad := range []string{"0-", "3-1", "x", "1,,2", "-1"} {
		if _, err := ParseList(bad); err == nil {
			t.Errorf("ParseList(%q): no error", bad)
		}
	}
	if s, _ := ParseList("70,0-1"); s.Count() != 3 || !s.Has(70) || s.String() != "0-1,70" {
		t.Errorf("ParseList(70,0-1) = %q", s.String())
	}
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestEnvPrecedence(t *testing.T) {
	for _, c := range []struct {
		name string
		l    Limits
		env  map[string]string
		want int
		why  string
	}{
		{"mask only", Limits{Mask: 8}, nil, 8, "affinity mask of 8 CPUs"},
		{"slurm below mask", Limits{Mask: 64}, map[string]string{"SLURM_CPUS_PER_TASK": "8"}, 8, "SLURM_CPUS_PER_TASK=8"},
		{"mask below slurm", Limits{Mask: 1}, map[string]string{"SLURM_CPUS_PER_TASK": "8"}, 1, "affinity mask of 1 CPU"},
		{"omp below all", Limits{Mask: 64, Quota: 16, QuotaFile: "/q"}, map[string]string{"SLURM_CPUS_PER_TASK": "8", "OMP_NUM_THREADS": "4,2"}, 4, "OMP_NUM_THREADS=4"},
		{"quota rounds up", Limits{Mask: 64, Quota: 2.5, QuotaFile: "/q"}, nil, 3, "cgroup CPU quota of 2.5 CPUs (/q)"},
		{"quota shared", Limits{Mask: 64, Quota: 16, QuotaFile: "/q", QuotaShare: 4}, nil, 4, "cgroup CPU quota of 16 CPUs (/q) shared by 4 ranks"},
		{"shared mask", Limits{Mask: 2, Sharers: 4, LocalSource: "node"}, nil, 1, "affinity mask of 2 CPUs shared by 4 ranks (from node)"},
		{"shared mask divides", Limits{Mask: 64, Sharers: 8, LocalSource: "node"}, nil, 8, "affinity mask of 64 CPUs shared by 8 ranks (from node)"},
		{"nothing", Limits{}, nil, 1, "nothing known: one thread"},
	} {
		l := c.l
		if err := l.Env(env(c.env)); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		n, why := l.Threads()
		if n != c.want || why != c.why {
			t.Errorf("%s: %d (%s), want %d (%s)", c.name, n, why, c.want, c.why)
		}
	}
	for _, bad := range []map[string]string{{"OMP_NUM_THREADS": "zero"}, {"OMP_NUM_THREADS": "0"}, {"SLURM_CPUS_PER_TASK": "-2"}} {
		var l Limits
		err := l.Env(env(bad))
		for k := range bad {
			if err == nil || !strings.Contains(err.Error(), k) {
				t.Errorf("%v: error %v, want one naming %s", bad, err, k)
			}
		}
	}
	// Cores ignores the environment's requests.
	l := Limits{Mask: 6, SlurmCPUs: 2, Quota: 4}
	if l.Cores() != 4 {
		t.Errorf("Cores = %d, want 4 (the quota)", l.Cores())
	}
}

func TestLocalRanksFromEnv(t *testing.T) {
	if n, k := LocalRanksFromEnv(env(map[string]string{"SLURM_NTASKS_PER_NODE": "4", "OMPI_COMM_WORLD_LOCAL_SIZE": "2"})); n != 2 || k != "OMPI_COMM_WORLD_LOCAL_SIZE" {
		t.Errorf("got %d from %s, want OpenMPI's 2", n, k)
	}
	if n, k := LocalRanksFromEnv(env(nil)); n != 1 || k != "" {
		t.Errorf("no launcher: %d %q", n, k)
	}
}

func set(t *testing.T, list string) Set {
	t.Helper()
	s, err := ParseList(list)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSharers(t *testing.T) {
	all := set(t, "0-7")
	for _, c := range []struct {
		name  string
		masks []Set
		want  []float64
	}{
		{"bound to own cores", []Set{set(t, "0-3"), set(t, "4-7")}, []float64{1, 1}},
		{"unbound", []Set{all, all, all, all}, []float64{4, 4, 4, 4}},
		{"bound to sockets", []Set{set(t, "0-3"), set(t, "0-3"), set(t, "4-7"), set(t, "4-7")}, []float64{2, 2, 2, 2}},
		{"mixed", []Set{all, set(t, "0-3")}, []float64{8.0 / 6, 4.0 / 2}},
	} {
		for i, w := range c.want {
			if g := Sharers(c.masks, i); g < w-1e-9 || g > w+1e-9 {
				t.Errorf("%s: rank %d shares %g ways, want %g", c.name, i, g, w)
			}
		}
	}
	if u := Union([]Set{set(t, "0-1"), set(t, "70")}); u.String() != "0-1,70" {
		t.Errorf("Union = %s", u)
	}
}

func TestSelf(t *testing.T) {
	s, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	if s.Count() < 1 {
		t.Fatalf("affinity mask %q is empty", s)
	}
}

func TestCheck(t *testing.T) {
	// Four ranks of two threads on a two-CPU node: oversubscribed.
	four := []Rank{{0, 2, 2, 0, 2}, {0, 2, 2, 0, 2}, {0, 2, 2, 0, 2}, {0, 2, 2, 0, 2}}
	got := Check(four)
	if len(got) != 1 || !strings.Contains(got[0], "oversubscribed: the node of rank 0 runs 4 ranks × 2 threads on 2 CPUs") {
		t.Errorf("4×2 on 2 CPUs: %q", got)
	}
	// Two nodes, each rank bound to one core but running four threads.
	bound := []Rank{{0, 4, 1, 0, 8}, {0, 4, 1, 0, 8}, {1, 4, 1, 0, 8}, {1, 4, 1, 0, 8}}
	got = Check(bound)
	if len(got) != 1 || !strings.HasPrefix(got[0], "rank 0 has an affinity mask of 1 CPU for its 4 threads (and 3 more ranks)") {
		t.Errorf("bound ranks: %q", got)
	}
	// A quota below the threads, and a node oversubscribed with uneven threads.
	got = Check([]Rank{{0, 3, 4, 2, 4}, {0, 2, 4, 0, 4}, {1, 1, 4, 0, 4}})
	if len(got) != 2 || !strings.Contains(got[0], "2 ranks with 5 threads in all on 4 CPUs") ||
		!strings.HasPrefix(got[1], "rank 0 has a cgroup CPU quota of 2 CPUs for its 3 threads:") {
		t.Errorf("quota and uneven: %q", got)
	}
	// A layout that fits: no lines.
	if got := Check([]Rank{{0, 4, 4, 0, 8}, {0, 4, 4, 0, 8}, {1, 8, 8, 8, 8}}); len(got) != 0 {
		t.Errorf("fitting layout: %q", got)
	}
}

package launcher

import (
	"strings"
	"testing"
)

// Check: several tasks from a launcher but a smaller MPI world is the
// srun --mpi=none (or missing PMIx) case, and names the fix.
func TestCheckLaunch(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, c := range []struct {
		size    int
		env     []string
		wantErr string
	}{
		{1, nil, ""},
		{1, []string{"SLURM_STEP_NUM_TASKS", "1"}, ""},
		{4, []string{"SLURM_STEP_NUM_TASKS", "4"}, ""},
		{1, []string{"SLURM_STEP_NUM_TASKS", "4"}, "srun --mpi=pmix"},
		{1, []string{"OMPI_COMM_WORLD_SIZE", "2"}, "mpirun"},
		{1, []string{"PMIX_SIZE", "8"}, "the launcher started 8 tasks"},
		{8, []string{"PMIX_SIZE", "8", "SLURM_STEP_NUM_TASKS", "8"}, ""},
	} {
		err := Check(c.size, env(c.env...))
		if (err == nil) != (c.wantErr == "") || err != nil && !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("size %d, env %v: err = %v, want %q", c.size, c.env, err, c.wantErr)
		}
	}
}

func TestLaunchedSize(t *testing.T) {
	env := func(k, v string) func(string) string {
		return func(key string) string {
			if key == k {
				return v
			}
			return ""
		}
	}
	if Launched(env("X", "1")) || Size(env("X", "1")) != 1 {
		t.Error("no launcher variable: launched")
	}
	if !Launched(env("PMI_RANK", "0")) || Size(env("PMI_SIZE", "6")) != 6 || Size(env("OMPI_COMM_WORLD_SIZE", "x")) != 1 {
		t.Error("launcher variables not read")
	}
}

func TestRank(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want int
	}{
		{nil, 0},
		{map[string]string{"OMPI_COMM_WORLD_RANK": "3"}, 3},
		{map[string]string{"PMIX_RANK": "2"}, 2},
		{map[string]string{"PMI_RANK": "1"}, 1},
		{map[string]string{"PMI_RANK": "x"}, 0},
	} {
		if got := Rank(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("%v: rank %d, want %d", c.env, got, c.want)
		}
	}
}

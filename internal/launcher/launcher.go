// Package launcher reads what an MPI launcher (mpirun, srun, a PMIx
// launcher) tells the processes it starts through their environment.
package launcher

import (
	"fmt"
	"strconv"
)

// Launched reports whether a launcher started this process as an MPI rank.
func Launched(getenv func(string) string) bool {
	for _, k := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK", "MPI_LOCALNRANKS"} {
		if getenv(k) != "" {
			return true
		}
	}
	return false
}

// Rank is this process's rank as the launcher set it, 0 when none did.
func Rank(getenv func(string) string) int {
	for _, k := range []string{"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"} {
		if r, err := strconv.Atoi(getenv(k)); err == nil && r >= 0 {
			return r
		}
	}
	return 0
}

// Size is the number of ranks a launcher started, 1 when none did.
func Size(getenv func(string) string) int {
	for _, k := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"} {
		if n, err := strconv.Atoi(getenv(k)); err == nil && n > 0 {
			return n
		}
	}
	return 1
}

// Check fails when a launcher started several tasks but MPI sees a world
// of size ranks, smaller than that: the tasks are independent copies
// (srun --mpi=none, a site without PMIx, an MPI library other than the
// launcher's) that would each run alone and race on the same files.
func Check(size int, getenv func(string) string) error {
	for _, v := range []struct{ env, launcher, fix string }{
		{"SLURM_STEP_NUM_TASKS", "srun", "srun --mpi=pmix (srun --mpi=list shows the plugins this Slurm has), or mpirun inside the allocation"},
		{"OMPI_COMM_WORLD_SIZE", "mpirun", "the mpirun of the MPI library supergcn is linked with (supergcn info; Fujitsu MPI's mpiexec sets it too)"},
		{"PMIX_SIZE", "the launcher", "a launcher of the MPI library supergcn is linked with (supergcn info)"},
	} {
		n, err := strconv.Atoi(getenv(v.env))
		if err != nil || n <= size {
			continue
		}
		return fmt.Errorf("%s started %d tasks (%s=%d) but MPI sees a world of %d rank(s): the MPI library did not get the launcher's process information (PMI), "+
			"so every task would run alone on the whole job and write the same files; start it with %s", v.launcher, n, v.env, n, size, v.fix)
	}
	return nil
}

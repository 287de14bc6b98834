package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/comm/mpicomm"
	"github.com/supergcn/supergcn/mpi"
)

// world is the process group a command runs in: MPI when launched by
// mpirun/srun (or forced with --mpi on), one process otherwise.
type world struct {
	mpi  bool
	wc   mpi.Comm
	comm comm.Comm
}

// launchedByMPI reports whether a launcher started this process as an MPI rank.
func launchedByMPI() bool {
	for _, k := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK", "MPI_LOCALNRANKS"} {
		if os.Getenv(k) != "" {
			return true
		}
	}
	return false
}

// launcherSize is the number of ranks a launcher started (from its
// environment), 1 when none did.
func launcherSize() int {
	for _, k := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"} {
		if n, err := strconv.Atoi(os.Getenv(k)); err == nil && n > 0 {
			return n
		}
	}
	return 1
}

// startWorld initialises MPI according to mode (auto|on|off).
func startWorld(mode string) (*world, error) {
	use := false
	switch mode {
	case "auto":
		use = launchedByMPI()
	case "on":
		use = true
	case "off":
	default:
		return nil, usageError{fmt.Sprintf("--mpi: %q is not auto, on or off", mode)}
	}
	if !use {
		return &world{comm: comm.Single()}, nil
	}
	if _, err := mpi.InitThread(mpi.ThreadSerialized); err != nil {
		return nil, fmt.Errorf("MPI initialisation: %w", err)
	}
	wc := mpi.World()
	return &world{mpi: true, wc: wc, comm: mpicomm.New(wc)}, nil
}

// fortranComm returns the world communicator's Fortran handle (for ParMETIS).
func (w *world) fortranComm() int {
	if !w.mpi {
		return 0
	}
	return w.wc.Fortran()
}

// finish ends the world. With an error on a multi-rank job it aborts every
// rank, so no rank is left waiting in a collective; it returns the error
// for the caller to print (rank-prefixed under MPI).
func (w *world) finish(err error) error {
	if !w.mpi {
		return err
	}
	if err != nil {
		err = fmt.Errorf("rank %d: %w", w.comm.Rank(), err)
		if w.comm.Size() > 1 {
			fmt.Fprintf(os.Stderr, "supergcn: %s\n", userMessage(err))
			w.comm.Abort(1)
		}
		mpi.Finalize()
		return err
	}
	return mpi.Finalize()
}

// mpiLibraryVersion names the MPI library this binary is linked with.
func mpiLibraryVersion() string { return mpi.LibraryVersion() }

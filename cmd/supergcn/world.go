package main

import (
	"errors"
	"fmt"
	"github.com/supergcn/supergcn/cmd/internal/flagtab"
	"github.com/supergcn/supergcn/internal/procsig"
	"os"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/comm/mpicomm"
	"github.com/supergcn/supergcn/dataset"
	"github.com/supergcn/supergcn/internal/launcher"
	"github.com/supergcn/supergcn/mpi"
	"github.com/supergcn/supergcn/partition/dist"
	"github.com/supergcn/supergcn/train"
)

// world is the process group a command runs in: MPI when launched by
// mpirun/srun (or forced with --mpi on), one process otherwise.
type world struct {
	mpi  bool
	wc   mpi.Comm
	comm comm.Comm
}

// launchedByMPI reports whether a launcher started this process as an MPI rank.
func launchedByMPI() bool { return launcher.Launched(os.Getenv) }

// launcherSize is the number of ranks a launcher started, 1 when none did.
func launcherSize() int { return launcher.Size(os.Getenv) }

// launcherRank is this process's rank as the launcher set it (0 alone).
func launcherRank() int { return launcher.Rank(os.Getenv) }

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
		return nil, usageError(fmt.Sprintf("--mpi: %q is not auto, on or off", mode))
	}
	if !use {
		if err := launcher.Check(1, os.Getenv); err != nil {
			return nil, err
		}
		return &world{comm: comm.Single()}, nil
	}
	// A rank that ends inside MPI's start-up can wedge the launcher: the
	// stop signals wait until it is over.
	release := procsig.Hold()
	defer release()
	if _, err := mpi.InitThread(mpi.ThreadSerialized); err != nil {
		return nil, fmt.Errorf("MPI initialisation: %w", err)
	}
	wc := mpi.World()
	w := &world{mpi: true, wc: wc, comm: mpicomm.New(wc)}
	if err := launcher.Check(w.comm.Size(), os.Getenv); err != nil {
		mpi.Finalize()
		return nil, err
	}
	return w, nil
}

// silentExit ends the process with a status and no message (the message
// was printed by rank 0).
type silentExit struct{ code int }

func (s silentExit) Error() string { return fmt.Sprintf("exit status %d", s.code) }

// parmetisMPI is what ParMETIS needs of w, nil outside MPI.
func (w *world) parmetisMPI() *dataset.MPI {
	if w == nil || !w.mpi {
		return nil
	}
	return &dataset.MPI{Fortran: w.wc.Fortran(), Serialize: mpi.Serialize}
}

// finish ends the world. With an error on a multi-rank job it aborts every
// rank, so no rank is left waiting in a collective; it returns the error
// for the caller to print (rank-prefixed under MPI).
func (w *world) finish(err error) error {
	if !w.mpi {
		return err
	}
	var stopped *train.StoppedError
	if errors.As(err, &stopped) {
		// Every rank stopped after the same epoch: end MPI normally. Rank 0
		// prints before MPI_Finalize, whose fence keeps the other ranks
		// (whose non-zero exit makes a launcher end the job) from leaving
		// before the message is out.
		if w.comm.Rank() == 0 {
			fmt.Fprintf(os.Stderr, "supergcn: %s\n", flagtab.UserMessage(err))
		}
		if ferr := mpi.Finalize(); ferr != nil {
			return ferr
		}
		return silentExit{exitStopped}
	}
	var peer *dist.PeerError
	var agreed *dist.AgreedError
	switch {
	case errors.As(err, &peer): // the failing rank prints the cause
		mpi.Finalize()
		return silentExit{1}
	case errors.As(err, &agreed): // every rank knows: no abort needed
		// Printed before MPI_Finalize, whose fence keeps the other ranks
		// (which exit non-zero at once, ending the job) from leaving first.
		fmt.Fprintf(os.Stderr, "supergcn: %s\n", flagtab.UserMessage(fmt.Errorf("rank %d: %w", w.comm.Rank(), err)))
		mpi.Finalize()
		return silentExit{1}
	}
	if err != nil {
		err = fmt.Errorf("rank %d: %w", w.comm.Rank(), err)
		if w.comm.Size() > 1 {
			fmt.Fprintf(os.Stderr, "supergcn: %s\n", flagtab.UserMessage(err))
			w.comm.Abort(1)
		}
		mpi.Finalize()
		return err
	}
	return mpi.Finalize()
}

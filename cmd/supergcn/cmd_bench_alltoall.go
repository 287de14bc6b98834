package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/perfmodel"
	"github.com/supergcn/supergcn/perfmodel/measure"
)

func init() {
	registerBench("alltoall", "the exchange's all-to-all of fp32 rows between the ranks of one node (under mpirun): the intra-node link of a profile", benchAlltoall)
}

// benchAlltoall measures the intra-node link as the exchange uses it: every
// rank posts a non-blocking all-to-all of fp32 rows to every other rank and
// drives it by polling (comm.Tester, every 50 µs, as exchange does), all
// ranks at once. The per-rank bandwidth is the bytes a rank sends over the
// slowest rank's time; the latency is that of an all-to-all of one value a
// peer, per message. With --profile the link replaces the profile's
// intra_node (which `bench profile` can only assume).
func benchAlltoall(args []string) error {
	fs := newFlagSet("bench alltoall", "[--rows N] [--width W] [--reps R] [--profile FILE]   (under mpirun, the ranks of one node)")
	rows := fs.Int("rows", 40_000, "fp32 rows each rank sends to each other rank")
	width := fs.Int("width", 100, "values a row")
	reps := fs.Int("reps", 9, "timed repetitions (after one warm-up); the median is kept")
	profile := fs.String("profile", "", "set this profile's intra_node to the measured link (perfmodel.Profile JSON, rewritten in place by rank 0)")
	mpiMode := fs.String("mpi", "auto", "auto|on|off")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *rows < 1 || *width < 1 || *reps < 1 {
		return usageError("--rows, --width and --reps must be positive")
	}
	var prof *perfmodel.Profile
	if *profile != "" {
		// every rank reads it, so a bad file fails them all before MPI work
		p, err := perfmodel.LoadProfile(*profile)
		if err != nil {
			return fmt.Errorf("--profile: %w", err)
		}
		if err := container.CheckWritable(*profile); err != nil {
			return fmt.Errorf("--profile: %w", err)
		}
		prof = p
	}
	w, err := startWorld(*mpiMode)
	if err != nil {
		return err
	}
	r, err := measure.Alltoall(w.comm, *rows, *width, *reps)
	if errors.Is(err, measure.ErrAlltoallRanks) {
		err = usageError("bench alltoall: run it under mpirun with at least 2 ranks (the ranks of one node)")
	}
	if err == nil && w.comm.Rank() == 0 {
		fmt.Fprintf(os.Stderr, "bench alltoall: %d ranks, %d rows × %d a peer: %.3f s (slowest rank, median of %d): %.2f GB/s a rank; %.1f µs a message\n",
			r.Ranks, r.Rows, r.Width, r.Seconds, *reps, r.Link.GBs, r.Link.LatencyUS)
	}
	if err == nil && prof != nil && w.comm.Rank() == 0 {
		prof.IntraNode = r.Link
		prof.Source += fmt.Sprintf("; intra_node measured by `supergcn bench alltoall` (%d ranks, %d rows × %d a peer, %s)",
			w.comm.Size(), *rows, *width, time.Now().UTC().Format("2006-01-02"))
		if err = prof.Validate(); err == nil {
			err = perfmodel.WriteProfile(*profile, prof)
		}
	}
	return w.finish(err)
}

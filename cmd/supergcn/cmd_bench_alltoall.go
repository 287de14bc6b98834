package main

import (
	"fmt"
	"math"
	"os"
	"sort"
	"time"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/perfmodel"
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
		return usageError{"--rows, --width and --reps must be positive"}
	}
	var prof *perfmodel.Profile
	if *profile != "" {
		// every rank reads it, so a bad file fails them all before MPI work
		p, err := perfmodel.LoadProfile(*profile)
		if err != nil {
			return fmt.Errorf("--profile: %w", err)
		}
		if err := checkWritable(*profile); err != nil {
			return fmt.Errorf("--profile: %w", err)
		}
		prof = p
	}
	w, err := startWorld(*mpiMode)
	if err != nil {
		return err
	}
	link, err := measureAlltoall(w.comm, *rows, *width, *reps)
	if err == nil && prof != nil && w.comm.Rank() == 0 {
		prof.IntraNode = link
		prof.Source += fmt.Sprintf("; intra_node measured by `supergcn bench alltoall` (%d ranks, %d rows × %d a peer, %s)",
			w.comm.Size(), *rows, *width, time.Now().UTC().Format("2006-01-02"))
		if err = prof.Validate(); err == nil {
			err = perfmodel.WriteProfile(*profile, prof)
		}
	}
	return w.finish(err)
}

// measureAlltoall returns the link the all-to-alls of c's ranks see (the
// same on every rank).
func measureAlltoall(c comm.Comm, rows, width, reps int) (perfmodel.Link, error) {
	p := c.Size()
	if p < 2 {
		return perfmodel.Link{}, usageError{"bench alltoall: run it under mpirun with at least 2 ranks (the ranks of one node)"}
	}
	per := rows * width
	if per > math.MaxInt32 || per*p > math.MaxInt/8 {
		return perfmodel.Link{}, usageError{fmt.Sprintf("--rows × --width = %d values a peer: too many", per)}
	}
	// time returns the slowest rank's median seconds of an all-to-all of n
	// values a peer (none to itself).
	timeOf := func(n int) (float64, error) {
		send, recv := make([]float32, n*p), make([]float32, n*p)
		for i := range send {
			send[i] = float32(i)
		}
		counts, displs := make([]int, p), make([]int, p)
		for q := range counts {
			if q != c.Rank() {
				counts[q] = n
			}
			displs[q] = q * n
		}
		ts := make([]float64, 0, reps)
		for rep := 0; rep <= reps; rep++ {
			if err := c.Barrier(); err != nil {
				return 0, err
			}
			t0 := time.Now()
			req, err := c.IalltoallvF32(send, counts, displs, recv, counts, displs)
			if err != nil {
				return 0, err
			}
			if err := pollUntilDone(req); err != nil {
				return 0, err
			}
			t := []float64{time.Since(t0).Seconds()}
			if err := c.AllreduceMaxF64(t); err != nil {
				return 0, err
			}
			if rep > 0 {
				ts = append(ts, t[0])
			}
		}
		sort.Float64s(ts)
		return ts[len(ts)/2], nil
	}
	small, err := timeOf(1)
	if err != nil {
		return perfmodel.Link{}, err
	}
	big, err := timeOf(per)
	if err != nil {
		return perfmodel.Link{}, err
	}
	msgs := float64(p - 1)
	lat := small / msgs
	bytes := msgs * float64(per) * 4
	bw := bytes / math.Max(big-small, big/2) / 1e9 // the payload's time beyond the messages' latency
	link := perfmodel.Link{LatencyUS: lat * 1e6, GBs: bw, Efficiency: 1}
	if c.Rank() == 0 {
		fmt.Fprintf(os.Stderr, "bench alltoall: %d ranks, %d rows × %d a peer: %.3f s (slowest rank, median of %d): %.2f GB/s a rank; %.1f µs a message\n",
			p, rows, width, big, reps, bw, lat*1e6)
	}
	return link, nil
}

// pollUntilDone drives req to completion as exchange does while its local
// product runs: MPI_Test every 50 µs (a non-blocking collective moves
// mostly inside MPI calls), or a plain Wait when req cannot be tested.
func pollUntilDone(req comm.Request) error {
	t, ok := req.(comm.Tester)
	if !ok {
		return req.Wait()
	}
	tick := time.NewTicker(50 * time.Microsecond)
	defer tick.Stop()
	for {
		done, err := t.Test()
		if err != nil || done {
			return err
		}
		<-tick.C
	}
}

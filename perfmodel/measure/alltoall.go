package measure

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/perfmodel"
)

// ErrAlltoallRanks: the all-to-all needs at least two ranks.
var ErrAlltoallRanks = fmt.Errorf("the all-to-all needs at least 2 ranks (the ranks of one node)")

// AlltoallResult is the all-to-all of rows×width fp32 values a peer,
// every rank at once, and the link it shows.
type AlltoallResult struct {
	Ranks       int
	Seconds     float64 // the slowest rank's median
	Link        perfmodel.Link
	Rows, Width int
}

// Alltoall measures the intra-node link as the exchange uses it: every
// rank of c posts a non-blocking all-to-all of rows fp32 rows of width
// values to every other rank and drives it by polling (comm.Tester, every
// 50 µs, as exchange does), all ranks at once, reps times after a warm-up.
// The per-rank bandwidth is the bytes a rank sends over the slowest rank's
// median time beyond the messages' latency; the latency is that of an
// all-to-all of one value a peer, per message. Every rank returns the same.
func Alltoall(c comm.Comm, rows, width, reps int) (AlltoallResult, error) {
	p := c.Size()
	if p < 2 {
		return AlltoallResult{}, ErrAlltoallRanks
	}
	per := rows * width
	if rows < 1 || width < 1 || reps < 1 || per > math.MaxInt32 || per*p > math.MaxInt/8 {
		return AlltoallResult{}, fmt.Errorf("%d rows × %d values a peer, %d repetitions: want positive counts, at most 2^31 values a peer", rows, width, reps)
	}
	small, err := alltoallTime(c, 1, reps)
	if err != nil {
		return AlltoallResult{}, err
	}
	big, err := alltoallTime(c, per, reps)
	if err != nil {
		return AlltoallResult{}, err
	}
	msgs := float64(p - 1)
	lat := small / msgs
	bytes := msgs * float64(per) * 4
	bw := bytes / math.Max(big-small, big/2) / 1e9 // the payload's time beyond the messages' latency
	return AlltoallResult{Ranks: p, Seconds: big, Rows: rows, Width: width,
		Link: perfmodel.Link{LatencyUS: lat * 1e6, GBs: bw, Efficiency: 1}}, nil
}

// alltoallTime returns the slowest rank's median seconds of an
// all-to-all of n values a peer (none to itself).
func alltoallTime(c comm.Comm, n, reps int) (float64, error) {
	p := c.Size()
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

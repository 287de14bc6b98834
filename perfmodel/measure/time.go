package measure

import (
	"sort"
	"sync"
	"time"

	"gonum.org/v1/gonum/floats"
)

// Time runs fn once to warm up, then reps times, with before run ahead of
// the warm-up and of every timed run, outside the timing; it returns the
// median and the minimum in milliseconds.
func Time(before, fn func(), reps int) (median, minimum float64) {
	before()
	fn()
	ts := make([]float64, reps)
	for i := range ts {
		before()
		t := time.Now()
		fn()
		ts[i] = ms(time.Since(t))
	}
	sort.Float64s(ts)
	median = ts[reps/2]
	if reps%2 == 0 {
		median = (ts[reps/2-1] + ts[reps/2]) / 2
	}
	return median, ts[0]
}

// StreamResult is STREAM's copy and triad bandwidth, GB/s, best of the
// repetitions.
type StreamResult struct {
	Copy, Triad float64
}

// Stream measures STREAM copy (a = b, 16 B per element) and triad
// (a = b + s·c, 24 B per element) on float64 arrays of mib MiB each (three
// arrays; keep them ≫ the last-level cache), split statically over threads
// goroutines; it reports the best of reps, as STREAM does. Counted bytes
// exclude write-allocate traffic, as STREAM's do.
func Stream(threads, mib, reps int) StreamResult {
	n := mib << 20 / 8
	a, b, c := make([]float64, n), make([]float64, n), make([]float64, n)
	par := func(fn func(lo, hi int)) {
		var wg sync.WaitGroup
		for t := 0; t < threads; t++ {
			lo, hi := n*t/threads, n*(t+1)/threads
			wg.Add(1)
			go func() { defer wg.Done(); fn(lo, hi) }()
		}
		wg.Wait()
	}
	// first touch in parallel, as STREAM does
	par(func(lo, hi int) {
		for i := lo; i < hi; i++ {
			a[i], b[i], c[i] = 1, 2, 0.5
		}
	})
	best := func(bytes float64, fn func(lo, hi int)) float64 {
		bw := 0.0
		for r := 0; r < reps; r++ {
			t := time.Now()
			par(fn)
			bw = max(bw, bytes/time.Since(t).Seconds()/1e9)
		}
		return bw
	}
	var res StreamResult
	res.Copy = best(16*float64(n), func(lo, hi int) { copy(a[lo:hi], b[lo:hi]) })
	res.Triad = best(24*float64(n), func(lo, hi int) { floats.AddScaledTo(a[lo:hi], b[lo:hi], 3, c[lo:hi]) })
	return res
}

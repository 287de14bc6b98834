// Package par is supergcn's one parallel-for. Every parallel loop of a rank
// (sparse aggregation, dense products and elementwise passes, quantisation,
// graph generation and preprocessing) runs through it, on at most Threads()
// goroutines: the rank's thread budget, which is GOMAXPROCS. The command
// line sets it once, from --threads (by default the cores of the node
// divided among its ranks), so ranks started together by mpirun never
// oversubscribe the cores; libraries only read it.
//
// For splits a range into contiguous blocks; Blocks hands out a fixed set of
// blocks dynamically, so a result that depends on the blocks (a reduction
// in block order) does not depend on the thread count; Pool keeps
// persistent workers for loops run many times per second.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Threads returns the rank's thread budget (GOMAXPROCS).
func Threads() int { return runtime.GOMAXPROCS(0) }

// Workers returns n when positive, else the budget: how callers resolve a
// "0 = default" thread count.
func Workers(n int) int {
	if n > 0 {
		return n
	}
	return Threads()
}

// For splits [0, n) into at most Threads() contiguous blocks of at least
// grain items and runs fn on them concurrently, returning when all are
// done. When one block suffices fn runs inline on the caller.
func For(n, grain int, fn func(lo, hi int)) {
	blocks := max(1, min(Threads(), n/max(grain, 1)))
	if blocks == 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for b := range blocks {
		lo, hi := b*n/blocks, (b+1)*n/blocks
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}

// Blocks runs fn(0), …, fn(blocks-1) on up to workers goroutines (≤ 0: the
// budget; never more than Threads()), handing the blocks out dynamically.
// With one worker they run in order on the caller.
func Blocks(blocks, workers int, fn func(i int)) {
	w := min(Workers(workers), Threads(), blocks)
	if w <= 1 {
		for i := range blocks {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < blocks; i = int(next.Add(1) - 1) {
				fn(i)
			}
		}()
	}
	wg.Wait()
}

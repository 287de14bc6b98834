package par

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestFor: every index is visited once, in at most Threads() blocks of at
// least grain items (one inline block for small n).
func TestFor(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	for _, c := range []struct{ n, grain, maxBlocks int }{{0, 1, 1}, {5, 10, 1}, {100, 10, 3}, {100, 40, 2}, {7, 0, 3}} {
		seen := make([]int32, c.n)
		var blocks atomic.Int32
		For(c.n, c.grain, func(lo, hi int) {
			blocks.Add(1)
			if c.n > 0 && hi-lo < min(c.grain, c.n) {
				t.Errorf("n %d grain %d: block [%d,%d) below the grain", c.n, c.grain, lo, hi)
			}
			for i := lo; i < hi; i++ {
				atomic.AddInt32(&seen[i], 1)
			}
		})
		if b := int(blocks.Load()); b < 1 || b > c.maxBlocks {
			t.Errorf("n %d grain %d: %d blocks, want 1..%d", c.n, c.grain, b, c.maxBlocks)
		}
		for i, v := range seen {
			if v != 1 {
				t.Fatalf("n %d grain %d: index %d visited %d times", c.n, c.grain, i, v)
			}
		}
	}
}

// TestBlocks: every block runs once; never more goroutines than the budget
// or the workers asked for; one worker runs the blocks in order.
func TestBlocks(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for _, workers := range []int{0, 1, 2, 8} {
		var running, peak atomic.Int32
		var mu sync.Mutex
		var order []int
		Blocks(50, workers, func(i int) {
			r := running.Add(1)
			for {
				p := peak.Load()
				if r <= p || peak.CompareAndSwap(p, r) {
					break
				}
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			runtime.Gosched()
			running.Add(-1)
		})
		limit := int32(min(Workers(workers), 2))
		if peak.Load() > limit {
			t.Errorf("workers %d: %d blocks ran at once, budget 2", workers, peak.Load())
		}
		sorted := slices.Sorted(slices.Values(order))
		if len(order) != 50 || sorted[0] != 0 || sorted[49] != 49 || len(slices.Compact(slices.Clone(sorted))) != 50 {
			t.Fatalf("workers %d: blocks %v", workers, order)
		}
		if workers == 1 && !slices.Equal(order, sorted) {
			t.Fatalf("one worker ran out of order: %v", order)
		}
	}
}

// TestPool: Run gives each worker index once per run; after Close the
// caller runs alone.
func TestPool(t *testing.T) {
	p := NewPool(3)
	if p.Threads() != 3 {
		t.Fatalf("Threads() = %d", p.Threads())
	}
	for range 5 {
		var hits [3]atomic.Int32
		p.Run(func(w int) { hits[w].Add(1) })
		for w := range hits {
			if hits[w].Load() != 1 {
				t.Fatalf("worker %d ran %d times", w, hits[w].Load())
			}
		}
	}
	p.Close()
	p.Close()
	var n atomic.Int32
	p.Run(func(w int) {
		if w != 0 {
			t.Errorf("worker %d after Close", w)
		}
		n.Add(1)
	})
	if n.Load() != 1 {
		t.Fatalf("%d calls after Close", n.Load())
	}
}

// BenchmarkDispatch measures the fixed cost of one parallel product's
// handoff: a persistent Pool against spawning goroutines per
// call (the alternative the pool replaces), with an empty body.
func BenchmarkDispatch(b *testing.B) {
	for _, threads := range []int{2, 4, 16} {
		b.Run(fmt.Sprintf("pool/threads=%d", threads), func(b *testing.B) {
			p := NewPool(threads)
			defer p.Close()
			for b.Loop() {
				p.Run(func(int) {})
			}
		})
		b.Run(fmt.Sprintf("spawn/threads=%d", threads), func(b *testing.B) {
			for b.Loop() {
				var wg sync.WaitGroup
				for w := 1; w < threads; w++ {
					wg.Add(1)
					go func() { defer wg.Done() }()
				}
				wg.Wait()
			}
		})
	}
}

// TestOneParallelFor: outside this package no library code starts a group
// of workers (sync.WaitGroup), so every parallel loop stays within the
// thread budget. Allowed elsewhere: comm's goroutine ranks (a test
// harness of P processes), the STREAM reference of supergcn bench, and the
// progress reporter's one ticking goroutine (no computation).
func TestOneParallelFor(t *testing.T) {
	allowed := map[string]bool{"comm/group.go": true, "perfmodel/measure/time.go": true, "internal/progress/progress.go": true}
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || rel == filepath.Join("internal", "par")) && rel != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || allowed[filepath.ToSlash(rel)] {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), "sync.WaitGroup") {
			t.Errorf("%s runs its own worker group: use internal/par", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

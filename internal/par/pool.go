package par

import "sync"

// Pool is a set of persistent worker goroutines (aggr's Engine keeps one
// for its many small products per epoch). Run hands a
// function to every worker and runs it on the calling goroutine too (as
// worker 0), returning when all have finished; one run at a time (concurrent
// callers wait on mu). Workers start on the first parallel run, so engines
// that only ever see small products cost nothing. Each worker's channel
// holds one job, so handing out a run does not wait for every worker to be
// scheduled. BenchmarkDispatch measures the handoff at about 1 µs for 2–4
// threads, on par with spawning goroutines per call and far below the
// smallest product aggr parallelises.
type Pool struct {
	helpers int // worker goroutines besides the caller

	mu      sync.Mutex // serialises runs, guards started/closed/work
	started bool
	closed  bool
	work    []chan *poolJob
}

type poolJob struct {
	fn func(worker int)
	wg sync.WaitGroup
}

// NewPool returns a pool of threads workers, the caller included (≤ 0: the
// budget).
func NewPool(threads int) *Pool { return &Pool{helpers: Workers(threads) - 1} }

// Threads returns the pool's worker count, the caller included.
func (p *Pool) Threads() int { return p.helpers + 1 }

// Run calls fn(w) for w = 0..threads-1 concurrently and waits for all. After
// close it calls fn(0) alone on the caller; fn must therefore not depend on
// every worker index being used (the dynamic schedulers in this package
// never do).
func (p *Pool) Run(fn func(worker int)) {
	if p.helpers == 0 {
		fn(0)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		fn(0)
		return
	}
	if !p.started {
		p.started = true
		p.work = make([]chan *poolJob, p.helpers)
		for i := range p.work {
			ch := make(chan *poolJob, 1)
			p.work[i] = ch
			go worker(ch, i+1)
		}
	}
	j := &poolJob{fn: fn}
	j.wg.Add(p.helpers)
	for _, ch := range p.work {
		ch <- j
	}
	fn(0)
	j.wg.Wait()
}

func worker(ch chan *poolJob, id int) {
	for j := range ch {
		j.fn(id)
		j.wg.Done()
	}
}

// Close stops the workers; later runs execute on the caller alone.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	for _, ch := range p.work {
		close(ch)
	}
	p.work = nil
}

package aggr

import (
	"sync/atomic"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/rowk"
)

// task is a rectangle of the output: rows [r0,r1), columns [c0,c1).
type task struct {
	r0, r1 int32
	c0, c1 int32
}

// plan is the 2-D work partition of one CSR at one feature width.
type plan struct {
	tasks []task
}

const (
	chunksPerThread = 8       // over-decomposition for the dynamic scheduler
	minTaskWork     = 1 << 15 // floats accumulated: below this a task is not worth a handoff
	colAlign        = 16      // column blocks are multiples of 16 floats (64 B)
)

// newPlan splits the rows of a into chunks of about equal cost, cost(row) =
// nnz(row)+1 (the +1 for writing the row), using binary search over the
// prefix sums Ptr. A hub row costlier than a chunk becomes its own chunk,
// split into column blocks; when the rows are few and wide, every chunk is
// split into column blocks so that every thread gets work. Hub tasks come
// first so that the dynamic scheduler starts them early.
func newPlan(a *graph.CSR, f, threads int) *plan {
	n := a.NumRows
	nnz := a.NNZ()
	total := nnz + int64(n)
	if n == 0 || f == 0 {
		return &plan{}
	}
	if threads <= 1 || total*int64(f) <= 2*minTaskWork {
		return &plan{tasks: []task{{0, int32(n), 0, int32(f)}}}
	}
	target := (total + int64(threads*chunksPerThread) - 1) / int64(threads*chunksPerThread)
	if m := int64(minTaskWork/f) + 1; target < m {
		target = m
	}
	cost := func(v int) int64 { return a.Ptr[v] + int64(v) } // prefix cost of rows [0,v)
	var hubs, rest []task
	for v := 0; v < n; {
		// largest w > v with cost(w)-cost(v) ≤ target (at least one row)
		lo, hi := v+1, n
		goal := cost(v) + target
		for lo < hi {
			mid := int(uint(lo+hi+1) >> 1)
			if cost(mid) <= goal {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		w := lo
		c := cost(w) - cost(v)
		if w == v+1 && c > target && f >= 2*colAlign {
			// hub row: split its columns
			nb := int((c + target - 1) / target)
			hubs = appendColBlocks(hubs, int32(v), int32(w), f, nb)
		} else {
			rest = append(rest, task{int32(v), int32(w), 0, int32(f)})
		}
		v = w
	}
	if want := threads * chunksPerThread / 2; len(rest) > 0 && len(rest) < want && f >= 4*colAlign {
		// few (wide) rows: split every chunk into column blocks too
		nb := (want + len(rest) - 1) / len(rest)
		split := make([]task, 0, len(rest)*nb)
		for _, t := range rest {
			split = appendColBlocks(split, t.r0, t.r1, f, nb)
		}
		rest = split
	}
	return &plan{tasks: append(hubs, rest...)}
}

// appendColBlocks appends rows [r0,r1) split into at most nb column blocks
// whose bounds are multiples of colAlign (the last one ends at f).
func appendColBlocks(ts []task, r0, r1 int32, f, nb int) []task {
	if maxb := f / colAlign; nb > maxb {
		nb = maxb
	}
	if nb < 1 {
		nb = 1
	}
	prev := 0
	for i := 1; i <= nb; i++ {
		c := f
		if i < nb {
			c = (i*f/nb + colAlign/2) / colAlign * colAlign
		}
		if c <= prev {
			continue
		}
		ts = append(ts, task{r0, r1, int32(prev), int32(c)})
		prev = c
	}
	return ts
}

// runner executes one product over a plan.
type runner struct {
	k     kernel
	rk    rowk.Set
	a     *graph.CSR
	x     []float32
	out   []float32
	f     int
	scale []float32 // row scale of out (nil: none)
	acc   bool
	tasks []task
	next  atomic.Int64

	// max products (doMax): the argument table (nil for a sum), base and
	// merge as ApplyMax's
	arg   []int32
	base  int32
	merge bool
}

// scratch is a worker's private buffer for the per-entry weights of a
// scaled product.
type scratch struct {
	w []float32
}

func (r *runner) worker(int) {
	var s scratch
	for {
		t := r.next.Add(1) - 1
		if t >= int64(len(r.tasks)) {
			return
		}
		if r.arg != nil {
			r.doMax(&r.tasks[t])
		} else {
			r.do(&r.tasks[t], &s)
		}
	}
}

// do computes the output rectangle t.
func (r *runner) do(t *task, s *scratch) {
	a, f := r.a, r.f
	c0, c1 := int(t.c0), int(t.c1)
	xs := r.x[min(c0, len(r.x)):] // x may be empty (no columns, so no entries)
	for v := int(t.r0); v < int(t.r1); v++ {
		o := r.out[v*f+c0 : v*f+c1 : v*f+c1]
		if !r.acc {
			clear(o)
		}
		lo, hi := a.Ptr[v], a.Ptr[v+1]
		if lo == hi {
			continue
		}
		idx := a.Idx[lo:hi:hi]
		// The scale of an overwritten row multiplies the finished row while
		// it is in cache (rounded as a scaling after the sum); that of an
		// accumulated row rides in per-entry weights (one pass, no
		// temporary row).
		post := r.scale != nil && !r.acc
		switch {
		case r.scale != nil && !post:
			r.k.rowsW(o, xs, f, idx, s.weights(r.scale[v], a.Val, lo, hi))
		case a.Val != nil:
			r.k.rowsW(o, xs, f, idx, a.Val[lo:hi:hi])
		default:
			r.k.rows(o, xs, f, idx)
		}
		if post {
			r.rk.Scale(o, o, r.scale[v])
		}
	}
}

// weights returns the per-entry weights sv·val[k] of entries [lo,hi) of a
// scaled product (sv alone when val is nil).
func (s *scratch) weights(sv float32, val []float32, lo, hi int64) []float32 {
	n := int(hi - lo)
	if cap(s.w) < n {
		s.w = make([]float32, n+n/4)
	}
	w := s.w[:n]
	if val != nil {
		for k, v := range val[lo:hi] {
			w[k] = sv * v
		}
	} else {
		for k := range w {
			w[k] = sv
		}
	}
	return w
}

// Package aggr holds the sparse aggregation operators of a full-batch GNN:
// CSR SpMM (weighted, unweighted, row-scaled for mean), its transpose for the
// backward pass, and COO index_add, with SIMD kernels chosen at start-up.
//
// Design (after SuperGCN): rows are clustered by destination so every output
// row is written by exactly one goroutine, once (no atomics); a row is
// produced by a micro-kernel that walks its column blocks, accumulates the
// gathered source rows in vector registers and stores once (dispatch.go,
// kernels_*.go). Work is split two-dimensionally, rows into chunks balanced
// by nnz and, for hub rows or few wide rows, columns into blocks; the chunks
// are handed out dynamically to the Engine's persistent workers (plan.go,
// internal/par's Pool, on the rank's thread budget).
//
// The public API below is the seam the rest of supergcn uses; internals
// (kernels, threading) may change behind it.
package aggr

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/par"
	"github.com/supergcn/supergcn/internal/rowk"
)

// Engine runs operators on a fixed number of goroutines with one kernel.
// Its methods and those of its Ops are safe for concurrent use; parallel
// products on one Engine run one at a time.
type Engine struct {
	threads int
	k       kernel
	rk      rowk.Set // the row kernels of the scaled products' row scaling
	pool    *par.Pool
}

// New returns an engine using the given number of threads (≤ 0: the
// rank's budget, par.Threads) and kernel: one of Kernels(), "auto" (the best; any case), or
// "" (the one $SUPERGCN_KERNEL names, else the best). A kernel this CPU (or
// build: the noasm tag keeps only generic) cannot run is a *dispatch.Error.
//
// The worker goroutines start with the first parallel product; Close stops
// them (an unreachable Engine is also cleaned up by the runtime).
func New(threads int, kernel string) (*Engine, error) {
	k, err := lookupKernel(kernel)
	if err != nil {
		return nil, err
	}
	rk, err := rowk.Lookup(kernel)
	if err != nil { // a name the row kernels lack (dispatch maps most): the environment's
		rk = rowk.Default()
	}
	threads = par.Workers(threads)
	e := &Engine{threads: threads, k: k, rk: rk, pool: par.NewPool(threads)}
	runtime.AddCleanup(e, func(p *par.Pool) { p.Close() }, e.pool)
	return e, nil
}

// Threads returns the number of worker goroutines (the caller included).
func (e *Engine) Threads() int { return e.threads }

// KernelName returns the name of the engine's kernel (see Kernels).
func (e *Engine) KernelName() string { return e.k.name }

// Close stops the engine's worker goroutines. It is optional (an
// unreachable Engine is cleaned up anyway) and idempotent; products after
// Close still work, on the calling goroutine alone.
func (e *Engine) Close() { e.pool.Close() }

// Op is a sparse matrix prepared for repeated application: work partitions
// (per feature width) and the transpose, when first needed, are computed
// once.
type Op struct {
	e *Engine
	a *graph.CSR

	atOnce sync.Once
	at     *graph.CSR

	mu    sync.Mutex
	plans map[planKey]*plan
}

type planKey struct {
	transposed bool
	width      int
}

// Prepare prepares a for repeated products. a must stay unmodified. It
// panics when a violates the CSR invariants (graph.CSR.Validate): the
// kernels read x at the stored column ids without bounds checks.
func (e *Engine) Prepare(a *graph.CSR) *Op {
	if err := a.Validate(); err != nil {
		panic("aggr.Prepare: " + err.Error())
	}
	return &Op{e: e, a: a}
}

// PrepareIndexAdd prepares the COO scatter-add out[dst[e]] += x[src[e]]
// (torch index_add_(0, dst, x[src])) over nOut output rows and nIn input
// rows. The edges are grouped by dst once (stable counting sort: the CSR's
// Idx is src permuted by that sort); no feature data moves and Apply needs
// no atomics. Apply(x, out, true) adds into out, Apply(x, out, false)
// overwrites it; ApplyT is the gather-back x'[src[e]] += g[dst[e]] of the
// backward pass. It panics on an id out of range or unequal lengths.
func (e *Engine) PrepareIndexAdd(dst, src []int32, nOut, nIn int) *Op {
	if len(dst) != len(src) {
		panic(fmt.Sprintf("aggr.PrepareIndexAdd: len(dst)=%d != len(src)=%d", len(dst), len(src)))
	}
	for i := range dst {
		if d := dst[i]; d < 0 || int(d) >= nOut {
			panic(fmt.Sprintf("aggr.PrepareIndexAdd: dst[%d]=%d outside [0,%d)", i, d, nOut))
		}
		if s := src[i]; s < 0 || int(s) >= nIn {
			panic(fmt.Sprintf("aggr.PrepareIndexAdd: src[%d]=%d outside [0,%d)", i, s, nIn))
		}
	}
	return &Op{e: e, a: graph.FromCOO(nOut, nIn, src, dst, nil)}
}

// CSR returns the matrix the operator applies.
func (op *Op) CSR() *graph.CSR { return op.a }

// Apply computes out = A·x, or out += A·x when accumulate is set.
// x.Rows == A.NumCols, out.Rows == A.NumRows, x.Cols == out.Cols; out must
// not overlap x.
func (op *Op) Apply(x, out *dense.Matrix, accumulate bool) {
	op.apply(false, x, out, nil, accumulate)
}

// ApplyT computes out = Aᵀ·x (or +=), on a transposed CSR built once, so
// every output row is still written by one goroutine (no atomics).
func (op *Op) ApplyT(x, out *dense.Matrix, accumulate bool) {
	op.apply(true, x, out, nil, accumulate)
}

// ApplyScaled computes out[v] = rowScale[v]·(A·x)[v], or adds it to out[v]
// when accumulate is set; with rowScale[v] = 1/deg(v) it is the mean
// aggregation. len(rowScale) == A.NumRows.
func (op *Op) ApplyScaled(x, out *dense.Matrix, rowScale []float32, accumulate bool) {
	if len(rowScale) != op.a.NumRows {
		panic(fmt.Sprintf("aggr: len(rowScale)=%d, want %d", len(rowScale), op.a.NumRows))
	}
	op.apply(false, x, out, rowScale, accumulate)
}

// ApplyTScaled is ApplyScaled for Aᵀ: out[u] (+)= rowScale[u]·(Aᵀ·x)[u],
// len(rowScale) == A.NumCols.
func (op *Op) ApplyTScaled(x, out *dense.Matrix, rowScale []float32, accumulate bool) {
	if len(rowScale) != op.a.NumCols {
		panic(fmt.Sprintf("aggr: len(rowScale)=%d, want %d", len(rowScale), op.a.NumCols))
	}
	op.apply(true, x, out, rowScale, accumulate)
}

// PrepareT builds the transpose that ApplyT and ApplyTScaled use now rather
// than on their first call.
func (op *Op) PrepareT() { op.transposed() }

// transposed returns Aᵀ, building it on first use. When A equals its
// transpose entry for entry (a symmetric graph whose rows are sorted, as an
// undirected, deduplicated graph is), Aᵀ is A itself: no second copy of the
// graph is kept, and the products are the same bit for bit.
func (op *Op) transposed() *graph.CSR {
	op.atOnce.Do(func() {
		if isOwnTranspose(op.a) {
			op.at = op.a
			return
		}
		op.at = op.a.Transpose()
	})
	return op.at
}

// isOwnTranspose reports whether a.Transpose() would equal a: the same
// shape, Ptr, Idx and Val. Transpose lists in row u every v with u in row v,
// v ascending, once per occurrence (Val in the order of row v); so a is its
// own transpose exactly when every row is sorted and every run of equal
// entries v in row u has as many entries, with the same Val in order, as
// the run of u in row v. Rows are checked in parallel, each run against its
// mirror found by binary search; nothing is copied.
func isOwnTranspose(a *graph.CSR) bool {
	if a.NumRows != a.NumCols {
		return false
	}
	var bad atomic.Bool
	par.For(a.NumRows, 1024, func(lo, hi int) {
		for v := lo; v < hi && !bad.Load(); v++ {
			if !mirrored(a, v) {
				bad.Store(true)
			}
		}
	})
	return !bad.Load()
}

// mirrored checks row v for isOwnTranspose: sorted, and every run of
// entries u matched by a run of v in row u.
func mirrored(a *graph.CSR, v int) bool {
	row := a.Idx[a.Ptr[v]:a.Ptr[v+1]]
	for k := 0; k < len(row); {
		u := row[k]
		e := k + 1
		for e < len(row) && row[e] == u {
			e++
		}
		if e < len(row) && row[e] < u {
			return false // not sorted
		}
		other := a.Idx[a.Ptr[u]:a.Ptr[u+1]]
		p, _ := slices.BinarySearch(other, int32(v))
		q := p
		for q < len(other) && other[q] == int32(v) {
			q++
		}
		if q-p != e-k {
			return false
		}
		if a.Val != nil {
			mine, theirs := a.Val[a.Ptr[v]+int64(k):a.Ptr[v]+int64(e)], a.Val[a.Ptr[u]+int64(p):a.Ptr[u]+int64(q)]
			for i := range mine {
				if math.Float32bits(mine[i]) != math.Float32bits(theirs[i]) {
					return false
				}
			}
		}
		k = e
	}
	return true
}

func (op *Op) plan(transposed bool, a *graph.CSR, width int) *plan {
	key := planKey{transposed, width}
	op.mu.Lock()
	defer op.mu.Unlock()
	if p, ok := op.plans[key]; ok {
		return p
	}
	if op.plans == nil {
		op.plans = make(map[planKey]*plan)
	}
	p := newPlan(a, width, op.e.threads)
	op.plans[key] = p
	return p
}

func (op *Op) apply(transposed bool, x, out *dense.Matrix, scale []float32, accumulate bool) {
	a := op.a
	if transposed {
		a = op.transposed()
	}
	if a.NumCols != x.Rows || a.NumRows != out.Rows || x.Cols != out.Cols {
		panic(fmt.Sprintf("aggr: shape mismatch: A %d×%d, x %d×%d, out %d×%d",
			a.NumRows, a.NumCols, x.Rows, x.Cols, out.Rows, out.Cols))
	}
	f := x.Cols
	if len(x.Data) < x.Rows*f || len(out.Data) < out.Rows*f {
		panic("aggr: matrix data shorter than Rows×Cols")
	}
	if f == 0 || a.NumRows == 0 {
		return
	}
	if overlap(x.Data[:x.Rows*f], out.Data[:out.Rows*f]) {
		panic("aggr: out overlaps x")
	}
	pl := op.plan(transposed, a, f)
	r := runner{k: op.e.k, rk: op.e.rk, a: a, x: x.Data, out: out.Data, f: f, scale: scale, acc: accumulate, tasks: pl.tasks}
	if len(pl.tasks) <= 1 || op.e.threads == 1 {
		var s scratch
		for i := range pl.tasks {
			r.do(&pl.tasks[i], &s)
		}
		return
	}
	op.e.pool.Run(r.worker)
}

func overlap(a, b []float32) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	a0 := uintptr(unsafe.Pointer(unsafe.SliceData(a)))
	b0 := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	a1 := a0 + uintptr(len(a))*4
	b1 := b0 + uintptr(len(b))*4
	return a0 < b1 && b0 < a1
}

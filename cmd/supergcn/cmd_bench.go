package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"gonum.org/v1/gonum/floats"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/sysmem"
)

func init() {
	register("bench", "micro-benchmarks: aggr, quant, stream (supergcn bench --help)", runBench)
}

// benchKind is one `supergcn bench <kind>` benchmark.
type benchKind struct {
	summary string
	run     func(args []string) error
}

// benchKinds holds the benchmark kinds. Another file adds one from its
// init with registerBench (e.g. cmd_bench_quant.go: registerBench("quant",
// ...)); package-level variables are initialised before any init runs.
var benchKinds = map[string]benchKind{
	"aggr":    {"sparse aggregation operators (SpMM, transpose, mean, index_add) on a graph", benchAggr},
	"stream":  {"STREAM copy/triad memory bandwidth with T threads (the roofline of aggr)", benchStream},
	"profile": {"machine profile for `supergcn predict`: kernel rates per thread count with the node full (JSON)", benchProfile},
}

// registerBench adds a benchmark kind `supergcn bench <name>`.
func registerBench(name, summary string, run func(args []string) error) {
	if _, dup := benchKinds[name]; dup {
		panic("duplicate bench kind " + name)
	}
	benchKinds[name] = benchKind{summary, run}
}

func benchKindNames() []string {
	names := make([]string, 0, len(benchKinds))
	for n := range benchKinds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func benchUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: supergcn bench <kind> [flags]   (supergcn bench <kind> --help for its flags)")
	fmt.Fprintln(w, "\nkinds:")
	for _, n := range benchKindNames() {
		fmt.Fprintf(w, "  %-8s %s\n", n, benchKinds[n].summary)
	}
}

func runBench(args []string) error {
	if len(args) == 0 {
		benchUsage(os.Stderr)
		return usageError{"missing benchmark kind"}
	}
	if a := args[0]; a == "help" || a == "-h" || a == "--help" || a == "-help" {
		benchUsage(os.Stdout)
		return nil
	}
	k, ok := benchKinds[args[0]]
	if !ok {
		benchUsage(os.Stderr)
		return usageError{fmt.Sprintf("unknown benchmark kind %q", args[0])}
	}
	return k.run(args[1:])
}

// ---------------------------------------------------------------- aggr

// aggrResult is one line of `bench aggr --json`.
type aggrResult struct {
	Op        string  `json:"op"`
	MedianMS  float64 `json:"median_ms"`
	MinMS     float64 `json:"min_ms"`
	GUPS      float64 `json:"gups"` // edges·width / median / 1e9
	GBS       float64 `json:"gbs"`  // effective bytes / median / 1e9 (see aggrBytes)
	Kernel    string  `json:"kernel"`
	Threads   int     `json:"threads"`
	Graph     string  `json:"graph"`
	Nodes     int     `json:"nodes"`
	Edges     int64   `json:"edges"`
	Width     int     `json:"width"`
	Reps      int     `json:"reps"`
	PrepMS    float64 `json:"prep_ms"` // one-time preparation of this operator (sort / transpose)
	StreamGBS float64 `json:"stream_triad_gbs,omitempty"`
	Roofline  float64 `json:"stream_fraction,omitempty"` // gbs / stream_triad_gbs
}

// aggrBytes is the effective traffic of one product, counting each stored
// entry's source row once (edges·width·4), the output rows written once
// (rows·width·4), the column ids (4 B per entry), the row offsets (8 B per
// row) and the weights when present (4 B per entry). Cache reuse of source
// rows makes the real DRAM traffic smaller, write-allocate larger.
func aggrBytes(rows int, edges int64, width int, weighted bool) float64 {
	b := float64(edges)*float64(width)*4 + float64(rows)*float64(width)*4 + float64(edges)*4 + float64(rows+1)*8
	if weighted {
		b += float64(edges) * 4
	}
	return b
}

var aggrOps = []string{"spmm", "spmm_w", "spmm_t", "spmm_mean", "index_add"}

func benchAggr(args []string) error {
	fs := newFlagSet("bench aggr", "[flags]")
	graphArg := fs.String("graph", "random", "random (uniform src and dst), powerlaw (skewed degrees) or a dataset PATH that graph.Load reads")
	nodes := fs.Int("nodes", 200_000, "nodes of a random/powerlaw graph")
	edges := fs.Int64("edges", 4_000_000, "edges of a random/powerlaw graph")
	width := fs.Int("width", 128, "feature width F")
	threads := new(int)
	threadsVar(fs, threads)
	reps := fs.Int("reps", 5, "timed repetitions per operator (after one warm-up); the median is reported")
	kernel := fs.String("kernel", "", "kernel: "+strings.Join(aggr.Kernels(), "|")+" (default $SUPERGCN_KERNEL, else the best)")
	opsArg := fs.String("ops", strings.Join(aggrOps, ","), "operators to run")
	seed := fs.Uint64("seed", 1, "random seed")
	asJSON := fs.Bool("json", false, "print one JSON object per operator and line")
	stream := fs.Bool("stream", false, "also measure STREAM triad bandwidth and report the fraction reached")
	huge := fs.Bool("hugepages", false, "back x and out with transparent huge pages (madvise; Linux only)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *width < 1 || *reps < 1 {
		return usageError{"--width and --reps must be ≥ 1"}
	}
	ops := strings.Split(*opsArg, ",")
	for _, o := range ops {
		if !benchContains(aggrOps, o) {
			return usageError{fmt.Sprintf("--ops: unknown operator %q (known: %s)", o, strings.Join(aggrOps, ","))}
		}
	}
	if err := setAloneThreads(threads); err != nil {
		return err
	}
	eng, err := aggr.New(*threads, *kernel)
	if err != nil {
		return kernelError(err)
	}
	defer eng.Close()

	var src, dst []int32
	var a *graph.CSR
	name := *graphArg
	switch *graphArg {
	case "random", "powerlaw":
		if *nodes < 1 || *edges < 0 || *nodes > math.MaxInt32 {
			return usageError{"--nodes must be in [1, 2^31) and --edges ≥ 0"}
		}
		// The edge lists, the CSR and its transpose: ~24 bytes an edge.
		if err := sysmem.Check(24*min(*edges, math.MaxInt64/32), fmt.Sprintf("a graph of %d edges", *edges)); err != nil {
			return usageError{"--edges: " + err.Error()}
		}
		src, dst = synthEdges(*graphArg, *nodes, *edges, *seed)
	default:
		ds, err := graph.Load(*graphArg, graph.LoadOptions{})
		if err != nil {
			return err
		}
		a = ds.Graph
		src, dst = a.Idx, make([]int32, len(a.Idx))
		for v := 0; v < a.NumRows; v++ {
			for k := a.Ptr[v]; k < a.Ptr[v+1]; k++ {
				dst[k] = int32(v)
			}
		}
		*nodes = a.NumRows
	}
	n := *nodes
	ne := int64(len(src))
	t0 := time.Now()
	if a == nil {
		a = graph.FromCOO(n, n, src, dst, nil)
	}
	csrMS := benchMS(time.Since(t0))
	f := *width
	rng := rand.New(rand.NewPCG(*seed, 99))
	x, out := dense.New(n, f), dense.New(n, f)
	if *huge {
		var err error
		if x.Data, err = hugeFloats(n * f); err != nil {
			return err
		}
		if out.Data, err = hugeFloats(n * f); err != nil {
			return err
		}
	}
	for i := range x.Data {
		x.Data[i] = float32(rng.NormFloat64())
	}

	var streamGBS float64
	if *stream {
		sr := runStream(*threads, 128, 5)
		streamGBS = sr.triad
		debug.FreeOSMemory() // the STREAM arrays
	}
	if !*asJSON {
		fmt.Printf("bench aggr: graph %s, nodes %d, edges %d, width %d, threads %d, kernel %s, reps %d (median)\n",
			name, n, ne, f, *threads, eng.KernelName(), *reps)
		fmt.Printf("CSR build from COO %.1f ms\n", csrMS)
		if *stream {
			fmt.Printf("STREAM triad %.1f GB/s with %d threads\n", streamGBS, *threads)
		}
		fmt.Printf("%-10s %10s %10s %8s %8s %9s", "op", "median_ms", "min_ms", "GUPS", "GB/s", "prep_ms")
		if *stream {
			fmt.Printf(" %8s", "%STREAM")
		}
		fmt.Println()
	}
	degScale := func(c *graph.CSR) []float32 {
		s := make([]float32, c.NumRows)
		for v := range s {
			if d := c.Degree(v); d > 0 {
				s[v] = 1 / float32(d)
			}
		}
		return s
	}
	for _, o := range ops {
		var fn func()
		var prep float64
		weighted := false
		t0 := time.Now()
		switch o {
		case "spmm":
			op := eng.Prepare(a)
			fn = func() { op.Apply(x, out, false) }
		case "spmm_w":
			// GCN weights 1/sqrt(d_in(v)·d_in(u)) on a copy of A with values
			w := gcnWeights(a)
			op := eng.Prepare(w)
			weighted = true
			fn = func() { op.Apply(x, out, false) }
		case "spmm_t":
			op := eng.Prepare(a)
			op.PrepareT()
			fn = func() { op.ApplyT(x, out, false) }
		case "spmm_mean":
			op := eng.Prepare(a)
			s := degScale(a)
			fn = func() { op.ApplyScaled(x, out, s, false) }
		case "index_add":
			op := eng.PrepareIndexAdd(dst, src, n, n)
			fn = func() { op.Apply(x, out, false) }
		}
		prep = benchMS(time.Since(t0))
		// finish the garbage collection of the set-up now, not concurrently
		// with the timed runs (on 2 cores a background mark steals a quarter)
		runtime.GC()
		med, mn := timeIt(fn, *reps)
		r := aggrResult{
			Op: o, MedianMS: med, MinMS: mn, Kernel: eng.KernelName(), Threads: *threads, Graph: name,
			Nodes: n, Edges: ne, Width: f, Reps: *reps, PrepMS: prep,
			GUPS: float64(ne) * float64(f) / (med / 1e3) / 1e9,
			GBS:  aggrBytes(n, ne, f, weighted) / (med / 1e3) / 1e9,
		}
		if streamGBS > 0 {
			r.StreamGBS = streamGBS
			r.Roofline = r.GBS / streamGBS
		}
		if *asJSON {
			b, _ := json.Marshal(r)
			fmt.Println(string(b))
		} else {
			fmt.Printf("%-10s %10.2f %10.2f %8.2f %8.1f %9.1f", o, r.MedianMS, r.MinMS, r.GUPS, r.GBS, r.PrepMS)
			if streamGBS > 0 {
				fmt.Printf(" %7.0f%%", 100*r.Roofline)
			}
			fmt.Println()
		}
	}
	if !*asJSON {
		fmt.Println("GUPS = edges·width/time/1e9; GB/s = (edges·width·4 + nodes·width·4 + edges·4 [+ edges·4 weights] + (nodes+1)·8)/time/1e9")
	}
	return nil
}

func benchContains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

func benchMS(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// timeIt runs fn once to warm up, then reps times; it returns the median and
// the minimum in milliseconds.
func timeIt(fn func(), reps int) (median, minimum float64) {
	return timeEach(func() {}, fn, reps)
}

// timeEach is timeIt with before run ahead of the warm-up and of every
// timed run, outside the timing.
func timeEach(before, fn func(), reps int) (median, minimum float64) {
	before()
	fn()
	ts := make([]float64, reps)
	for i := range ts {
		before()
		t := time.Now()
		fn()
		ts[i] = benchMS(time.Since(t))
	}
	sort.Float64s(ts)
	median = ts[reps/2]
	if reps%2 == 0 {
		median = (ts[reps/2-1] + ts[reps/2]) / 2
	}
	return median, ts[0]
}

// synthEdges returns the edges src[e]→dst[e] of a synthetic graph:
// "random" draws src and dst uniformly (as shared/bench/torch_spmm_baseline.py
// does); "powerlaw" draws dst = π(⌊n·u³⌋) and src = σ(⌊n·u²⌋) for uniform u
// and random permutations π, σ, so in- and out-degrees are heavily skewed
// (the largest in-degree is about edges/n^(1/3)) and the hubs are scattered
// over the id range.
func synthEdges(kind string, n int, edges int64, seed uint64) (src, dst []int32) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	src = make([]int32, edges)
	dst = make([]int32, edges)
	switch kind {
	case "random":
		for e := range src {
			src[e] = int32(rng.IntN(n))
			dst[e] = int32(rng.IntN(n))
		}
	case "powerlaw":
		pd, ps := rng.Perm(n), rng.Perm(n)
		for e := range src {
			u := rng.Float64()
			dst[e] = int32(pd[int(float64(n)*u*u*u)])
			u = rng.Float64()
			src[e] = int32(ps[int(float64(n)*u*u)])
		}
	}
	return src, dst
}

// gcnWeights returns a copy of a with Val = 1/sqrt(deg(v)·deg(u)), deg the
// row degree (+1), the symmetric GCN normalisation.
func gcnWeights(a *graph.CSR) *graph.CSR {
	deg := make([]float64, max(a.NumRows, a.NumCols))
	for v := 0; v < a.NumRows; v++ {
		deg[v] = float64(a.Degree(v)) + 1
	}
	for u := a.NumRows; u < len(deg); u++ {
		deg[u] = 1
	}
	w := *a
	w.Val = make([]float32, len(a.Idx))
	for v := 0; v < a.NumRows; v++ {
		for k := a.Ptr[v]; k < a.Ptr[v+1]; k++ {
			w.Val[k] = float32(1 / math.Sqrt(deg[v]*deg[a.Idx[k]]))
		}
	}
	return &w
}

// ---------------------------------------------------------------- stream

type streamResult struct {
	copy, triad float64 // GB/s, best of reps
}

// runStream measures STREAM copy (a = b, 16 B per element) and triad
// (a = b + s·c, 24 B per element) on float64 arrays of mib MiB each (three
// arrays, ≫ the 32 MiB L3 by default), split statically over threads
// goroutines; it reports the best of reps, as STREAM does. Counted bytes
// exclude write-allocate traffic, as STREAM's do.
func runStream(threads, mib, reps int) streamResult {
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
	var res streamResult
	res.copy = best(16*float64(n), func(lo, hi int) { copy(a[lo:hi], b[lo:hi]) })
	res.triad = best(24*float64(n), func(lo, hi int) { floats.AddScaledTo(a[lo:hi], b[lo:hi], 3, c[lo:hi]) })
	return res
}

func benchStream(args []string) error {
	fs := newFlagSet("bench stream", "[flags]")
	threads := new(int)
	threadsVar(fs, threads)
	mib := fs.Int("mib", 128, "MiB per array (three arrays; keep ≫ the last-level cache)")
	reps := fs.Int("reps", 5, "repetitions (best reported)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *mib < 1 || *reps < 1 {
		return usageError{"--mib and --reps must be ≥ 1"}
	}
	if err := setAloneThreads(threads); err != nil {
		return err
	}
	if err := sysmem.Check(3*(int64(min(*mib, 1<<40))<<20), fmt.Sprintf("three arrays of %d MiB", *mib)); err != nil {
		return usageError{"--mib: " + err.Error()}
	}
	r := runStream(*threads, *mib, *reps)
	if *asJSON {
		b, _ := json.Marshal(map[string]any{"op": "stream", "threads": *threads, "mib": *mib,
			"copy_gbs": r.copy, "triad_gbs": r.triad})
		fmt.Println(string(b))
		return nil
	}
	fmt.Printf("STREAM, %d threads, 3 arrays of %d MiB: copy %.1f GB/s, triad %.1f GB/s\n", *threads, *mib, r.copy, r.triad)
	return nil
}

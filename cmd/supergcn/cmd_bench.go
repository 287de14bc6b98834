package main

import (
	"encoding/json"
	"fmt"
	"github.com/supergcn/supergcn/cmd/internal/flagtab"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/internal/spell"
	"github.com/supergcn/supergcn/internal/sysmem"
	"github.com/supergcn/supergcn/perfmodel/measure"
)

func init() {
	register("bench", "micro-benchmarks, one per kind (listed below)", runBench)
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
		return usageError("missing benchmark kind")
	}
	if a := args[0]; a == "help" || a == "-h" || a == "--help" || a == "-help" {
		benchUsage(os.Stdout)
		return nil
	}
	k, ok := benchKinds[args[0]]
	if !ok {
		hint := spell.DidYouMean(args[0], benchKindNames())
		if hint == "" {
			hint = " (supergcn bench --help lists them)"
		}
		return usageError(fmt.Sprintf("unknown benchmark kind %q%s", args[0], hint))
	}
	return k.run(args[1:])
}

// ---------------------------------------------------------------- aggr

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
	opsArg := fs.String("ops", strings.Join(measure.AggrOps, ","), "operators to run")
	seed := fs.Uint64("seed", 1, "random seed")
	asJSON := fs.Bool("json", false, "print one JSON object per operator and line")
	stream := fs.Bool("stream", false, "also measure STREAM triad bandwidth and report the fraction reached")
	huge := fs.Bool("hugepages", false, "back x and out with transparent huge pages (madvise; Linux only)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := setAloneThreads(threads); err != nil {
		return err
	}
	ab := measure.AggrBench{Graph: *graphArg, Nodes: *nodes, Edges: *edges, Width: *width, Reps: *reps, Threads: *threads,
		Kernel: *kernel, Ops: strings.Split(*opsArg, ","), Seed: *seed, Stream: *stream, Huge: *huge}
	if err := ab.Validate(); err != nil {
		return usageError(flagtab.UserMessage(err))
	}
	r, err := ab.Run()
	if err != nil {
		return kernelError(err)
	}
	if *asJSON {
		for _, l := range r.Lines {
			b, _ := json.Marshal(l)
			fmt.Println(string(b))
		}
		return nil
	}
	fmt.Printf("bench aggr: graph %s, nodes %d, edges %d, width %d, threads %d, kernel %s, reps %d (median)\n",
		ab.Graph, r.Nodes, r.Edges, ab.Width, ab.Threads, r.Kernel, ab.Reps)
	fmt.Printf("CSR build from COO %.1f ms\n", r.CSRMS)
	if *stream {
		fmt.Printf("STREAM triad %.1f GB/s with %d threads\n", r.StreamGBS, ab.Threads)
	}
	fmt.Printf("%-10s %10s %10s %8s %8s %9s", "op", "median_ms", "min_ms", "GUPS", "GB/s", "prep_ms")
	if *stream {
		fmt.Printf(" %8s", "%STREAM")
	}
	fmt.Println()
	for _, l := range r.Lines {
		fmt.Printf("%-10s %10.2f %10.2f %8.2f %8.1f %9.1f", l.Op, l.MedianMS, l.MinMS, l.GUPS, l.GBS, l.PrepMS)
		if l.StreamGBS > 0 {
			fmt.Printf(" %7.0f%%", 100*l.Roofline)
		}
		fmt.Println()
	}
	fmt.Println("GUPS = edges·width/time/1e9; GB/s = (edges·width·4 + nodes·width·4 + edges·4 [+ edges·4 weights] + (nodes+1)·8)/time/1e9")
	return nil
}

// sizeFlag returns a usage error naming flag when need bytes (a float, so
// that a product of flags cannot overflow) exceed the memory this process
// may use.
func sizeFlag(flag string, need float64, what string) error {
	if err := sysmem.Check(int64(min(need, math.MaxInt64/2)), what); err != nil {
		return usageError(flag + ": " + err.Error())
	}
	return nil
}

// ---------------------------------------------------------------- stream

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
		return usageError("--mib and --reps must be ≥ 1")
	}
	if err := setAloneThreads(threads); err != nil {
		return err
	}
	if err := sysmem.Check(3*(int64(min(*mib, 1<<40))<<20), fmt.Sprintf("three arrays of %d MiB", *mib)); err != nil {
		return usageError("--mib: " + err.Error())
	}
	r := measure.Stream(*threads, *mib, *reps)
	if *asJSON {
		b, _ := json.Marshal(map[string]any{"op": "stream", "threads": *threads, "mib": *mib,
			"copy_gbs": r.Copy, "triad_gbs": r.Triad})
		fmt.Println(string(b))
		return nil
	}
	fmt.Printf("STREAM, %d threads, 3 arrays of %d MiB: copy %.1f GB/s, triad %.1f GB/s\n", *threads, *mib, r.Copy, r.Triad)
	return nil
}

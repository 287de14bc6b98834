package measure

import (
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/internal/sysmem"
)

// AggrBench is `supergcn bench aggr`: the aggregation operators Ops timed
// on one graph, Width columns wide, on an engine of Threads threads.
type AggrBench struct {
	Graph        string // "random", "powerlaw" (SynthEdges) or a dataset path graph.Load reads
	Nodes        int    // of a random/powerlaw graph
	Edges        int64  // of a random/powerlaw graph
	Width, Reps  int
	Threads      int
	Kernel       string // aggr.New's kernel name ("" : $SUPERGCN_KERNEL, else the best)
	Ops          []string
	Seed         uint64
	Stream, Huge bool // also measure STREAM triad; x and out on transparent huge pages
}

// AggrLine is one operator's result with the run's settings (a line of
// `bench aggr --json`).
type AggrLine struct {
	AggrResult
	Kernel    string  `json:"kernel"`
	Threads   int     `json:"threads"`
	Graph     string  `json:"graph"`
	Nodes     int     `json:"nodes"`
	Edges     int64   `json:"edges"`
	Width     int     `json:"width"`
	Reps      int     `json:"reps"`
	StreamGBS float64 `json:"stream_triad_gbs,omitempty"`
	Roofline  float64 `json:"stream_fraction,omitempty"` // gbs / stream_triad_gbs
}

// AggrReport is a run of AggrBench: what it ran on and a line per
// operator.
type AggrReport struct {
	Kernel    string
	Nodes     int
	Edges     int64
	CSRMS     float64 // building the CSR from the edge list (0 for a loaded dataset)
	StreamGBS float64 // STREAM triad (0 without Stream)
	Lines     []AggrLine
}

// Run validates b, builds the graph and times every operator.
func (b AggrBench) Run() (*AggrReport, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	eng, err := aggr.New(b.Threads, b.Kernel)
	if err != nil {
		return nil, field.Wrap("measure.AggrBench.Kernel", err)
	}
	defer eng.Close()
	a, src, dst, csrMS, err := b.graph()
	if err != nil {
		return nil, err
	}
	if err := b.checkBuffers(a.NumRows); err != nil {
		return nil, err
	}
	r := &AggrReport{Kernel: eng.KernelName(), Nodes: a.NumRows, Edges: int64(len(src)), CSRMS: csrMS}
	x, out, err := AggrBuffers(a.NumRows, b.Width, b.Huge, b.Seed)
	if err != nil {
		return nil, field.Wrap("measure.AggrBench.Huge", err)
	}
	if b.Stream {
		r.StreamGBS = Stream(b.Threads, 128, 5).Triad
		debug.FreeOSMemory() // the STREAM arrays
	}
	for _, o := range b.Ops {
		m, err := AggrOp(eng, o, a, src, dst, x, out, b.Reps)
		if err != nil {
			return nil, err
		}
		l := AggrLine{AggrResult: m, Kernel: r.Kernel, Threads: b.Threads, Graph: b.Graph, Nodes: r.Nodes, Edges: r.Edges, Width: b.Width, Reps: b.Reps}
		if r.StreamGBS > 0 {
			l.StreamGBS, l.Roofline = r.StreamGBS, l.GBS/r.StreamGBS
		}
		r.Lines = append(r.Lines, l)
	}
	return r, nil
}

// Validate reports the first setting of b that cannot run as a
// *field.Error naming it ("measure.AggrBench.Width").
func (b AggrBench) Validate() error {
	bad := func(name, format string, args ...any) error {
		return field.Errorf("measure.AggrBench."+name, format, args...)
	}
	switch {
	case b.Width < 1:
		return bad("Width", "%d, need ≥ 1", b.Width)
	case b.Reps < 1:
		return bad("Reps", "%d, need ≥ 1", b.Reps)
	}
	for _, o := range b.Ops {
		if !slices.Contains(AggrOps, o) {
			return bad("Ops", "unknown operator %q (known: %s)", o, strings.Join(AggrOps, ","))
		}
	}
	if b.Graph != "random" && b.Graph != "powerlaw" {
		return nil
	}
	switch {
	case b.Nodes < 1 || b.Nodes > math.MaxInt32:
		return bad("Nodes", "%d, need 1 to 2^31-1", b.Nodes)
	case b.Edges < 0:
		return bad("Edges", "%d, need ≥ 0", b.Edges)
	}
	// The edge lists, the CSR and its transpose: ~24 bytes an edge.
	if err := sysmem.Check(24*min(b.Edges, math.MaxInt64/32), fmt.Sprintf("a graph of %d edges", b.Edges)); err != nil {
		return field.Wrap("measure.AggrBench.Edges", err)
	}
	// Row pointers of both CSRs (16 bytes a node) before any width.
	if err := sysmem.Check(16*int64(b.Nodes), fmt.Sprintf("a graph of %d nodes", b.Nodes)); err != nil {
		return field.Wrap("measure.AggrBench.Nodes", err)
	}
	return b.checkBuffers(b.Nodes)
}

// checkBuffers reports when x and out (n rows of Width float32 each, with
// the row pointers) exceed the memory this process may use.
func (b AggrBench) checkBuffers(n int) error {
	need := float64(n) * (16 + 8*float64(b.Width))
	what := fmt.Sprintf("width %d on %d nodes", b.Width, n)
	if err := sysmem.Check(int64(min(need, math.MaxInt64/2)), what); err != nil {
		return field.Wrap("measure.AggrBench.Width", err)
	}
	return nil
}

// graph returns the graph of b, its edge list and the CSR build time.
func (b AggrBench) graph() (a *graph.CSR, src, dst []int32, csrMS float64, err error) {
	if b.Graph != "random" && b.Graph != "powerlaw" {
		ds, err := graph.Load(b.Graph, graph.LoadOptions{})
		if err != nil {
			return nil, nil, nil, 0, err
		}
		src, dst = EdgesOf(ds.Graph)
		return ds.Graph, src, dst, 0, nil
	}
	src, dst, _ = SynthEdges(b.Graph, b.Nodes, b.Edges, b.Seed)
	t0 := time.Now()
	a = graph.FromCOO(b.Nodes, b.Nodes, src, dst, nil)
	return a, src, dst, float64(time.Since(t0).Nanoseconds()) / 1e6, nil
}

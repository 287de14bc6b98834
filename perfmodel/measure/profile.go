package measure

import (
	"fmt"
	"io"
	"os/exec"
	"time"

	"github.com/supergcn/supergcn/perfmodel"
)

// Options are a profile's sweep: every thread count of Threads measured
// with the node full (Cores/threads copies at once) and with each number
// of copies of Loads below that.
type Options struct {
	Name    string
	Source  string // how the rates were measured (the profile's source)
	Kernel  string // the aggregation kernel that runs
	BLAS    string // and the GEMM backend
	Cores   int
	Threads []int // ascending
	Loads   []int // ascending
	Sizes   Sizes
	// HostNodes (optional; 0: Sizes.Nodes and Sizes.Rows a copy): nodes of
	// the graph the whole node holds. Each measurement of c copies then
	// gives each copy a generated graph of HostNodes/c nodes and as many
	// rows in its GEMMs, codec blocks and element-wise passes, as c ranks
	// share a graph, so that every thread count works on the rows its
	// layout has (a dense product's rate depends on its rows a thread).
	HostNodes int
	// Parts is the number of parts of Sizes.Shards (0 without): copy i
	// aggregates part i mod Parts.
	Parts int
	// Worker returns the command of one measuring copy of t threads and
	// sizes sz: a process that sets its thread budget to t, calls
	// Rates(t, sz, WorkerStepper()) and writes the rates as JSON to its
	// standard output (the caller's program run again).
	Worker func(t int, sz Sizes) *exec.Cmd
	Log    io.Writer // one line per measurement (nil: none)
}

// Profile measures every thread count and load of o with its copies in
// step and returns the profile: per entry the median over the copies; the
// intra-node link at the one-thread ranks' STREAM bandwidth (one copy per
// message, the receiver's; 1 µs latency assumed).
func Profile(o Options) (*perfmodel.Profile, error) {
	p := &perfmodel.Profile{Name: o.Name, CoresPerNode: o.Cores, Kernel: o.Kernel, BLAS: o.BLAS, Source: o.Source}
	for _, t := range o.Threads {
		if len(p.Rates) > 0 && p.Rates[len(p.Rates)-1].Threads == t {
			continue
		}
		copies := max(1, o.Cores/t)
		r, err := o.measure(t, copies)
		if err != nil {
			return nil, err
		}
		p.Rates = append(p.Rates, r)
		for _, c := range o.Loads {
			if c >= copies || (len(p.Loads) > 0 && p.Loads[len(p.Loads)-1].Threads == t && p.Loads[len(p.Loads)-1].Copies == c) {
				continue // the full node is Rates; a count twice once
			}
			l, err := o.measure(t, c)
			if err != nil {
				return nil, err
			}
			p.Loads = append(p.Loads, l)
		}
	}
	p.IntraNode = perfmodel.Link{LatencyUS: 1, GBs: p.Rates[0].StreamGBs, Efficiency: 0.5}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// measure runs copies copies of t threads at once and returns their
// median rates.
func (o *Options) measure(t, copies int) (perfmodel.Rates, error) {
	t0 := time.Now()
	rs, err := Copies(copies, func(i int) *exec.Cmd {
		sz := o.Sizes
		if o.HostNodes > 0 {
			sz.Nodes = o.HostNodes / copies
			sz.Rows = sz.Nodes
		}
		if o.Parts > 0 {
			sz.Part = i % o.Parts
		}
		return o.Worker(t, sz)
	})
	if err != nil {
		return perfmodel.Rates{}, fmt.Errorf("%d threads × %d copies: %w", t, copies, err)
	}
	r := MedianRates(rs)
	r.Copies = copies
	if o.Log != nil {
		logRates(o.Log, t, copies, r, t0)
	}
	return r, nil
}

// logRates writes one line of a measurement's headline rates.
func logRates(w io.Writer, t, copies int, r perfmodel.Rates, t0 time.Time) {
	x := ""
	if e := r.Exchange; e != nil {
		for _, q := range e.Quant {
			if q.Bits == defaultBits() && q.Width == 128 {
				x = fmt.Sprintf(", exchange pattern: int%d encode(128) %.2f GB/s, decode %.2f GB/s", q.Bits, q.EncodeGBs, q.DecodeGBs)
			}
		}
		for _, rr := range e.RowRates {
			if rr.Width == 128 {
				x += fmt.Sprintf(", gather(128) %.2f GB/s, scatter-add %.2f GB/s, halo %.2f GUPS", rr.GatherGBs, rr.ScatterGBs, rr.HaloGUPS)
			}
		}
		if e.ShareFactor > 0 {
			x += fmt.Sprintf(", shared window %.2f (slowest copy %.2f)", e.ShareFactor, e.ShareFactorMax)
		}
	}
	if a := r.Attention; a != nil && len(a.Score) > 0 && len(a.Aggr) > 0 {
		s, g := a.Score[len(a.Score)-1], a.Aggr[0]
		x += fmt.Sprintf(", attention: scores (%d heads) %.3f G edge·heads/s, weighted aggregation (width %d) %.2f GUPS forward", s.Heads, s.Forward, g.Width, g.Forward)
	}
	if r.Straggle > 0 {
		x += fmt.Sprintf(", slowest copy %.2f× slower than the median", r.Straggle)
	}
	aggr, gemm, enc := 0.0, 0.0, 0.0
	for _, a := range r.Aggr {
		if a.Width == 128 {
			aggr = a.Forward
		}
	}
	for _, g := range r.Gemm {
		if g.Op == "nn" && g.K == 128 && g.N == 128 {
			gemm = g.GFLOPS
		}
	}
	for _, q := range r.Quant {
		if q.Bits == defaultBits() && q.Width == 128 {
			enc = q.EncodeGBs
		}
	}
	hidden, _ := r.HiddenSeconds(1e9, true, true)
	fmt.Fprintf(w, "bench profile: %d thread(s) × %d copies: aggr(128) %.2f GUPS, gemm(128,128) %.1f GFLOP/s, int2 encode(128) %.2f GB/s, elementwise %.1f GB/s, dropout %.2f, hidden stage (LayerNorm, dropout) %.2f, softmax %.2f Gvalues/s%s (%.0fs)\n",
		t, copies, aggr, gemm, enc, r.ElemGBs, r.DropoutGVs, 1/hidden, r.SoftmaxGVs, x, time.Since(t0).Seconds())
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/perfmodel"
	"github.com/supergcn/supergcn/quant"
)

// profileSizes are the problem sizes of one `bench profile` worker.
type profileSizes struct {
	nodes  int     // aggregation graph nodes
	degree float64 // and mean degree
	rows   int     // GEMM, codec and element-wise rows
	reps   int
	xrows  int // exchange pattern: send/receive buffer rows (0: not measured)
	peers  int // and the peer blocks they are split into
	fan    int // cut edges a receive-buffer row in the halo product
	// shards (optional): aggregate the local graphs of this partition's
	// parts instead of a generated graph, copy i part i mod the parts
	// (part, set in each worker)
	shards string
	part   int
}

func benchProfile(args []string) error {
	fs := newFlagSet("bench profile", "--out FILE [flags] | --published "+strings.Join(perfmodel.PublishedNames(), "|")+" --out FILE")
	out := fs.String("out", "", "profile JSON to write (perfmodel.Profile)")
	published := fs.String("published", "", "derive the profile of a published node instead of measuring: "+strings.Join(perfmodel.PublishedNames(), "|"))
	name := fs.String("name", "", "profile name (default: the host name)")
	cores := fs.Int("cores", runtime.NumCPU(), "cores of the node: each thread count T runs cores/T copies at once")
	threadsArg := fs.String("threads", "", "thread counts, comma separated (default: 1, 2, 4, … up to --cores, and --cores)")
	var sz profileSizes
	fs.IntVar(&sz.nodes, "nodes", 150_000, "nodes of each copy's aggregation graph (generated: products-like degree and classes)")
	fs.Float64Var(&sz.degree, "degree", 50.5, "mean degree of that graph")
	fs.IntVar(&sz.rows, "rows", 65_536, "rows of each copy's GEMMs, codec blocks and element-wise passes")
	fs.IntVar(&sz.reps, "reps", 3, "timed repetitions (after one warm-up); the median is kept")
	fs.IntVar(&sz.xrows, "exchange-rows", -1, "rows of the exchange-pattern buffers (gather into the send buffer, codec per peer block, scatter-add of the receive buffer; -1: 4·--rows, as many boundary rows as a products part has per owned node; 0: not measured)")
	fs.IntVar(&sz.peers, "peers", 15, "peer blocks of the exchange-pattern buffers (the ranks a rank exchanges with)")
	fs.StringVar(&sz.shards, "shards", "", "aggregate the local graphs of this partition directory's parts (copy i: part i mod its parts, in train's node order) instead of a generated graph (--nodes, --degree)")
	fs.IntVar(&sz.part, "shard-part", 0, "internal (with --worker and --shards): the part this copy aggregates")
	fs.IntVar(&sz.fan, "halo-fan", 2, "cut edges a receive-buffer row in the measured cut-edge (halo) product: the partition's cut edges over its boundary rows (16-part products: about 2)")
	loadsArg := fs.String("loads", "1", "also measure each thread count with these numbers of copies at once (comma separated, each below cores/threads; empty: none): the rates of a node not full, for predict --ranks-per-host")
	worker := fs.Int("worker", 0, "internal: measure with this many threads and print the rates as JSON")
	lockstep := fs.Bool("lockstep", false, "internal (with --worker): wait for the other copies before each timed pass (pipes on fds 3 and 4)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if sz.xrows < -1 {
		return usageError{fmt.Sprintf("--exchange-rows: %d, want ≥ 0 (or -1: 4·--rows)", sz.xrows)}
	}
	if sz.xrows == -1 {
		sz.xrows = 4 * sz.rows
	}
	if *worker != 0 && os.Getenv(profileWorkerEnv) != "1" {
		return usageError{"--worker: internal: bench profile starts its own workers (run bench profile --out FILE)"}
	}
	if *worker > 0 {
		setThreadBudget(*worker)
		var st *stepper
		if *lockstep {
			st = &stepper{ready: os.NewFile(3, "lockstep-ready"), next: os.NewFile(4, "lockstep-go")}
		}
		r, err := measureRates(*worker, sz, st)
		if err != nil {
			return err
		}
		return json.NewEncoder(os.Stdout).Encode(r)
	}
	if *out == "" {
		return usageError{"--out is required"}
	}
	if err := checkWritable(*out); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if *published != "" {
		p, err := perfmodel.FromPublished(*published)
		if err != nil {
			return usageError{"--published: " + err.Error()}
		}
		return writeProfile(*out, p)
	}
	parts := 0
	if sz.shards != "" {
		m, err := partition.ReadMeta(sz.shards)
		if err != nil {
			return fmt.Errorf("--shards: %w", err)
		}
		parts = m.Parts
	}
	if *cores < 1 || sz.nodes < 1 || sz.degree <= 0 || sz.rows < 1 || sz.reps < 1 || sz.peers < 1 || sz.fan < 1 {
		return usageError{"--cores, --nodes, --degree, --rows, --reps, --peers and --halo-fan must be positive"}
	}
	if sz.xrows > 0 && sz.xrows < sz.peers {
		return usageError{fmt.Sprintf("--exchange-rows: %d, want 0 or at least --peers (%d): a row a peer", sz.xrows, sz.peers)}
	}
	var loads []int
	for _, s := range strings.Split(*loadsArg, ",") {
		if strings.TrimSpace(s) == "" && *loadsArg == "" {
			break
		}
		c, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || c < 1 || c > *cores {
			return usageError{fmt.Sprintf("--loads: %q is not a copy count in [1, --cores=%d]", s, *cores)}
		}
		loads = append(loads, c)
	}
	sort.Ints(loads)
	if !(sz.degree <= float64(sz.nodes-1)) {
		// NaN and +Inf pass the test above; the workers' generator
		// would refuse them only after the first measurement
		return usageError{fmt.Sprintf("--degree: %g, want a mean degree in (0, --nodes-1 = %d]", sz.degree, sz.nodes-1)}
	}
	if n := runtime.NumCPU(); *cores > n {
		// more copies than CPUs would time them oversubscribed: rates
		// of no node
		return usageError{fmt.Sprintf("--cores: %d, but this process may run on %d CPUs: the profile measures this node full", *cores, n)}
	}
	var threads []int
	if *threadsArg == "" {
		for t := 1; t < *cores; t *= 2 {
			threads = append(threads, t)
		}
		threads = append(threads, *cores)
	} else {
		for _, s := range strings.Split(*threadsArg, ",") {
			t, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || t < 1 || t > *cores {
				return usageError{fmt.Sprintf("--threads: %q is not a count in [1, --cores=%d]", s, *cores)}
			}
			threads = append(threads, t)
		}
		sort.Ints(threads)
	}
	if *name == "" {
		h, _ := os.Hostname()
		*name = h
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	eng, err := aggr.New(1, "")
	if err != nil {
		return kernelError(err)
	}
	kernel := eng.KernelName()
	eng.Close()
	blas, _, _ := dense.BLAS()
	graphOf := ""
	if sz.shards != "" {
		graphOf = fmt.Sprintf(" (aggregation and shared window on the local graphs of the %d parts of %s)", parts, sz.shards)
	}
	p := &perfmodel.Profile{Name: *name, CoresPerNode: *cores, Kernel: kernel, BLAS: blas,
		Source: fmt.Sprintf("measured by `supergcn bench profile` (%s, %s/%s, %d cores, %s) with --nodes %d --degree %g --rows %d --reps %d --exchange-rows %d --peers %d; aggregation on train's node order with self-loops, cut-edge products with --halo-fan %d, the copies in lockstep%s",
			version, runtime.GOOS, runtime.GOARCH, *cores, time.Now().UTC().Format("2006-01-02"), sz.nodes, sz.degree, sz.rows, sz.reps, sz.xrows, sz.peers, sz.fan, graphOf)}
	for _, t := range threads {
		if len(p.Rates) > 0 && p.Rates[len(p.Rates)-1].Threads == t {
			continue
		}
		copies := max(1, *cores/t)
		t0 := time.Now()
		rs, err := runProfileWorkers(exe, t, copies, sz, parts)
		if err != nil {
			return err
		}
		r := medianRates(rs)
		r.Copies = copies
		p.Rates = append(p.Rates, r)
		logRates(t, copies, r, t0)
		for _, c := range loads {
			if c >= copies || (len(p.Loads) > 0 && p.Loads[len(p.Loads)-1].Threads == t && p.Loads[len(p.Loads)-1].Copies == c) {
				continue // the full node is Rates; a count twice once
			}
			t0 := time.Now()
			rs, err := runProfileWorkers(exe, t, c, sz, parts)
			if err != nil {
				return err
			}
			l := medianRates(rs)
			l.Copies = c
			p.Loads = append(p.Loads, l)
			logRates(t, c, l, t0)
		}
	}
	// Shared-memory MPI between ranks: one copy per message at the one-
	// thread ranks' copy bandwidth (the receiver copies); 1 µs assumed.
	p.IntraNode = perfmodel.Link{LatencyUS: 1, GBs: p.Rates[0].StreamGBs, Efficiency: 0.5}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("bench profile: %w", err)
	}
	return writeProfile(*out, p)
}

func logRates(t, copies int, r perfmodel.Rates, t0 time.Time) {
	x := ""
	if e := r.Exchange; e != nil {
		for _, q := range e.Quant {
			if q.Bits == 2 && q.Width == 128 {
				x = fmt.Sprintf(", exchange pattern: int2 encode(128) %.2f GB/s, decode %.2f GB/s", q.EncodeGBs, q.DecodeGBs)
			}
		}
		for _, w := range e.RowRates {
			if w.Width == 128 {
				x += fmt.Sprintf(", gather(128) %.2f GB/s, scatter-add %.2f GB/s, halo %.2f GUPS", w.GatherGBs, w.ScatterGBs, w.HaloGUPS)
			}
		}
		if e.ShareFactor > 0 {
			x += fmt.Sprintf(", shared window %.2f (slowest copy %.2f)", e.ShareFactor, e.ShareFactorMax)
		}
	}
	fmt.Fprintf(os.Stderr, "bench profile: %d thread(s) × %d copies: aggr(128) %.2f GUPS, gemm(128,128) %.1f GFLOP/s, int2 encode(128) %.2f GB/s, elementwise %.1f GB/s, dropout %.2f, layernorm %.2f, softmax %.2f Gvalues/s%s (%.0fs)\n",
		t, copies, aggrAt(r, 128), gemmAt(r, 128, 128), quantAt(r, 2, 128), r.ElemGBs, r.DropoutGVs, r.LayerNormGVs, r.SoftmaxGVs, x, time.Since(t0).Seconds())
}

func aggrAt(r perfmodel.Rates, w int) float64 {
	for _, a := range r.Aggr {
		if a.Width == w {
			return a.Forward
		}
	}
	return 0
}

func gemmAt(r perfmodel.Rates, k, n int) float64 {
	for _, g := range r.Gemm {
		if g.Op == "nn" && g.K == k && g.N == n {
			return g.GFLOPS
		}
	}
	return 0
}

func quantAt(r perfmodel.Rates, b, w int) float64 {
	for _, q := range r.Quant {
		if q.Bits == b && q.Width == w {
			return q.EncodeGBs
		}
	}
	return 0
}

func writeProfile(path string, p *perfmodel.Profile) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return container.WriteBytes(path, 0o644, append(b, '\n'))
}

// runProfileWorkers runs copies workers of t threads at once (the node
// fully busy, as when every core trains) and returns their rates.
func runProfileWorkers(exe string, t, copies int, sz profileSizes, parts int) ([]perfmodel.Rates, error) {
	type res struct {
		out bytes.Buffer
		err bytes.Buffer
		cmd *exec.Cmd
	}
	rs := make([]*res, copies)
	// the copies' lockstep pipes (stepper): each copy writes to ready[i]
	// and reads next[i]; this process keeps the other ends
	ready, next := make([]*os.File, 0, copies), make([]*os.File, 0, copies)
	stepped := make(chan struct{})
	defer func() {
		for _, f := range slices.Concat(ready, next) {
			f.Close()
		}
	}()
	for i := range rs {
		r := &res{}
		readyR, readyW, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("bench profile: lockstep pipe: %w", err)
		}
		nextR, nextW, err := os.Pipe()
		if err != nil {
			readyR.Close()
			readyW.Close()
			return nil, fmt.Errorf("bench profile: lockstep pipe: %w", err)
		}
		ready, next = append(ready, readyR), append(next, nextW)
		r.cmd = exec.Command(exe, "bench", "profile", "--worker", strconv.Itoa(t), "--lockstep", "--nodes", strconv.Itoa(sz.nodes),
			"--degree", strconv.FormatFloat(sz.degree, 'g', -1, 64), "--rows", strconv.Itoa(sz.rows), "--reps", strconv.Itoa(sz.reps),
			"--exchange-rows", strconv.Itoa(sz.xrows), "--peers", strconv.Itoa(sz.peers), "--halo-fan", strconv.Itoa(sz.fan))
		if sz.shards != "" {
			r.cmd.Args = append(r.cmd.Args, "--shards", sz.shards, "--shard-part", strconv.Itoa(i%parts))
		}
		r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.err
		r.cmd.ExtraFiles = []*os.File{readyW, nextR} // fds 3 and 4
		r.cmd.Env = append(os.Environ(), profileWorkerEnv+"=1")
		err = r.cmd.Start()
		readyW.Close() // the copy's ends: an ended copy closes its ready pipe
		nextR.Close()
		if err != nil {
			for _, s := range rs[:i] {
				s.cmd.Process.Kill()
				s.cmd.Wait()
			}
			return nil, fmt.Errorf("bench profile: starting a worker: %w", err)
		}
		rs[i] = r
	}
	go func() {
		defer close(stepped)
		stepCopies(ready, next)
	}()
	defer func() { <-stepped }()
	var failed error
	for _, r := range rs {
		if err := r.cmd.Wait(); err != nil && failed == nil {
			failed = fmt.Errorf("bench profile: worker (%d threads): %v: %s", t, err, strings.TrimSpace(r.err.String()))
		}
	}
	if failed != nil {
		return nil, failed
	}
	out := make([]perfmodel.Rates, copies)
	for i, r := range rs {
		if err := json.Unmarshal(r.out.Bytes(), &out[i]); err != nil {
			return nil, fmt.Errorf("bench profile: worker output: %w", err)
		}
	}
	return out, nil
}

// medianRates is the element-wise median over the copies' rates (all have
// the same entries in the same order).
func medianRates(rs []perfmodel.Rates) perfmodel.Rates {
	med := func(f func(r *perfmodel.Rates) float64) float64 {
		v := make([]float64, len(rs))
		for i := range rs {
			v[i] = f(&rs[i])
		}
		sort.Float64s(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	m := rs[0]
	m.Aggr = append([]perfmodel.AggrRate(nil), m.Aggr...)
	m.Gemm = append([]perfmodel.GemmRate(nil), m.Gemm...)
	m.Quant = append([]perfmodel.QuantRate(nil), m.Quant...)
	for i := range m.Aggr {
		m.Aggr[i].Forward = med(func(r *perfmodel.Rates) float64 { return r.Aggr[i].Forward })
		m.Aggr[i].Transpose = med(func(r *perfmodel.Rates) float64 { return r.Aggr[i].Transpose })
	}
	for i := range m.Gemm {
		m.Gemm[i].GFLOPS = med(func(r *perfmodel.Rates) float64 { return r.Gemm[i].GFLOPS })
	}
	for i := range m.Quant {
		m.Quant[i].EncodeGBs = med(func(r *perfmodel.Rates) float64 { return r.Quant[i].EncodeGBs })
		m.Quant[i].DecodeGBs = med(func(r *perfmodel.Rates) float64 { return r.Quant[i].DecodeGBs })
	}
	m.ElemGBs = med(func(r *perfmodel.Rates) float64 { return r.ElemGBs })
	m.DropoutGVs = med(func(r *perfmodel.Rates) float64 { return r.DropoutGVs })
	m.LayerNormGVs = med(func(r *perfmodel.Rates) float64 { return r.LayerNormGVs })
	m.SoftmaxGVs = med(func(r *perfmodel.Rates) float64 { return r.SoftmaxGVs })
	m.StreamGBs = med(func(r *perfmodel.Rates) float64 { return r.StreamGBs })
	if m.Exchange != nil {
		x := *m.Exchange
		x.RowRates = append([]perfmodel.RowRate(nil), x.RowRates...)
		x.Quant = append([]perfmodel.QuantRate(nil), x.Quant...)
		for i := range x.RowRates {
			x.RowRates[i].GatherGBs = med(func(r *perfmodel.Rates) float64 { return r.Exchange.RowRates[i].GatherGBs })
			x.RowRates[i].ScatterGBs = med(func(r *perfmodel.Rates) float64 { return r.Exchange.RowRates[i].ScatterGBs })
			x.RowRates[i].HaloGUPS = med(func(r *perfmodel.Rates) float64 { return r.Exchange.RowRates[i].HaloGUPS })
		}
		for i := range x.Quant {
			x.Quant[i].EncodeGBs = med(func(r *perfmodel.Rates) float64 { return r.Exchange.Quant[i].EncodeGBs })
			x.Quant[i].DecodeGBs = med(func(r *perfmodel.Rates) float64 { return r.Exchange.Quant[i].DecodeGBs })
		}
		x.ShareFactor = med(func(r *perfmodel.Rates) float64 { return r.Exchange.ShareFactor })
		for i := range rs {
			x.ShareFactorMax = max(x.ShareFactorMax, rs[i].Exchange.ShareFactorMax)
		}
		m.Exchange = &x
	}
	return m
}

var profileWidths = []int{16, 32, 64, 128, 256}

// trainLayout is the graph a GCN layer's local product aggregates, built
// from ds as train and exchange build it (not the generated order with GCN
// weights): the nodes renumbered in train's
// default order (partition.LocalOrder, which groups neighbours for
// locality), a self-loop appended to every row, no weights (the exchange
// scales rows on their own). The order alone makes the local product about
// twice as fast as on the generated order on dev.
func trainLayout(ds *graph.Dataset) (*graph.CSR, error) {
	return shardLayout(exchange.ShardFromDataset(ds))
}

// shardLayout is trainLayout of shard s's local graph (s is reordered in
// place).
func shardLayout(s *partition.Shard) (*graph.CSR, error) {
	perm, err := partition.LocalOrder(s, partition.DefaultOrder)
	if err == nil {
		err = s.Reorder(perm)
	}
	if err != nil {
		return nil, fmt.Errorf("bench profile: ordering the aggregation graph: %w", err)
	}
	a, n := s.Local, s.Local.NumRows
	b := &graph.CSR{NumRows: n, NumCols: n, Ptr: make([]int64, n+1), Idx: make([]int32, 0, a.NNZ()+int64(n))}
	for v := 0; v < n; v++ {
		b.Idx = append(b.Idx, a.Idx[a.Ptr[v]:a.Ptr[v+1]]...)
		b.Idx = append(b.Idx, int32(v))
		b.Ptr[v+1] = int64(len(b.Idx))
	}
	return b, nil
}

// aggrGraph is the graph whose local product the profile times: part
// sz.part of the partition sz.shards, or a generated products-like graph
// of sz.nodes nodes, in train's layout.
func aggrGraph(t int, sz profileSizes) (*graph.CSR, error) {
	if sz.shards != "" {
		m, err := partition.ReadMeta(sz.shards)
		if err != nil {
			return nil, err
		}
		s, err := partition.Load(sz.shards, sz.part%m.Parts, m.Parts)
		if err != nil {
			return nil, err
		}
		s.X = nil // the rows are the profile's own
		return shardLayout(s)
	}
	spec, err := graph.ParseGenSpec(fmt.Sprintf("nodes=%d,degree=%g,classes=47,feat=0,threads=%d", sz.nodes, sz.degree, t))
	if err != nil {
		return nil, err
	}
	ds, err := graph.Generate(spec)
	if err != nil {
		return nil, err
	}
	return trainLayout(ds)
}

// measureRates measures one rank's kernel rates with t threads: the
// aggregation engine on a generated products-like graph, dense.Gemm, the
// quantisation codec and nn's element-wise passes.
func measureRates(t int, sz profileSizes, st *stepper) (perfmodel.Rates, error) {
	r := perfmodel.Rates{Threads: t}
	a, err := aggrGraph(t, sz)
	if err != nil {
		return r, err
	}
	eng, err := aggr.New(t, "")
	if err != nil {
		return r, kernelError(err)
	}
	defer eng.Close()
	op := eng.Prepare(a)
	op.PrepareT()
	n, edges := a.NumRows, float64(len(a.Idx))
	rng := rand.New(rand.NewPCG(1, 2))
	fill := func(m *dense.Matrix) *dense.Matrix {
		for i := range m.Data {
			m.Data[i] = float32(rng.NormFloat64())
		}
		return m
	}
	for _, w := range profileWidths {
		x, y := fill(dense.New(n, w)), dense.New(n, w)
		runtime.GC()
		fwd, _ := timeStep(st, func() { op.Apply(x, y, false) }, sz.reps)
		tr, _ := timeStep(st, func() { op.ApplyT(x, y, false) }, sz.reps)
		r.Aggr = append(r.Aggr, perfmodel.AggrRate{Width: w, Forward: edges * float64(w) / (fwd / 1e3) / 1e9,
			Transpose: edges * float64(w) / (tr / 1e3) / 1e9})
	}
	share := 0.0
	if sz.xrows > 0 {
		if share, err = measureWindow(t, sz, op, fill, st); err != nil {
			return r, err
		}
	}
	a, op = nil, nil
	rows := sz.rows
	for _, opName := range []string{"nn", "tn", "nt"} {
		for _, k := range []int{32, 128, 256} {
			for _, nn := range []int{32, 128, 256} {
				var ms float64
				switch opName {
				case "nn": // X (rows×k) · W (k×n)
					x, w, c := fill(dense.New(rows, k)), fill(dense.New(k, nn)), dense.New(rows, nn)
					runtime.GC()
					ms, _ = timeStep(st, func() { dense.Gemm(false, false, 1, x, w, 0, c) }, sz.reps)
				case "tn": // Xᵀ (k×rows) · G (rows×n)
					x, g, c := fill(dense.New(rows, k)), fill(dense.New(rows, nn)), dense.New(k, nn)
					runtime.GC()
					ms, _ = timeStep(st, func() { dense.Gemm(true, false, 1, x, g, 0, c) }, sz.reps)
				case "nt": // G (rows×k) · Wᵀ (W: n×k)
					g, w, c := fill(dense.New(rows, k)), fill(dense.New(nn, k)), dense.New(rows, nn)
					runtime.GC()
					ms, _ = timeStep(st, func() { dense.Gemm(false, true, 1, g, w, 0, c) }, sz.reps)
				}
				r.Gemm = append(r.Gemm, perfmodel.GemmRate{Op: opName, K: k, N: nn,
					GFLOPS: 2 * float64(rows) * float64(k) * float64(nn) / (ms / 1e3) / 1e9})
			}
		}
	}
	for _, b := range []int{2, 4, 8} {
		for _, w := range profileWidths {
			c, err := quant.NewCodec(quant.Format{Bits: b, Params: quant.ParamsBlock}, t, "")
			if err != nil {
				return r, kernelError(err)
			}
			x := fill(dense.New(rows, w))
			y := dense.New(rows, w)
			d, p := c.Size(rows, w)
			buf := make([]byte, d+p)
			seed := uint64(0)
			runtime.GC()
			enc, _ := timeStep(st, func() { seed++; c.Encode(buf, x.Data, rows, w, seed) }, sz.reps)
			var derr error
			dec, _ := timeStep(st, func() {
				if err := c.Decode(y.Data, buf, rows, w); err != nil {
					derr = err
				}
			}, sz.reps)
			if derr != nil {
				return r, derr
			}
			gb := float64(rows) * float64(w) * 4 / 1e9
			r.Quant = append(r.Quant, perfmodel.QuantRate{Bits: b, Width: w, EncodeGBs: gb / (enc / 1e3), DecodeGBs: gb / (dec / 1e3)})
		}
	}
	// Element-wise: bias, ReLU, ReLU backward and a matrix add over a
	// rows×128 matrix: 8 + 8 + 12 + 12 bytes a value.
	x, g := fill(dense.New(rows, 128)), fill(dense.New(rows, 128))
	bias := make([]float32, 128)
	runtime.GC()
	ms, _ := timeStep(st, func() {
		dense.AddBias(x, bias)
		nn.ReLU(x)
		nn.ReLUBackward(g, x)
		dense.Add(g, x)
	}, sz.reps)
	r.ElemGBs = 40 * float64(rows) * 128 / (ms / 1e3) / 1e9
	// Dropout (rate 0.5) forward and backward, LayerNorm forward and
	// backward, over the same rows×128 values; the loss over rows×47
	// logits (every row supervised).
	drop := &nn.Dropout{P: 0.5}
	seed := uint64(0)
	runtime.GC()
	ms, _ = timeStep(st, func() { seed++; drop.Forward(x, true, false, seed); drop.Backward(g) }, sz.reps)
	r.DropoutGVs = float64(rows) * 128 / (ms / 1e3) / 1e9
	ln := nn.NewLayerNorm("ln", 128)
	runtime.GC()
	ms, _ = timeStep(st, func() { ln.Forward(x); ln.Backward(g) }, sz.reps)
	r.LayerNormGVs = float64(rows) * 128 / (ms / 1e3) / 1e9
	const classes = 47
	logits := fill(dense.New(rows, classes))
	labels, all := make([]int32, rows), make([]int32, rows)
	for i := range labels {
		labels[i], all[i] = int32(i%classes), int32(i)
	}
	grad := dense.New(rows, classes)
	var lerr error
	runtime.GC()
	ms, _ = timeStep(st, func() {
		if _, _, err := nn.SoftmaxCrossEntropyInto(grad, logits, labels, all, float64(rows)); err != nil {
			lerr = err
		}
	}, sz.reps)
	if lerr != nil {
		return r, lerr
	}
	r.SoftmaxGVs = float64(rows) * classes / (ms / 1e3) / 1e9
	st.sync()
	r.StreamGBs = runStream(t, 64, sz.reps).triad
	if sz.xrows > 0 {
		x, err := measureExchange(t, sz, fill, rng, st)
		if err != nil {
			return r, err
		}
		x.ShareFactor, x.ShareFactorMax = share, share // one copy's; medianRates takes the median and the max
		r.Exchange = x
	}
	return r, nil
}

// windowWidth is the width of the shared-window measurement (the GCN
// rows' first layer aggregates 100 features; 128 is a profile width).
const windowWidth = 128

// measureWindow times the exchange's shared window as train runs it with
// no spare core (perfmodel.ExchangeRates.ShareFactor): the local product
// (op at windowWidth, t threads) on its own goroutine while this
// goroutine, the exchange's driver, encodes sz.xrows int2 rows in sz.peers
// blocks as often as it takes to last about as long, with GOMAXPROCS t+1
// as train sets it. The codec splits its blocks over t threads as the
// local product does, so the ideal window is local + encoding, the two
// measured alone just before. It returns the median over the repetitions
// of the window's wall time over that: 1 when the cores are shared
// without loss.
func measureWindow(t int, sz profileSizes, op *aggr.Op, fill func(*dense.Matrix) *dense.Matrix, st *stepper) (float64, error) {
	n, w, xr := op.CSR().NumRows, windowWidth, sz.xrows
	c, err := quant.NewCodec(quant.Format{Bits: 2, Params: quant.ParamsBlock}, t, "")
	if err != nil {
		return 0, kernelError(err)
	}
	x, y, sbuf := fill(dense.New(n, w)), dense.New(n, w), fill(dense.New(xr, w))
	off := make([]int, sz.peers+1)
	enc := make([][]byte, sz.peers)
	for q := range enc {
		off[q+1] = (q + 1) * xr / sz.peers
		d, p := c.Size(off[q+1]-off[q], w)
		enc[q] = make([]byte, d+p)
	}
	seed := uint64(0)
	encode := func() {
		for q := range enc {
			seed++
			c.Encode(enc[q], sbuf.Data[off[q]*w:off[q+1]*w], off[q+1]-off[q], w, seed)
		}
	}
	local := func() { op.Apply(x, y, false) }
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GC()
	var ratios []float64
	for rep := 0; rep <= sz.reps; rep++ { // rep 0 warms up
		runtime.GOMAXPROCS(t)
		st.sync()
		t0 := time.Now()
		local()
		tl := time.Since(t0).Seconds()
		st.sync()
		t0 = time.Now()
		encode()
		te := time.Since(t0).Seconds()
		k := max(1, int(math.Round(tl/te)))
		runtime.GOMAXPROCS(t + 1)
		done := make(chan struct{})
		st.sync() // every copy's window at once, as every rank's in train
		t0 = time.Now()
		go func() {
			defer close(done)
			local()
		}()
		for range k {
			encode()
		}
		<-done
		wall := time.Since(t0).Seconds()
		if rep > 0 {
			ratios = append(ratios, wall/(tl+float64(k)*te)) // both on t threads: their CPU over t cores
		}
	}
	return median(ratios), nil
}

// measureExchange times one boundary exchange's passes in the order an
// exchange runs them, on buffers of its sizes (perfmodel.ExchangeRates):
// sz.xrows send-buffer rows gathered by the aggregation engine (one entry
// a row, as the send product holds for a post row) from a feature matrix
// of sz.rows rows, encoded in sz.peers blocks, decoded block by block into
// the receive buffer, and added by the engine into sz.rows output rows.
// Within a peer's block the rows are ascending, as the exchange plans
// them. Each repetition walks every buffer once, so none is cache-hot
// unless it fits in the cache; the medians are kept.
func measureExchange(t int, sz profileSizes, fill func(*dense.Matrix) *dense.Matrix, rng *rand.Rand, st *stepper) (*perfmodel.ExchangeRates, error) {
	n, xr := sz.rows, sz.xrows
	off := make([]int, sz.peers+1)
	for q := range off {
		off[q] = q * xr / sz.peers
	}
	// gather: send row i reads feature row src[i]; scatter: receive row i
	// is added into output row dst[i]; both ascending within a block
	src, dst := make([]int32, xr), make([]int32, xr)
	for q := 0; q < sz.peers; q++ {
		for i := off[q]; i < off[q+1]; i++ {
			src[i], dst[i] = int32(rng.IntN(n)), int32(rng.IntN(n))
		}
		slices.Sort(src[off[q]:off[q+1]])
		slices.Sort(dst[off[q]:off[q+1]])
	}
	eng, err := aggr.New(t, "")
	if err != nil {
		return nil, kernelError(err)
	}
	defer eng.Close()
	ptr := make([]int64, xr+1)
	for i := range ptr {
		ptr[i] = int64(i)
	}
	gather := eng.Prepare(&graph.CSR{NumRows: xr, NumCols: n, Ptr: ptr, Idx: src})
	rows := make([]int32, xr)
	for i := range rows {
		rows[i] = int32(i)
	}
	scatter := eng.PrepareIndexAdd(dst, rows, n, xr)
	halo := eng.Prepare(haloCSR(n, xr, sz.fan, rng))
	bits := []int{2, 4, 8}
	codecs := make([]*quant.Codec, len(bits))
	for i, b := range bits {
		if codecs[i], err = quant.NewCodec(quant.Format{Bits: b, Params: quant.ParamsBlock}, t, ""); err != nil {
			return nil, kernelError(err)
		}
	}
	x := &perfmodel.ExchangeRates{Rows: xr, Peers: sz.peers, HaloFan: sz.fan}
	for _, w := range profileWidths {
		feat, out := fill(dense.New(n, w)), dense.New(n, w)
		sbuf, rbuf := dense.New(xr, w), dense.New(xr, w)
		gb := float64(xr) * float64(w) * 4 / 1e9
		var tg, ts, th []float64
		te, td := make([][]float64, len(bits)), make([][]float64, len(bits))
		encs := make([][][]byte, len(codecs)) // per codec and peer, reused as the exchange reuses its buffers
		for i, c := range codecs {
			encs[i] = make([][]byte, sz.peers)
			for q := range encs[i] {
				d, p := c.Size(off[q+1]-off[q], w)
				encs[i][q] = make([]byte, d+p)
			}
		}
		seed := uint64(0)
		runtime.GC()
		for rep := 0; rep <= sz.reps; rep++ { // rep 0 warms up
			for i, c := range codecs {
				enc := encs[i]
				st.sync()
				t0 := time.Now()
				gather.Apply(feat, sbuf, false)
				t1 := time.Now()
				t2 := t1
				for q := range enc {
					seed++
					c.Encode(enc[q], sbuf.Data[off[q]*w:off[q+1]*w], off[q+1]-off[q], w, seed)
				}
				t3 := time.Now()
				for q := range enc {
					if err := c.Decode(rbuf.Data[off[q]*w:off[q+1]*w], enc[q], off[q+1]-off[q], w); err != nil {
						return nil, err
					}
				}
				t4 := time.Now()
				scatter.Apply(rbuf, out, true)
				t5 := time.Now()
				halo.Apply(rbuf, out, true)
				t6 := time.Now()
				if rep > 0 {
					tg = append(tg, t1.Sub(t0).Seconds())
					te[i] = append(te[i], t3.Sub(t2).Seconds())
					td[i] = append(td[i], t4.Sub(t3).Seconds())
					ts = append(ts, t5.Sub(t4).Seconds())
					th = append(th, t6.Sub(t5).Seconds())
				}
			}
		}
		x.RowRates = append(x.RowRates, perfmodel.RowRate{Width: w, GatherGBs: gb / median(tg), ScatterGBs: gb / median(ts),
			HaloGUPS: float64(len(halo.CSR().Idx)) * float64(w) / median(th) / 1e9})
		for i, b := range bits {
			x.Quant = append(x.Quant, perfmodel.QuantRate{Bits: b, Width: w, EncodeGBs: gb / median(te[i]), DecodeGBs: gb / median(td[i])})
		}
	}
	return x, nil
}

// haloCSR is the cut-edge product of an exchange (the halo product H of
// the forward pass, or the send product's transpose Sᵀ of the backward):
// n local rows, each adding rows read from a buffer of xr exchange rows,
// fan·xr entries in all (--halo-fan; a 16-part products partition has
// 2.4 cut edges per hybrid row, 1.53 M for 0.64 M rows a rank, and 1.8
// per post row), at random positions (ascending within a
// row, as the exchange plans them). Unlike the local graph, which train
// orders for locality, these reads scatter over the whole buffer.
func haloCSR(n, xr, fan int, rng *rand.Rand) *graph.CSR {
	h := &graph.CSR{NumRows: n, NumCols: xr, Ptr: make([]int64, n+1), Idx: make([]int32, fan*xr)}
	for i := range h.Idx {
		h.Idx[i] = int32(rng.IntN(xr))
	}
	per := make([]int, n)
	for i := 0; i < fan*xr; i++ {
		per[rng.IntN(n)]++
	}
	for v := 0; v < n; v++ {
		h.Ptr[v+1] = h.Ptr[v] + int64(per[v])
		slices.Sort(h.Idx[h.Ptr[v]:h.Ptr[v+1]])
	}
	return h
}

// median of v (sorted in place).
func median(v []float64) float64 {
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// profileWorkerEnv marks the processes bench profile starts as its
// workers: --worker is refused in any other (by hand it would wait on
// lockstep pipes nobody feeds, or measure for minutes unasked).
const profileWorkerEnv = "SUPERGCN_PROFILE_WORKER"

// stepper keeps a `bench profile` worker in step with the other copies
// (--lockstep): before each timed pass it tells the parent it is ready and
// waits until every copy is. So the copies time the same pass at once, as
// the ranks of a node run the same phase at once in train (every exchange
// lines them up). Out of step, a copy timing a memory-bound pass shares the
// node with copies in other passes, and the shared window finds free cores
// (without --lockstep: factors of 0.76 and 0.83 with 16 one-thread
// copies on 16 cores, below the 1 that full cores allow). A nil stepper, or
// one whose parent stopped stepping, does not wait.
type stepper struct {
	ready, next *os.File
}

// sync waits until every copy is ready.
func (s *stepper) sync() {
	if s == nil || s.ready == nil {
		return
	}
	b := []byte{1}
	if _, err := s.ready.Write(b); err == nil {
		if _, err = io.ReadFull(s.next, b); err == nil {
			return
		}
	}
	s.ready, s.next = nil, nil // a copy ended early: go on alone
}

// stepCopies is the parent's side of the copies' steppers: each round it
// reads a byte from every ready pipe, then writes one to every next pipe.
// It returns when a ready pipe ends (its copy exited: the copies end
// together, or one failed) and closes the next pipes, so that copies still
// waiting go on alone.
func stepCopies(ready, next []*os.File) {
	defer func() {
		for _, f := range next {
			f.Close()
		}
	}()
	b := []byte{1}
	for {
		for _, f := range ready {
			if _, err := io.ReadFull(f, b); err != nil {
				return
			}
		}
		for _, f := range next {
			if _, err := f.Write(b); err != nil {
				return
			}
		}
	}
}

// timeStep is timeIt with the copies in step: the median milliseconds of
// reps runs of fn after one warm-up, each run started with every copy.
func timeStep(st *stepper, fn func(), reps int) (median, minimum float64) {
	return timeEach(st.sync, fn, reps)
}

package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/partition"
)

func init() {
	registerBench("order", "local node orders (train --node-order): cost of each and the mean aggregation's time per width under it", benchOrder)
}

// orderResult is one line of `bench order --json`: one order at one width.
type orderResult struct {
	Order     string  `json:"order"`
	Nodes     int     `json:"nodes"`
	Edges     int64   `json:"edges"`
	Parts     int     `json:"parts"`
	Width     int     `json:"width"`
	Threads   int     `json:"threads"`
	Reps      int     `json:"reps"`
	OrderMS   float64 `json:"order_ms"`   // computing the permutation
	ReorderMS float64 `json:"reorder_ms"` // applying it to the shard
	FwdMS     float64 `json:"fwd_median_ms"`
	BwdMS     float64 `json:"bwd_median_ms"`
	FwdGain   float64 `json:"fwd_speedup"` // given order's time / this one's
	BwdGain   float64 `json:"bwd_speedup"`
}

func benchOrder(args []string) error {
	fs := newFlagSet("bench order", "[flags]")
	specArg := fs.String("spec", "nodes=400000,degree=50.5,classes=47,feat=0", "generated graph (supergcn gen --spec syntax; features are not used: x is random)")
	parts := fs.Int("parts", 1, "time rank 0's shard of a random partition into this many parts (1: the whole graph)")
	ordersArg := fs.String("orders", strings.Join(partition.NodeOrders(), ","), "orders, comma separated: "+strings.Join(partition.NodeOrders(), ","))
	widthsArg := fs.String("widths", "47,100,256", "feature widths, comma separated")
	threads := new(int)
	threadsVar(fs, threads)
	reps := fs.Int("reps", 5, "timed repetitions per product (after one warm-up); the median is reported")
	kernel := fs.String("kernel", "", "aggregation kernel: "+strings.Join(aggr.Kernels(), "|")+" (default $SUPERGCN_KERNEL, else the best)")
	asJSON := fs.Bool("json", false, "print one JSON object per order and width, one a line")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *reps < 1 || *parts < 1 {
		return usageError{"--reps and --parts must be ≥ 1"}
	}
	spec, err := graph.ParseGenSpec(*specArg)
	if err != nil {
		return usageError{"--spec: " + err.Error()}
	}
	var widths []int
	for _, w := range strings.Split(*widthsArg, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(w))
		if err != nil || v < 1 {
			return usageError{fmt.Sprintf("--widths: %q is not a positive number", w)}
		}
		widths = append(widths, v)
	}
	orders := strings.Split(*ordersArg, ",")
	for _, o := range orders {
		if !benchContains(partition.NodeOrders(), o) {
			return usageError{fmt.Sprintf("--orders: unknown order %q (known: %s)", o, strings.Join(partition.NodeOrders(), ","))}
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
	spec.Feat = 0
	t0 := time.Now()
	ds, err := graph.Generate(spec)
	if err != nil {
		return err
	}
	genS := time.Since(t0).Seconds()
	owner := make([]int32, ds.NumNodes())
	if *parts > 1 {
		rng := rand.New(rand.NewPCG(spec.Seed, 0x0de7))
		for v := range owner {
			owner[v] = int32(rng.IntN(*parts))
		}
	}
	base := partition.Split(ds, owner, 0, *parts)
	n := len(base.Global)
	if !*asJSON {
		fmt.Printf("bench order: spec %q (generated in %.1fs), part 0 of %d: %d nodes, %d local edges, threads %d, kernel %s, reps %d (median)\n",
			*specArg, genS, *parts, n, base.Local.NNZ(), *threads, eng.KernelName(), *reps)
		fmt.Printf("%-8s %6s %10s %10s %10s %10s %8s %8s\n", "order", "width", "order_ms", "reorder_ms", "fwd_ms", "bwd_ms", "fwd_x", "bwd_x")
	}
	rng := rand.New(rand.NewPCG(spec.Seed, 99))
	maxw := 0
	for _, w := range widths {
		maxw = max(maxw, w)
	}
	xbuf := make([]float32, n*maxw)
	for i := range xbuf {
		xbuf[i] = float32(rng.NormFloat64())
	}
	obuf := make([]float32, n*maxw)
	// Every order's operator first, then the products interleaved (each
	// repetition times every order once), so drifting load on a shared
	// machine hits all orders alike.
	type prepared struct {
		name               string
		orderMS, reorderMS float64
		a                  *graph.CSR
		op                 *aggr.Op
		scale              []float32
	}
	var ps []prepared
	for _, o := range orders {
		sh := partition.Split(structureOnly(base), make([]int32, n), 0, 1) // a fresh copy: Reorder works in place
		t1 := time.Now()
		perm, err := partition.LocalOrder(sh, o)
		if err != nil {
			return err
		}
		orderMS := benchMS(time.Since(t1))
		t2 := time.Now()
		if err := sh.Reorder(perm); err != nil {
			return err
		}
		reorderMS := benchMS(time.Since(t2))
		a := sh.Local
		op := eng.Prepare(a)
		op.PrepareT()
		scale := make([]float32, n)
		for v := range scale {
			if d := a.Degree(v); d > 0 {
				scale[v] = 1 / float32(d)
			}
		}
		ps = append(ps, prepared{o, orderMS, reorderMS, a, op, scale})
	}
	runtime.GC()
	for _, w := range widths {
		x := &dense.Matrix{Rows: n, Cols: w, Data: xbuf[:n*w]}
		out := &dense.Matrix{Rows: n, Cols: w, Data: obuf[:n*w]}
		fwd, bwd := make([][]float64, len(ps)), make([][]float64, len(ps))
		for rep := -1; rep < *reps; rep++ { // rep -1: warm-up
			for i, p := range ps {
				t := time.Now()
				p.op.ApplyScaled(x, out, p.scale, false)
				tf := benchMS(time.Since(t))
				t = time.Now()
				p.op.ApplyTScaled(x, out, p.scale, false)
				tb := benchMS(time.Since(t))
				if rep >= 0 {
					fwd[i], bwd[i] = append(fwd[i], tf), append(bwd[i], tb)
				}
			}
		}
		gf, gb := 0.0, 0.0
		for i, p := range ps {
			if p.name == partition.OrderGiven {
				gf, gb = orderMedian(fwd[i]), orderMedian(bwd[i])
			}
		}
		for i, p := range ps {
			r := orderResult{Order: p.name, Nodes: n, Edges: p.a.NNZ(), Parts: *parts, Width: w, Threads: *threads, Reps: *reps,
				OrderMS: p.orderMS, ReorderMS: p.reorderMS, FwdMS: orderMedian(fwd[i]), BwdMS: orderMedian(bwd[i])}
			if gf > 0 {
				r.FwdGain, r.BwdGain = gf/r.FwdMS, gb/r.BwdMS
			}
			if *asJSON {
				b, _ := json.Marshal(r)
				fmt.Println(string(b))
			} else {
				fmt.Printf("%-8s %6d %10.1f %10.1f %10.2f %10.2f %8.2f %8.2f\n", p.name, w, p.orderMS, p.reorderMS, r.FwdMS, r.BwdMS, r.FwdGain, r.BwdGain)
			}
		}
	}
	if !*asJSON {
		fmt.Println("fwd = mean aggregation A·x (row-scaled), bwd = its transpose; fwd_x, bwd_x = the given order's time / this order's (0: no given row to compare)")
	}
	return nil
}

// structureOnly wraps a shard's local graph as a structure-only dataset,
// so each order starts from an identical copy of the shard.
func structureOnly(s *partition.Shard) *graph.Dataset {
	return &graph.Dataset{Graph: s.Local}
}

// orderMedian returns the median of ts (sorted in place).
func orderMedian(ts []float64) float64 {
	sort.Float64s(ts)
	m := len(ts) / 2
	if len(ts)%2 == 0 {
		return (ts[m-1] + ts[m]) / 2
	}
	return ts[m]
}

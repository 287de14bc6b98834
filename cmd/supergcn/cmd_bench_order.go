package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/perfmodel/measure"
)

func init() {
	registerBench("order", "local node orders (train --node-order): cost of each and the mean aggregation's time per width under it", benchOrder)
}

// orderResult is one line of `bench order --json`: one order at one width.
type orderResult struct {
	measure.OrderResult
	Parts   int `json:"parts"`
	Threads int `json:"threads"`
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
		return usageError("--reps and --parts must be ≥ 1")
	}
	spec, err := graph.ParseGenSpec(*specArg)
	if err != nil {
		return usageError("--spec: " + err.Error())
	}
	var widths []int
	for _, w := range strings.Split(*widthsArg, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(w))
		if err != nil || v < 1 {
			return usageError(fmt.Sprintf("--widths: %q is not a positive number", w))
		}
		widths = append(widths, v)
	}
	// x and out of the widest width over all the nodes (a shard has at most as many).
	maxw := slices.Max(widths)
	if err := sizeFlag("--widths", 8*float64(spec.Nodes)*float64(maxw),
		fmt.Sprintf("width %d on %d nodes", maxw, spec.Nodes)); err != nil {
		return err
	}
	orders := strings.Split(*ordersArg, ",")
	for _, o := range orders {
		if !slices.Contains(partition.NodeOrders(), o) {
			return usageError(fmt.Sprintf("--orders: unknown order %q (known: %s)", o, strings.Join(partition.NodeOrders(), ",")))
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
	base, genS, err := measure.OrderShard(spec, *parts)
	if err != nil {
		return err
	}
	n := len(base.Global)
	if !*asJSON {
		fmt.Printf("bench order: spec %q (generated in %.1fs), part 0 of %d: %d nodes, %d local edges, threads %d, kernel %s, reps %d (median)\n",
			*specArg, genS, *parts, n, base.Local.NNZ(), *threads, eng.KernelName(), *reps)
		fmt.Printf("%-8s %6s %10s %10s %10s %10s %8s %8s\n", "order", "width", "order_ms", "reorder_ms", "fwd_ms", "bwd_ms", "fwd_x", "bwd_x")
	}
	rs, err := measure.Orders(base, orders, widths, eng, *reps, spec.Seed)
	if err != nil {
		return err
	}
	for _, m := range rs {
		r := orderResult{OrderResult: m, Parts: *parts, Threads: *threads}
		if *asJSON {
			b, _ := json.Marshal(r)
			fmt.Println(string(b))
		} else {
			fmt.Printf("%-8s %6d %10.1f %10.1f %10.2f %10.2f %8.2f %8.2f\n", r.Order, r.Width, r.OrderMS, r.ReorderMS, r.FwdMS, r.BwdMS, r.FwdGain, r.BwdGain)
		}
	}
	if !*asJSON {
		fmt.Println("fwd = mean aggregation A·x (row-scaled), bwd = its transpose; fwd_x, bwd_x = the given order's time / this order's (0: no given row to compare)")
	}
	return nil
}

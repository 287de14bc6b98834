package measure

import (
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/perfmodel"
)

// OrderResult is one node order of a shard at one width: the cost of the
// order and the mean aggregation's median milliseconds under it.
type OrderResult struct {
	Order     string  `json:"order"`
	Nodes     int     `json:"nodes"`
	Edges     int64   `json:"edges"`
	Width     int     `json:"width"`
	Reps      int     `json:"reps"`
	OrderMS   float64 `json:"order_ms"`   // computing the permutation
	ReorderMS float64 `json:"reorder_ms"` // applying it to the shard
	FwdMS     float64 `json:"fwd_median_ms"`
	BwdMS     float64 `json:"bwd_median_ms"`
	FwdGain   float64 `json:"fwd_speedup"` // the given order's time / this one's (0: given not measured)
	BwdGain   float64 `json:"bwd_speedup"`
}

// orderedOp is one order's operator on its own copy of the shard.
type orderedOp struct {
	name               string
	orderMS, reorderMS float64
	a                  *graph.CSR
	op                 *aggr.Op
	scale              []float32
}

// Orders times the mean aggregation (row-scaled A·x and its transpose) of
// shard s's local graph under each node order (partition.LocalOrder) at
// each width, reps times after a warm-up, on eng. Every order's operator is
// built first, then the products run interleaved (each repetition times
// every order once), so drifting load on a shared machine hits all orders
// alike. Results are by width, then order.
func Orders(s *partition.Shard, orders []string, widths []int, eng *aggr.Engine, reps int, seed uint64) ([]OrderResult, error) {
	n := len(s.Global)
	var ps []orderedOp
	for _, o := range orders {
		p, err := prepareOrder(s, o, eng)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	maxw := 0
	for _, w := range widths {
		maxw = max(maxw, w)
	}
	f := filler{rand.New(rand.NewPCG(seed, 99))}
	xbuf, obuf := f.fill(dense.New(n, maxw)).Data, make([]float32, n*maxw)
	runtime.GC()
	var out []OrderResult
	for _, w := range widths {
		x := &dense.Matrix{Rows: n, Cols: w, Data: xbuf[:n*w]}
		y := &dense.Matrix{Rows: n, Cols: w, Data: obuf[:n*w]}
		fwd, bwd := make([][]float64, len(ps)), make([][]float64, len(ps))
		for rep := -1; rep < reps; rep++ { // rep -1: warm-up
			for i, p := range ps {
				t := time.Now()
				p.op.ApplyScaled(x, y, p.scale, false)
				tf := ms(time.Since(t))
				t = time.Now()
				p.op.ApplyTScaled(x, y, p.scale, false)
				tb := ms(time.Since(t))
				if rep >= 0 {
					fwd[i], bwd[i] = append(fwd[i], tf), append(bwd[i], tb)
				}
			}
		}
		gf, gb := 0.0, 0.0
		for i, p := range ps {
			if p.name == partition.OrderGiven {
				gf, gb = perfmodel.Median(fwd[i]), perfmodel.Median(bwd[i])
			}
		}
		for i, p := range ps {
			r := OrderResult{Order: p.name, Nodes: n, Edges: p.a.NNZ(), Width: w, Reps: reps,
				OrderMS: p.orderMS, ReorderMS: p.reorderMS, FwdMS: perfmodel.Median(fwd[i]), BwdMS: perfmodel.Median(bwd[i])}
			if gf > 0 {
				r.FwdGain, r.BwdGain = gf/r.FwdMS, gb/r.BwdMS
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// prepareOrder orders a copy of s's local graph (Reorder works in place)
// and prepares its mean aggregation.
func prepareOrder(s *partition.Shard, order string, eng *aggr.Engine) (orderedOp, error) {
	n := len(s.Global)
	sh := partition.Split(&graph.Dataset{Graph: s.Local}, make([]int32, n), 0, 1)
	t1 := time.Now()
	perm, err := partition.LocalOrder(sh, order)
	if err != nil {
		return orderedOp{}, err
	}
	orderMS := ms(time.Since(t1))
	t2 := time.Now()
	if err := sh.Reorder(perm); err != nil {
		return orderedOp{}, err
	}
	reorderMS := ms(time.Since(t2))
	a := sh.Local
	op := eng.Prepare(a)
	op.PrepareT()
	scale := make([]float32, n)
	for v := range scale {
		if d := a.Degree(v); d > 0 {
			scale[v] = 1 / float32(d)
		}
	}
	return orderedOp{order, orderMS, reorderMS, a, op, scale}, nil
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// OrderShard generates the graph of spec (without features) and returns
// part 0 of a random partition of it into parts (1: the whole graph), the
// shard Orders times, and the seconds the generation took.
func OrderShard(spec graph.GenSpec, parts int) (*partition.Shard, float64, error) {
	spec.Feat = 0
	t0 := time.Now()
	ds, err := graph.Generate(spec)
	if err != nil {
		return nil, 0, err
	}
	genS := time.Since(t0).Seconds()
	owner := make([]int32, ds.NumNodes())
	if parts > 1 {
		rng := rand.New(rand.NewPCG(spec.Seed, 0x0de7))
		for v := range owner {
			owner[v] = int32(rng.IntN(parts))
		}
	}
	return partition.Split(ds, owner, 0, parts), genS, nil
}

// Package measure measures a machine's kernel rates for perfmodel: one
// rank's aggregation on train's local graph, dense products, the
// quantisation codec, the fused hidden stage, the loss, and one boundary
// exchange's passes (Rates), with the node full of copies kept in step
// (Copies, Stepper), and the sweep over thread counts and loads that makes
// a perfmodel.Profile (Profile). The copies are processes the caller
// starts (a re-exec of its own program): memory bandwidth and caches are
// shared as ranks share them.
package measure

import (
	"fmt"
	"math/rand/v2"
	"runtime"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/perfmodel"
	"github.com/supergcn/supergcn/quant"
)

// Sizes are the problem sizes of one measuring copy.
type Sizes struct {
	// Spec is the generator spec of the aggregation graph (graph.ParseGenSpec:
	// a preset and keys; "" the generator's defaults); Nodes and Degree
	// (when > 0) override its nodes and degree.
	Spec   string
	Nodes  int     // aggregation graph nodes
	Degree float64 // and its mean degree (0: the spec's)
	Rows   int     // rows of the GEMMs, codec blocks and element-wise passes
	Reps   int     // timed repetitions after one warm-up; the median is kept
	// ExchangeRows are the exchange pattern's send/receive buffer rows
	// (0: not measured), split into Peers peer blocks; HaloFan is the cut
	// edges a receive-buffer row has in the halo product.
	ExchangeRows, Peers, HaloFan int
	// Shards (optional): aggregate the local graph of part Part mod the
	// parts of this partition directory instead of a generated graph.
	Shards string
	Part   int
}

// Widths are the row widths of the aggregation, codec and exchange rates.
var Widths = []int{16, 32, 64, 128, 256}

// elemWidth is the width of the element-wise, dropout and fused-stage
// passes; classes that of the loss (ogbn-products' 47).
const (
	elemWidth = 128
	classes   = 47
)

// TrainLayout is the graph a GCN layer's local product aggregates, built
// from ds as train and exchange build it: the nodes renumbered in train's
// default order (partition.LocalOrder, which groups neighbours for
// locality), a self-loop after every row's entries (graph.LoopLast), no
// weights (the exchange scales rows on their own).
func TrainLayout(ds *graph.Dataset) (*graph.CSR, error) {
	return shardLayout(exchange.ShardFromDataset(ds))
}

// shardLayout is TrainLayout of shard s's local graph (s is reordered in
// place).
func shardLayout(s *partition.Shard) (*graph.CSR, error) {
	perm, err := partition.LocalOrder(s, partition.DefaultOrder)
	if err == nil {
		err = s.Reorder(perm)
	}
	if err != nil {
		return nil, fmt.Errorf("ordering the aggregation graph: %w", err)
	}
	return graph.AddSelfLoops(s.Local, graph.LoopLast), nil
}

// aggrGraph is the graph whose local product the profile times: part
// sz.Part of the partition sz.Shards, or a generated products-like graph
// of sz.Nodes nodes, in train's layout.
func aggrGraph(t int, sz Sizes) (*graph.CSR, error) {
	if sz.Shards != "" {
		m, err := partition.ReadMeta(sz.Shards)
		if err != nil {
			return nil, err
		}
		s, err := partition.Load(sz.Shards, sz.Part%m.Parts, m.Parts)
		if err != nil {
			return nil, err
		}
		s.Features = graph.Features{} // the rows are the profile's own
		return shardLayout(s)
	}
	text := fmt.Sprintf("nodes=%d,feat=0,threads=%d", sz.Nodes, t)
	if sz.Degree > 0 {
		text += fmt.Sprintf(",degree=%g", sz.Degree)
	}
	if sz.Spec != "" {
		text = sz.Spec + "," + text
	}
	spec, err := graph.ParseGenSpec(text)
	if err != nil {
		return nil, err
	}
	ds, err := graph.Generate(spec)
	if err != nil {
		return nil, err
	}
	return TrainLayout(ds)
}

// filler fills matrices with standard normal values from one stream.
type filler struct{ rng *rand.Rand }

func (f filler) fill(m *dense.Matrix) *dense.Matrix {
	for i := range m.Data {
		m.Data[i] = float32(f.rng.NormFloat64())
	}
	return m
}

// Rates measures one rank's kernel rates with t threads (the caller sets
// the thread budget): the aggregation engine on train's local graph,
// dense.Gemm, the quantisation codec, the element-wise passes, the input
// dropout, the fused hidden stage, the loss, STREAM and, with
// sz.ExchangeRows, the exchange pattern and its shared window. Each timed
// pass starts with every copy (st; nil: alone).
func Rates(t int, sz Sizes, st *Stepper) (perfmodel.Rates, error) {
	r := perfmodel.Rates{Threads: t, Rows: sz.Rows}
	f := filler{rand.New(rand.NewPCG(1, 2))}
	share := 0.0
	if err := aggrRates(&r, t, sz, st, f, &share); err != nil {
		return r, err
	}
	gemmRates(&r, sz, st, f)
	if err := quantRates(&r, t, sz, st, f); err != nil {
		return r, err
	}
	if err := nnRates(&r, sz, st, f); err != nil {
		return r, err
	}
	st.Sync()
	r.StreamGBs = Stream(t, 64, sz.Reps).Triad
	if sz.ExchangeRows > 0 {
		x, err := exchangeRates(t, sz, f, st)
		if err != nil {
			return r, err
		}
		x.ShareFactor, x.ShareFactorMax = share, share // one copy's; MedianRates takes the median and the max
		r.Exchange = x
	}
	return r, nil
}

// aggrRates times the local product forward and transposed at every
// width, the attention kernels on its graph (attnRates), and with sz.ExchangeRows the shared window (*share).
func aggrRates(r *perfmodel.Rates, t int, sz Sizes, st *Stepper, f filler, share *float64) error {
	a, err := aggrGraph(t, sz)
	if err != nil {
		return err
	}
	eng, err := aggr.New(t, "")
	if err != nil {
		return err
	}
	defer eng.Close()
	op := eng.Prepare(a)
	op.PrepareT()
	n, edges := a.NumRows, float64(len(a.Idx))
	r.AggrNodes = n
	for _, w := range Widths {
		x, y := f.fill(dense.New(n, w)), dense.New(n, w)
		runtime.GC()
		fwd := st.timeStep(func() { op.Apply(x, y, false) }, sz.Reps)
		tr := st.timeStep(func() { op.ApplyT(x, y, false) }, sz.Reps)
		r.Aggr = append(r.Aggr, perfmodel.AggrRate{Width: w, Forward: edges * float64(w) / (fwd / 1e3) / 1e9,
			Transpose: edges * float64(w) / (tr / 1e3) / 1e9})
	}
	if err := attnRates(r, a, eng, sz, st, f); err != nil {
		return err
	}
	if sz.ExchangeRows > 0 {
		*share, err = measureWindow(t, sz, op, f, st)
	}
	return err
}

// gemmRates times the three product classes at K, N ∈ {32, 128, 256}.
func gemmRates(r *perfmodel.Rates, sz Sizes, st *Stepper, f filler) {
	rows := sz.Rows
	for _, opName := range []string{"nn", "tn", "nt"} {
		for _, k := range []int{32, 128, 256} {
			for _, n := range []int{32, 128, 256} {
				var run func()
				switch opName {
				case "nn": // X (rows×k) · W (k×n)
					x, w, c := f.fill(dense.New(rows, k)), f.fill(dense.New(k, n)), dense.New(rows, n)
					run = func() { dense.Gemm(false, false, 1, x, w, 0, c) }
				case "tn": // Xᵀ (k×rows) · G (rows×n)
					x, g, c := f.fill(dense.New(rows, k)), f.fill(dense.New(rows, n)), dense.New(k, n)
					run = func() { dense.Gemm(true, false, 1, x, g, 0, c) }
				case "nt": // G (rows×k) · Wᵀ (W: n×k)
					g, w, c := f.fill(dense.New(rows, k)), f.fill(dense.New(n, k)), dense.New(rows, n)
					run = func() { dense.Gemm(false, true, 1, g, w, 0, c) }
				}
				runtime.GC()
				ms := st.timeStep(run, sz.Reps)
				r.Gemm = append(r.Gemm, perfmodel.GemmRate{Op: opName, K: k, N: n,
					GFLOPS: 2 * float64(rows) * float64(k) * float64(n) / (ms / 1e3) / 1e9})
			}
		}
	}
}

// quantRates times the codec (block parameters) at every quantised width and
// every width.
func quantRates(r *perfmodel.Rates, t int, sz Sizes, st *Stepper, f filler) error {
	rows := sz.Rows
	for _, b := range quant.QuantisedWidths() {
		for _, w := range Widths {
			c, err := quant.NewCodec(quant.Format{Bits: b, Params: quant.ParamsBlock}, t, "")
			if err != nil {
				return err
			}
			x := f.fill(dense.New(rows, w))
			runtime.GC()
			enc, dec, _, err := Codec(c, x.Data, rows, w, sz.Reps, st.Sync)
			if err != nil {
				return err
			}
			gb := float64(rows) * float64(w) * 4 / 1e9
			r.Quant = append(r.Quant, perfmodel.QuantRate{Bits: b, Width: w, EncodeGBs: gb / (enc / 1e3), DecodeGBs: gb / (dec / 1e3)})
		}
	}
	return nil
}

// nnRates times nn's passes over sz.Rows rows: the element-wise
// bandwidth, the input dropout, the fused hidden stage's four variants
// (as training runs it between hidden convolutions: one pass forward, one
// backward) and the loss over rows×classes logits (every row supervised).
func nnRates(r *perfmodel.Rates, sz Sizes, st *Stepper, f filler) error {
	rows, vals := sz.Rows, float64(sz.Rows)*elemWidth
	// Element-wise: bias, ReLU, ReLU backward and a matrix add:
	// 8 + 8 + 12 + 12 bytes a value.
	x, g := f.fill(dense.New(rows, elemWidth)), f.fill(dense.New(rows, elemWidth))
	bias := make([]float32, elemWidth)
	runtime.GC()
	ms := st.timeStep(func() {
		dense.AddBias(x, bias)
		nn.ReLU(x)
		nn.ReLUBackward(g, x)
		dense.Add(g, x)
	}, sz.Reps)
	r.ElemGBs = 40 * vals / (ms / 1e3) / 1e9
	drop := &nn.Dropout{P: 0.5}
	seed := uint64(0)
	runtime.GC()
	ms = st.timeStep(func() { seed++; drop.Forward(x, true, false, seed); drop.Backward(g) }, sz.Reps)
	r.DropoutGVs = vals / (ms / 1e3) / 1e9
	for _, v := range []perfmodel.HiddenRate{{}, {Dropout: true}, {LayerNorm: true}, {LayerNorm: true, Dropout: true}} {
		p := 0.0
		if v.Dropout {
			p = 0.5
		}
		s, err := nn.NewHiddenStage(elemWidth, v.LayerNorm, p, "")
		if err != nil {
			return err
		}
		// the stage overwrites o (without LayerNorm) and gh: the values
		// change from one run to the next, the work does not
		o, gh := f.fill(dense.New(rows, elemWidth)), f.fill(dense.New(rows, elemWidth))
		var serr error
		runtime.GC()
		ms := st.timeStep(func() {
			seed++
			if _, err := s.Forward(o, true, seed); err != nil {
				serr = err
			}
			if _, err := s.Backward(gh); err != nil {
				serr = err
			}
		}, sz.Reps)
		if serr != nil {
			return serr
		}
		v.GVs = vals / (ms / 1e3) / 1e9
		r.Hidden = append(r.Hidden, v)
	}
	logits := f.fill(dense.New(rows, classes))
	labels, all := make([]int32, rows), make([]int32, rows)
	for i := range labels {
		labels[i], all[i] = int32(i%classes), int32(i)
	}
	grad := dense.New(rows, classes)
	var lerr error
	runtime.GC()
	ms = st.timeStep(func() {
		if _, _, err := nn.SoftmaxCrossEntropyInto(grad, logits, labels, all, float64(rows)); err != nil {
			lerr = err
		}
	}, sz.Reps)
	r.SoftmaxGVs = float64(rows) * classes / (ms / 1e3) / 1e9
	return lerr
}

package perfmodel

import (
	"fmt"

	"github.com/supergcn/supergcn/nn"
)

// The roofline of one process's epoch: every step of the model's cost
// schedule (nn.LayerCost, walked in the order Predict walks it, plus the
// Model's own passes) counted as floating-point operations and compulsory
// bytes (each operand read once, each result written once: what no
// kernel can avoid moving between memory and the cores), summed per
// stage of train's metrics. A stage cannot run faster than
// max(flops / the GEMM rate, bytes / the STREAM rate); measured against
// the stage's time, that bound gives the fraction of the machine reached.

// Roofline stages, the parts of train's per-epoch metrics (train.EpochMetrics)
// the steps fall in.
const (
	StageAggr  = "aggregation" // aggr_s: the graph operators (aggregation, attention)
	StageDense = "dense"       // dense_s: products, element-wise passes, loss
	StageOpt   = "optimiser"   // other_s: the Adam step
	StageEval  = "eval"        // eval_s: one evaluation pass
)

// RoofStages are the stages in the order of a report.
var RoofStages = []string{StageAggr, StageDense, StageOpt, StageEval}

// Graph is the size of the graph one process trains on.
type Graph struct {
	Nodes      int64
	Edges      int64 // stored edges (CSR entries), without the self-loops GCN's operator adds
	TrainNodes int64
}

// Machine is the two rates of a roofline.
type Machine struct {
	GemmGFLOPS float64 // fp32 GEMM, 1e9 flop/s
	StreamGBs  float64 // STREAM triad, 1e9 bytes/s
}

// Work is the flops and compulsory bytes of a stage.
type Work struct {
	Flops, Bytes float64
}

func (w *Work) add(o Work) { w.Flops += o.Flops; w.Bytes += o.Bytes }

// Bound is the time the machine needs at least for w: the larger of its
// compute time at the GEMM rate and its memory time at the STREAM rate,
// and which of the two binds ("flops" or "bytes").
func (m Machine) Bound(w Work) (seconds float64, binds string) {
	c, b := w.Flops/(m.GemmGFLOPS*1e9), w.Bytes/(m.StreamGBs*1e9)
	if c >= b {
		return c, "flops"
	}
	return b, "bytes"
}

// Validate reports a rate that is not positive.
func (m Machine) Validate() error {
	if !(m.GemmGFLOPS > 0) || !(m.StreamGBs > 0) {
		return fmt.Errorf("roofline: GEMM rate %g GFLOP/s and STREAM rate %g GB/s, want both positive", m.GemmGFLOPS, m.StreamGBs)
	}
	return nil
}

// Per value or parameter: compulsory bytes (reads + writes of 4-byte
// floats) and flops of the passes the schedule does not list.
const (
	rlElemFlops   = 1  // an element-wise pass: one operation a value
	rlNormFlops   = 8  // LayerNorm: mean, variance, scale and shift
	rlLossFlops   = 6  // softmax cross-entropy: max, exp, sum, log, gradient
	rlAdamFlops   = 12 // Adam: two moments, bias corrections, square root, update
	rlEdgeHeadFwd = 6  // attention forward per edge and head: add, LeakyReLU, max, exp, sum, normalise
	rlEdgeHeadBwd = 8  // attention backward per edge and head: the softmax and LeakyReLU adjoints
	rlDropBytes   = 8  // dropout: read, write (the mask is regenerated from the seed)
	rlHiddenFwd   = 8  // fused hidden stage forward: read the product, write the activation
	rlHiddenBwd   = 12 // and backward: read the gradient and the activation, write the gradient
)

// Roofline is the work of each stage (RoofStages) of one epoch of model m
// on graph g: the training step (forward, loss, backward, optimiser) and
// one evaluation pass, which with evalCache starts from the cached
// aggregate of the features (as train's does without label propagation).
func Roofline(m Model, g Graph, evalCache bool) (map[string]Work, error) {
	costs, err := m.net().LayerCosts()
	if err != nil {
		return nil, err
	}
	if g.Nodes < 1 || g.Edges < 0 || g.TrainNodes < 0 || g.TrainNodes > g.Nodes {
		return nil, fmt.Errorf("roofline: graph of %d nodes, %d edges, %d training nodes", g.Nodes, g.Edges, g.TrainNodes)
	}
	w := roofWalk{m: m, g: g, costs: costs, evalCache: evalCache, work: map[string]Work{}}
	w.forward(true)
	w.backward()
	w.add(StageOpt, Work{rlAdamFlops * float64(m.params()), adamBytes * float64(m.params())})
	w.forward(false)
	return w.work, nil
}

// roofWalk counts the work of a walk over the schedule.
type roofWalk struct {
	m     Model
	g     Graph
	costs []nn.LayerCost
	eval  bool // walking the evaluation pass: every step is StageEval's
	// evalCache: the evaluation pass skips the first layer's aggregation
	// of its input (nn.Model.SetEvalInput)
	evalCache bool
	work      map[string]Work
}

func (w *roofWalk) add(stage string, x Work) {
	if w.eval {
		stage = StageEval
	}
	t := w.work[stage]
	t.add(x)
	w.work[stage] = t
}

// values is rows × width as a float.
func values(rows int64, width int) float64 { return float64(rows) * float64(width) }

// pass adds an element-wise pass over the node rows of width values:
// bytes and flops a value.
func (w *roofWalk) pass(bytes, flops float64, width int) {
	v := values(w.g.Nodes, width)
	w.add(StageDense, Work{flops * v, bytes * v})
}

func (w *roofWalk) forward(training bool) {
	m := w.m
	w.eval = !training
	if training && m.Dropout {
		w.pass(rlDropBytes, rlElemFlops, m.In)
	}
	for i, c := range w.costs {
		for _, s := range c.Forward {
			if s.Input && i == 0 && !training && w.evalCache {
				continue // the cached aggregate of the features
			}
			w.step(s, false)
		}
		if i == m.Layers-1 {
			w.pass(elemBias, rlElemFlops, m.Classes)
			continue
		}
		w.hidden(rlHiddenFwd, training)
	}
	if !training {
		w.pass(elemCount, rlElemFlops, m.Classes)
	}
	w.eval = false
}

// hidden adds one direction of the stage between two layers: bias,
// LayerNorm, ReLU and dropout in one pass (nn.HiddenStage).
func (w *roofWalk) hidden(bytes float64, training bool) {
	f := float64(rlElemFlops * 2)
	if w.m.LayerNorm || w.m.BatchNorm {
		f += rlNormFlops
	}
	if training && w.m.Dropout {
		f += rlElemFlops
	}
	w.pass(bytes, f, w.m.Hidden)
}

func (w *roofWalk) backward() {
	m := w.m
	w.pass(elemLossZero, 0, m.Classes)
	v := values(w.g.TrainNodes, m.Classes)
	w.add(StageDense, Work{rlLossFlops * v, 8 * v})
	for i := m.Layers - 1; i >= 0; i-- {
		for _, s := range w.costs[i].Backward {
			if s.InputGrad && i == 0 {
				continue
			}
			w.step(s, true)
		}
		if i > 0 {
			w.hidden(rlHiddenBwd, true)
		}
	}
}

// step adds one step of a layer's cost schedule.
func (w *roofWalk) step(s nn.CostStep, backward bool) {
	n := w.g.Nodes
	switch s.Kind {
	case nn.StepGemm:
		k, o := float64(s.K), float64(s.N)
		w.add(StageDense, Work{2 * float64(n) * k * o, 4 * (float64(n)*(k+o) + k*o)})
	case nn.StepElem:
		w.pass(s.Bytes, rlElemFlops, s.Width)
	case nn.StepAggregate:
		w.add(StageAggr, aggregateWork(s.Op, w.g, s.Width))
	case nn.StepAttention:
		wk := attentionWork(w.g, s.Heads, s.Width, backward)
		if s.TargetRows {
			wk = gatv2Work(wk, w.g, s.Width, backward)
		}
		w.add(StageAggr, wk)
	}
}

// aggregateWork is one application of operator op to rows of width
// values: a multiply-add per entry and value (GCN's operator has a
// self-loop a node); compulsory, the input and output rows once, the
// column indices and row pointers, and the degrees GCN's and the mean's
// scalings are computed from.
func aggregateWork(op nn.OpKind, g Graph, width int) Work {
	e := g.Edges
	if op == nn.OpGCN {
		e += g.Nodes
	}
	bytes := 8*values(g.Nodes, width) + 4*float64(e) + 8*float64(g.Nodes+1)
	if op != nn.OpSum {
		bytes += 4 * float64(g.Nodes)
	}
	return Work{2 * values(e, width), bytes}
}

// attentionWork is one pass of the attention operator (a self-loop a
// node) over rows of width values in heads heads. Forward: the two score
// products of every row (a dot product a head and side), the score, edge
// softmax and normalisation per edge and head, the weighted aggregation
// (a multiply-add per entry and value); backward the adjoints: twice the
// weighted products (the input gradient and the coefficients' gradient),
// the softmax adjoint per edge and head, the score products' gradients.
// Compulsory bytes: the input rows (and backward the gradient rows) once,
// the output rows once, the per-node scores, the column indices and row
// pointers; the per-edge coefficients are recomputable, not compulsory.
func attentionWork(g Graph, heads, width int, backward bool) Work {
	e := g.Edges + g.Nodes
	rows, ev := values(g.Nodes, width), values(e, width)
	index := 4*float64(e) + 8*float64(g.Nodes+1)
	scores := 2 * 4 * values(g.Nodes, heads)
	if !backward {
		return Work{2*ev + rlEdgeHeadFwd*values(e, heads) + 4*rows + rows, 8*rows + scores + index}
	}
	return Work{4*ev + rlEdgeHeadBwd*values(e, heads) + 8*rows, 16*rows + 2*scores + index}
}

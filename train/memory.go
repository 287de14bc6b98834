package train

import (
	"fmt"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/internal/sysmem"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
)

// Whether the evaluation passes keep the first layer's aggregate of the
// features (Config.EvalCache; "" is EvalCacheAuto). The aggregate is
// computed once, at the first evaluation, with exact float32 rows (under
// MPI one fp32 exchange of the features, whatever the evaluation's wire
// format), and every later evaluation starts from it instead of
// aggregating the features again: the results are those of aggregating
// them each time with that exact exchange. It applies to models whose
// first layer aggregates its input before transforming it
// (EvalCacheApplies) and costs rows × In floats per rank.
const (
	EvalCacheAuto = "auto" // keep it when the memory estimate with it fits the memory this process may use
	EvalCacheOn   = "on"   // keep it; a run whose estimate with it does not fit is refused
	EvalCacheOff  = "off"  // aggregate the features at every evaluation
)

// EvalCaches lists Config.EvalCache's values.
func EvalCaches() []string { return []string{EvalCacheAuto, EvalCacheOn, EvalCacheOff} }

// EvalCacheApplies reports whether a run of model mc keeps an evaluation
// aggregate when Config.EvalCache allows it: its first layer aggregates
// the model input, and that input is the features alone (label
// propagation adds its embedding, which changes every step, to the
// evaluation's input).
func EvalCacheApplies(mc nn.Config, labelProp bool) bool {
	return !labelProp && aggregatesInput(mc)
}

// Buffers are the input-sized buffers a run holds beside the model.
type Buffers struct {
	LabelProp bool // label propagation's embedding and its term in the input
	EvalCache bool // the evaluation passes' aggregate of the features, where EvalCacheApplies
}

// Estimate returns the bytes a rank needs to train model mc (In and Out
// filled, valid) on shard s, beyond the shard itself: parameters with their
// gradient, Adam moments and all-reduce buffer; the model's peak from its
// layers' memory schedules (nn.Config.Memory: activations, their
// gradients, the layers' and the graph operator's temporaries and state
// over the shard's rows, edges and received rows); the input-sized
// buffers b (label propagation's term, the evaluation passes' aggregate of
// the features: EvalCacheBytes), the loss gradient and the operator's copy
// of the graph; and, as hidden, the part that grows with the hidden width.
// It is meant to be close, not an upper bound: a run is refused only when
// the estimate exceeds the memory this process may use.
func Estimate(mc nn.Config, b Buffers, s *partition.Shard) (total, hidden int64) {
	cache := int64(0)
	if b.EvalCache {
		cache = EvalCacheBytes(mc, b.LabelProp, s)
	}
	total = estimate(mc, b.LabelProp, s) + cache
	if mc.Layers > 1 {
		narrow := mc
		narrow.Hidden = max(mc.Heads, 1) // the narrowest hidden width the model takes
		hidden = max(total-cache-estimate(narrow, b.LabelProp, s), 0)
	}
	return total, hidden
}

// EvalCacheBytes is the evaluation aggregate's size on a rank of shard s
// (0 where it does not apply): a float32 row of mc.In per owned node.
func EvalCacheBytes(mc nn.Config, labelProp bool, s *partition.Shard) int64 {
	if !EvalCacheApplies(mc, labelProp) {
		return 0
	}
	return 4 * int64(len(s.Global)) * int64(mc.In)
}

// estimate is Estimate's total without the evaluation aggregate.
func estimate(mc nn.Config, labelProp bool, s *partition.Shard) int64 {
	rows := int64(len(s.Global))
	halo := receivedRows(s)
	edges := rows + int64(len(s.Remote.Src))
	if s.Local != nil {
		edges += int64(len(s.Local.Idx))
	}
	params := mc.NumParams()
	in := int64(0)
	if labelProp {
		params += int64(mc.In) * int64(mc.Out)
		in = nn.TermValues(s.Features, trainRows(s)) // the label embedding's term, as the features' kind adds it
	}
	m := memoryConfig(mc, s).Memory()
	values := 5*params + in + rows*int64(mc.Out) + rows*m.Row + edges*m.Edge + halo*m.Halo
	return 4*values + 8*edges + nn.InputBytes(s.Features) // and the operator's copy of the graph (ids and weights)
}

// receivedRows bounds the rows a rank receives in one exchange under hybrid
// (and pre) aggregation: one per owned node and rank its cut in-edges come
// from.
func receivedRows(s *partition.Shard) int64 {
	r := s.Remote
	seen := make([]int, s.Ranks) // node+1 that last counted the rank
	var n int64
	for v := 0; v+1 < len(r.Ptr); v++ {
		for _, q := range r.Owner[r.Ptr[v]:r.Ptr[v+1]] {
			if int(q) < len(seen) && seen[q] != v+1 {
				seen[q] = v + 1
				n++
			}
		}
	}
	return n
}

// aggregatesInput reports whether the first layer of mc starts by
// aggregating the model input (its cost schedule's first forward step).
func aggregatesInput(mc nn.Config) bool {
	costs, err := mc.LayerCosts()
	return err == nil && len(costs) > 0 && len(costs[0].Forward) > 0 && costs[0].Forward[0].Input
}

// checkMemory refuses a model that cannot fit, naming the field to lower,
// after logging the estimate (rank 0), and decides whether the evaluation
// passes keep their aggregate of the features (t.evalCache), the same on
// every rank: under EvalCacheAuto none keeps it when a rank that fits
// without it does not fit with it. An invalid model is left to NewModel.
func (t *trainer) checkMemory(mc nn.Config) error {
	if mc.Validate() != nil { // NewModel names the field
		return nil
	}
	lp := t.cfg.LabelProp > 0
	cache := EvalCacheBytes(mc, lp, t.shard)
	t.evalCache = EvalCacheApplies(mc, lp) && t.cfg.EvalCache != EvalCacheOff // as on every rank, one without nodes too
	need, hidden := Estimate(mc, Buffers{LabelProp: lp, EvalCache: t.evalCache}, t.shard)
	limit := sysmem.Limit()
	drop := []float64{0}
	if t.evalCache && need > limit && need-cache <= limit && t.cfg.EvalCache != EvalCacheOn {
		drop[0] = 1
	}
	if err := t.c.AllreduceMaxF64(drop); err != nil { // a rank that keeps it skips exchanges the others make
		return err
	}
	dropped := t.evalCache && drop[0] > 0
	if dropped {
		t.evalCache, need = false, need-cache
	}
	if t.c.Rank() == 0 && t.cfg.Log != nil && !t.cfg.Quiet {
		fmt.Fprintf(t.cfg.Log, "memory: training needs ~%s per rank beyond the data (this process may use %s)%s\n", sysmem.GB(need), sysmem.GB(limit), evalCacheNote(t.evalCache, dropped, cache))
	}
	if need <= limit {
		return nil
	}
	msg := fmt.Sprintf("training needs ~%s per rank, more than the %s this process may use", sysmem.GB(need), sysmem.GB(limit))
	if t.evalCache && need-cache <= limit {
		return field.Errorf("train.Config.EvalCache", "%s: %s, of which ~%s the evaluation passes' aggregate of the features; %s needs ~%s", EvalCacheOn, msg, sysmem.GB(cache), EvalCacheOff, sysmem.GB(need-cache))
	}
	if 2*hidden > need { // the hidden width makes it large
		width := fmt.Sprint(mc.Hidden)
		if h := mc.Heads; h > 1 {
			width = fmt.Sprintf("%d per head (%d heads)", mc.Hidden/h, h)
		}
		return field.Errorf("nn.Config.Hidden", "%s: %s", width, msg)
	}
	return fmt.Errorf("%s (%d rows of %d features on this rank)", msg, len(t.shard.Global), t.shard.FeatDim)
}

// evalCacheNote completes the memory line: whether the evaluation
// aggregate (cache bytes; 0 where it does not apply) is kept, and why not
// when auto dropped it.
func evalCacheNote(kept, dropped bool, cache int64) string {
	switch {
	case kept:
		return fmt.Sprintf(", of which ~%s the evaluation passes' aggregate of the features", sysmem.GB(cache))
	case dropped:
		return fmt.Sprintf("; the evaluation passes aggregate the features each time: keeping their aggregate (~%s here, train.Config.EvalCache) would exceed the memory of a rank", sysmem.GB(cache))
	}
	return ""
}

// trainRows counts the shard's training nodes.
func trainRows(s *partition.Shard) int64 {
	var n int64
	for _, b := range s.Split {
		if b&graph.InTrain != 0 {
			n++
		}
	}
	return n
}

package train

import (
	"fmt"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/internal/sysmem"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
)

// Estimate returns the bytes a rank needs to train model mc (In and Out
// filled, valid) on shard s, beyond the shard itself: parameters with their
// gradient, Adam moments and all-reduce buffer; the model's peak from its
// layers' memory schedules (nn.Config.Memory: activations, their
// gradients, the layers' and the graph operator's temporaries and state
// over the shard's rows, edges and received rows); the input-sized
// buffers (label propagation's input, the evaluation passes' aggregate of
// the features), the loss gradient and the operator's copy of the graph;
// and, as hidden, the part that grows with the hidden width. It is meant to
// be close, not an upper bound: a run is refused only when the estimate
// exceeds the memory this process may use.
func Estimate(mc nn.Config, labelProp bool, s *partition.Shard) (total, hidden int64) {
	total = estimate(mc, labelProp, s)
	if mc.Layers > 1 {
		narrow := mc
		narrow.Hidden = max(mc.Heads, 1) // the narrowest hidden width the model takes
		hidden = max(total-estimate(narrow, labelProp, s), 0)
	}
	return total, hidden
}

// estimate is Estimate's total.
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
	} else if aggregatesInput(mc) {
		in = rows * int64(mc.In) // the evaluation passes' aggregate of the features (nn.Model.SetEvalInput)
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
// after logging the estimate (rank 0). An invalid model is left to
// NewModel.
func (t *trainer) checkMemory(mc nn.Config) error {
	if mc.Validate() != nil { // NewModel names the field
		return nil
	}
	need, hidden := Estimate(mc, t.cfg.LabelProp > 0, t.shard)
	limit := sysmem.Limit()
	if t.c.Rank() == 0 && t.cfg.Log != nil && !t.cfg.Quiet {
		fmt.Fprintf(t.cfg.Log, "memory: training needs ~%s per rank beyond the data (this process may use %s)\n", sysmem.GB(need), sysmem.GB(limit))
	}
	if need <= limit {
		return nil
	}
	msg := fmt.Sprintf("training needs ~%s per rank, more than the %s this process may use", sysmem.GB(need), sysmem.GB(limit))
	if 2*hidden > need { // the hidden width makes it large
		width := fmt.Sprint(mc.Hidden)
		if h := mc.Heads; h > 1 {
			width = fmt.Sprintf("%d per head (%d heads)", mc.Hidden/h, h)
		}
		return field.Errorf("nn.Config.Hidden", "%s: %s", width, msg)
	}
	return fmt.Errorf("%s (%d rows of %d features on this rank)", msg, len(t.shard.Global), t.shard.FeatDim)
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

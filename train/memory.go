package train

import (
	"fmt"

	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/internal/sysmem"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
)

// Estimate returns the bytes a rank needs to train model mc (In and Out
// filled) on shard s, beyond the shard itself: parameters with their
// gradient, Adam moments and all-reduce buffer; per layer the activations,
// their gradients, dropout masks and exchange buffers over the shard's
// rows and halo; and, as hidden, the part that grows with the hidden width.
// It is meant to be close, not an upper bound: a run is refused only when
// the estimate exceeds the memory this process may use.
func Estimate(mc nn.Config, labelProp bool, s *partition.Shard) (total, hidden int64) {
	rows := int64(len(s.Global) + len(s.Remote.Src))
	params := mc.NumParams()
	if labelProp {
		params += int64(mc.In) * int64(mc.Out)
	}
	f, h, c := int64(mc.In), int64(mc.Hidden), int64(mc.Out)
	if mc.Layers == 1 {
		h = 0
	}
	// The model's buffer pool (nn.Model) holds only what is live at once
	// (the ledger is in docs/RESULTS.md, "How much memory"): each hidden layer keeps
	// its output (and, with LayerNorm, its activation) for backward, and
	// backward adds the incoming gradient, Âᵀ·G and the exchange's scaled
	// copy as it frees the layers above: the peak is the kept buffers plus
	// max(1, 3 - kept per layer) rows×hidden buffers.
	var hiddenActs int64
	if mc.Layers > 1 {
		per := int64(1)
		if mc.Norm == "layer" {
			per = 2
		}
		kept := per * int64(mc.Layers-1)
		hiddenActs = rows * h * (kept + max(1, 3-per))
	}
	inputs := 2 * rows * f
	first := int64(mc.Hidden) // the first layer's output width
	if mc.Layers == 1 {
		first = c
	}
	if !labelProp && first > f { // the evaluation passes' aggregate of the features (nn.Model.SetEvalInput)
		inputs += rows * f
	}
	total = 4 * (5*params + inputs + hiddenActs + 4*rows*c)
	hidden = 4 * hiddenActs
	if mc.Layers > 1 { // every parameter tensor then has a hidden side
		hidden += 4 * 5 * params
	}
	return total, hidden
}

// checkMemory refuses a model that cannot fit, naming the field to lower,
// after logging the estimate (rank 0). Widths and layers beyond nn's bounds
// are left to nn.Config.Validate.
func (t *trainer) checkMemory(mc nn.Config) error {
	if mc.Layers > nn.MaxLayers || max(mc.In, mc.Hidden, mc.Out) > nn.MaxWidth {
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
		return field.Errorf("nn.Config.Hidden", "%d: %s", mc.Hidden, msg)
	}
	return fmt.Errorf("%s (%d rows of %d features on this rank)", msg, len(t.shard.Global), t.shard.FeatDim)
}

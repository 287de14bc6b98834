package train

import (
	"fmt"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
)

// featureValues are the stored values of s's features (the non-zeros when
// sparse), for their largest magnitude.
func featureValues(s *partition.Shard) []float32 { return s.Features.Values() }

// useInput gives the model the shard's features as its input (nn.Input):
// t.x becomes its matrix. Features the model cannot read as they are
// stored (sparse ones, when its first layer would aggregate them before
// transforming them: nn.TransformsFirst) are stored dense first, with a
// line in the log.
func (t *trainer) useInput() error {
	s := t.shard
	if nn.TransformsFirst(s.Features) && !t.model.TakesSparseInput() {
		if t.c.Rank() == 0 && t.cfg.Log != nil && !t.cfg.Quiet {
			fmt.Fprintf(t.cfg.Log, "features: %d sparse columns stored dense: the model's first layer aggregates them before transforming them (they are narrower than it), or its body reads a dense input\n", s.FeatDim)
		}
		s.Features = s.Features.Dense()
	}
	if t.c.Rank() == 0 && t.cfg.Log != nil && !t.cfg.Quiet && t.cfg.Model.Precision == "bf16" && s.Features.Sparse() {
		fmt.Fprintf(t.cfg.Log, "features: sparse: the first layer's products with them (X·W, Xᵀ·G) run in fp32 (sparse × dense, no bf16 kernel); the other dense products in bf16\n")
	}
	eng, err := aggr.New(t.cfg.Threads, t.cfg.Kernel)
	if err != nil {
		return err
	}
	if t.input, err = nn.NewInput(s.Features, eng); err != nil {
		return err
	}
	t.x = t.input.Matrix()
	return t.model.SetInput(t.input)
}

// lpTrainInput is the training input with label propagation: the features
// with the epoch's embedded labels (the input's dense term), and the
// supervised rows.
func (t *trainer) lpTrainInput(epoch int) (*dense.Matrix, []int32, error) {
	rows, term, sup := t.lp.TrainTerm(epoch)
	if err := t.input.SetTerm(rows, term); err != nil {
		return nil, nil, err
	}
	return t.input.Matrix(), sup, nil
}

// lpEvalInput is the evaluation input with label propagation.
func (t *trainer) lpEvalInput() (*dense.Matrix, error) {
	rows, term := t.lp.EvalTerm()
	if err := t.input.SetTerm(rows, term); err != nil {
		return nil, err
	}
	return t.input.Matrix(), nil
}

// memoryConfig is the model whose memory schedule (nn.Config.Memory) a
// rank of shard s needs: mc, but for features the first layer transforms
// before it aggregates (sparse ones) an input as wide as the first
// layer's output, as the model holds no input-wide buffer then (no dropped
// copy of X, no input gradient but label propagation's, which estimate
// counts).
func memoryConfig(mc nn.Config, s *partition.Shard) nn.Config {
	if nn.TransformsFirst(s.Features) {
		mc.In = max(mc.Hidden, mc.Out)
	}
	return mc
}

package train

import (
	"fmt"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
)

// featureValues are the stored values of s's features (the non-zeros when
// sparse), for their largest magnitude.
func featureValues(s *partition.Shard) []float32 { return s.Features.Values() }

// useSparseInput gives the model the shard's sparse features (nothing for
// dense ones): t.x becomes the SparseInput's matrix. A model whose first
// layer would aggregate its input (narrower than the layer) gets the
// features dense instead, with a line in the log.
func (t *trainer) useSparseInput() error {
	s := t.shard
	if !s.Features.Sparse() {
		return nil
	}
	if !t.model.TakesSparseInput() {
		if t.c.Rank() == 0 && t.cfg.Log != nil && !t.cfg.Quiet {
			fmt.Fprintf(t.cfg.Log, "features: %d sparse columns stored dense: the model's first layer aggregates them before transforming them (they are narrower than it), or its body reads a dense input\n", s.FeatDim)
		}
		s.Features = s.Features.Dense()
		t.x = &dense.Matrix{Rows: len(s.Global), Cols: s.FeatDim, Data: s.Features.Values()}
		return nil
	}
	if t.c.Rank() == 0 && t.cfg.Log != nil && !t.cfg.Quiet && t.cfg.Model.Precision == "bf16" {
		fmt.Fprintf(t.cfg.Log, "features: sparse: the first layer's products with them (X·W, Xᵀ·G) run in fp32 (sparse × dense, no bf16 kernel); the other dense products in bf16\n")
	}
	eng, err := aggr.New(t.cfg.Threads, t.cfg.Kernel)
	if err != nil {
		return err
	}
	if t.sparse, err = nn.NewSparseInput(s.Features.Store().(*graph.SparseStore).X, eng); err != nil {
		return err
	}
	t.x = t.sparse.Matrix()
	return t.model.SetSparseInput(t.sparse)
}

// lpTrainInput is the training input with label propagation: the features
// with the epoch's embedded labels, and the supervised rows.
func (t *trainer) lpTrainInput(epoch int) (*dense.Matrix, []int32, error) {
	if t.sparse == nil {
		x, sup := t.lp.TrainInput(t.x, epoch)
		return x, sup, nil
	}
	rows, term, sup := t.lp.TrainTerm(epoch)
	return t.x, sup, t.sparse.SetDenseRows(rows, term)
}

// lpEvalInput is the evaluation input with label propagation.
func (t *trainer) lpEvalInput() (*dense.Matrix, error) {
	if t.sparse == nil {
		return t.lp.EvalInput(t.x), nil
	}
	rows, term := t.lp.EvalTerm()
	return t.x, t.sparse.SetDenseRows(rows, term)
}

// memoryConfig is the model whose memory schedule (nn.Config.Memory) a
// rank of shard s needs: mc, but for sparse features an input as wide as
// the first layer's output, as the model holds no input-wide buffer then
// (no dropped copy of X, no input gradient but label propagation's, which
// estimate counts).
func memoryConfig(mc nn.Config, s *partition.Shard) nn.Config {
	if s.Features.Sparse() {
		mc.In = max(mc.Hidden, mc.Out)
	}
	return mc
}

// sparseInputBytes is what nn.SparseInput adds to the shard's sparse
// features: the values of the pass, Xᵀ (offsets, ids, values and those
// without dropout) and the entries' positions in Xᵀ.
func sparseInputBytes(s *partition.Shard) int64 {
	if !s.Features.Sparse() {
		return 0
	}
	nnz := s.Features.NNZ()
	return 4*nnz + graph.SparseFeatureBytes(s.FeatDim, nnz) + 4*nnz + 8*nnz
}

package train

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/labelprop"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/task"
)

// Scores are global accuracies of one evaluation pass.
type Scores struct {
	TrainAcc, ValAcc, TestAcc float64
	Train, Valid, Test        int64 // global node counts

	// With EvalOutputs, on rank 0 only: row g is the node of global id g.
	Predictions *dense.Matrix // class scores (logits), N × classes
	Embeddings  *dense.Matrix // last hidden layer, N × hidden
}

// EvalOutputs asks EvaluateWith for per-node outputs, gathered on rank 0.
type EvalOutputs struct {
	Predictions, Embeddings bool
}

// Evaluate scores a saved model on shard s (one evaluation pass, fp32
// exchange). Every rank must call it.
func Evaluate(ck *Checkpoint, s *partition.Shard, c comm.Comm, threads int, kernel string) (*Scores, error) {
	return EvaluateWith(ck, s, c, threads, kernel, EvalOutputs{})
}

// EvaluateWith is Evaluate that also returns the per-node outputs out asks
// for, in global id order on rank 0.
func EvaluateWith(ck *Checkpoint, s *partition.Shard, c comm.Comm, threads int, kernel string, out EvalOutputs) (*Scores, error) {
	if ck.Task != "" && ck.Task != task.Default {
		return nil, fmt.Errorf("the checkpoint was trained for task %s: eval and predict score node classification only", ck.Task)
	}
	if s.FeatDim != ck.Model.In {
		return nil, fmt.Errorf("model expects %d input features, data has %d", ck.Model.In, s.FeatDim)
	}
	if s.NumClasses > ck.Model.Out {
		return nil, fmt.Errorf("model predicts %d classes, data has %d", ck.Model.Out, s.NumClasses)
	}
	saved := map[string][]float32{}
	for _, p := range ck.Params {
		saved[p.Name] = p.W
	}
	model, eng, err := loadModel(ck, saved, s, c, threads, kernel)
	if err != nil {
		return nil, err
	}
	var rows [3][]int32
	for v, b := range s.Split {
		if s.Labels[v] < 0 {
			continue
		}
		for i, bit := range []uint8{graph.InTrain, graph.InValid, graph.InTest} {
			if b&bit != 0 {
				rows[i] = append(rows[i], int32(v))
			}
		}
	}
	x, err := evalInput(ck, saved, s, c, rows[0], model, eng)
	if err != nil {
		return nil, err
	}
	logits, err := model.Forward(nn.Pass{Train: false}, x)
	if err != nil {
		return nil, err
	}
	cnt := make([]int64, 6)
	for i := range rows {
		cnt[i] = nn.CountCorrect(logits, s.Labels, rows[i])
		cnt[3+i] = int64(len(rows[i]))
	}
	if err := c.AllreduceSumI64(cnt); err != nil {
		return nil, err
	}
	sc := &Scores{TrainAcc: ratio(cnt[0], cnt[3]), ValAcc: ratio(cnt[1], cnt[4]), TestAcc: ratio(cnt[2], cnt[5]),
		Train: cnt[3], Valid: cnt[4], Test: cnt[5]}
	if err := gatherOutputs(sc, out, model, logits, s, c); err != nil {
		return nil, err
	}
	return sc, nil
}

// loadModel builds the checkpoint's model on shard s, its weights those
// saved (by parameter name), and returns it with its engine.
func loadModel(ck *Checkpoint, saved map[string][]float32, s *partition.Shard, c comm.Comm, threads int, kernel string) (*nn.Model, *aggr.Engine, error) {
	kind, err := nn.ModelOp(ck.Model.Model)
	if err != nil {
		return nil, nil, err
	}
	eng, err := aggr.New(threads, kernel)
	if err != nil {
		return nil, nil, err
	}
	prop, err := exchange.New(s, c, eng, kind, exchange.Options{Mode: "hybrid"})
	if err != nil {
		return nil, nil, err
	}
	model, err := nn.NewModel(ck.Model, prop)
	if err == nil {
		err = model.SetKernel(kernel)
	}
	if err != nil {
		return nil, nil, err
	}
	for _, p := range model.Params() {
		w, ok := saved[p.Name]
		if !ok || len(w) != len(p.W) {
			return nil, nil, fmt.Errorf("checkpoint lacks parameter %s (or its size differs)", p.Name)
		}
		copy(p.W, w)
	}
	return model, eng, nil
}

// evalInput returns the model's input: the features (sparse ones given to
// model as its sparse input, on engine eng, unless its first layer would
// aggregate them: then dense for the one pass), with the training labels
// embedded by the checkpoint's label propagation when it has one.
func evalInput(ck *Checkpoint, saved map[string][]float32, s *partition.Shard, c comm.Comm, trainRows []int32, model *nn.Model, eng *aggr.Engine) (*dense.Matrix, error) {
	var sparse *nn.SparseInput
	x := &dense.Matrix{Rows: len(s.Global), Cols: s.FeatDim, Data: s.X}
	switch {
	case s.XS != nil && model.TakesSparseInput():
		var err error
		if sparse, err = nn.NewSparseInput(s.XS, eng); err == nil {
			err = model.SetSparseInput(sparse)
		}
		if err != nil {
			return nil, err
		}
		x = sparse.Matrix()
	case s.XS != nil:
		x.Data = graph.DenseFeatures(s.XS)
	}
	if ck.LabelProp <= 0 {
		return x, nil
	}
	lp, err := labelprop.New(ck.LabelProp, ck.Model.Out, s.FeatDim, s.Labels, trainRows, 0, c.Rank())
	if err != nil {
		return nil, err
	}
	w, ok := saved[lp.Param().Name]
	if !ok || len(w) != len(lp.Param().W) {
		return nil, fmt.Errorf("checkpoint trained with label propagation lacks %s", lp.Param().Name)
	}
	copy(lp.Param().W, w)
	if sparse != nil {
		rows, term := lp.EvalTerm()
		return x, sparse.SetDenseRows(rows, term)
	}
	return lp.EvalInput(x), nil
}

// gatherOutputs gathers the rows out asks for (the last hidden layer's,
// the logits) from every rank into sc.
func gatherOutputs(sc *Scores, out EvalOutputs, model *nn.Model, logits *dense.Matrix, s *partition.Shard, c comm.Comm) error {
	var err error
	if out.Embeddings {
		h := model.LastHidden()
		if h == nil {
			return fmt.Errorf("embeddings: the model has one layer, so no hidden layer")
		}
		if sc.Embeddings, err = gatherRows(c, s.Global, h, s.NumGlobalNodes); err != nil {
			return err
		}
	}
	if out.Predictions {
		if sc.Predictions, err = gatherRows(c, s.Global, logits, s.NumGlobalNodes); err != nil {
			return err
		}
	}
	return nil
}

// gatherRows collects every rank's rows of m (row i is global node
// global[i]) on rank 0 as an n × m.Cols matrix in global id order; nil on
// the other ranks.
func gatherRows(c comm.Comm, global []int64, m *dense.Matrix, n int64) (*dense.Matrix, error) {
	cols := m.Cols
	if c.Size() == 1 {
		outm := &dense.Matrix{Rows: int(n), Cols: cols, Data: make([]float32, int(n)*cols)}
		for i, g := range global {
			copy(outm.Data[int(g)*cols:(int(g)+1)*cols], m.Data[i*cols:(i+1)*cols])
		}
		return outm, nil
	}
	rec := 8 + 4*cols // global id, then the row
	send := make([]byte, len(global)*rec)
	for i, g := range global {
		binary.LittleEndian.PutUint64(send[i*rec:], uint64(g))
		for j, v := range m.Data[i*cols : (i+1)*cols] {
			binary.LittleEndian.PutUint32(send[i*rec+8+4*j:], math.Float32bits(v))
		}
	}
	p := c.Size()
	// Row counts to rank 0 first, so it can size its receive buffer.
	counts := make([]int64, p)
	counts[c.Rank()] = int64(len(global))
	if err := c.AllreduceSumI64(counts); err != nil {
		return nil, err
	}
	sc, sd, rc, rd := make([]int, p), make([]int, p), make([]int, p), make([]int, p)
	sc[0] = len(send)
	var recv []byte
	if c.Rank() == 0 {
		off := 0
		for r := range rc {
			rc[r], rd[r] = int(counts[r])*rec, off
			off += rc[r]
		}
		recv = make([]byte, off)
	}
	if err := c.AlltoallvBytes(send, sc, sd, recv, rc, rd); err != nil {
		return nil, err
	}
	if c.Rank() != 0 {
		return nil, nil
	}
	outm := &dense.Matrix{Rows: int(n), Cols: cols, Data: make([]float32, int(n)*cols)}
	for k := 0; k+rec <= len(recv); k += rec {
		g := int(binary.LittleEndian.Uint64(recv[k:]))
		if g < 0 || int64(g) >= n {
			return nil, fmt.Errorf("gathered row of node %d, outside 0..%d", g, n-1)
		}
		row := outm.Data[g*cols : (g+1)*cols]
		for j := range row {
			row[j] = math.Float32frombits(binary.LittleEndian.Uint32(recv[k+8+4*j:]))
		}
	}
	return outm, nil
}

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
	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/labelprop"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/task"
)

// Scores are the global metrics of one evaluation pass.
type Scores struct {
	// TrainAcc, ValAcc, TestAcc hold the task's selecting metric (Metric:
	// "" for node classification, where they are accuracies); Extra the
	// task's other metrics by split ("val_f1", task.Scores.Extra).
	TrainAcc, ValAcc, TestAcc float64
	Metric                    string
	Extra                     map[string]float64
	// Train, Valid, Test count the split's loss terms over all ranks
	// (task.Task.Terms): its labelled nodes, labelled target entries or
	// scored pairs.
	Train, Valid, Test int64

	// With EvalOutputs, on rank 0 only: row g is the node of global id g.
	Predictions *dense.Matrix // the task's predictions (task.Kind.Predictions), N × outputs
	Embeddings  *dense.Matrix // last hidden layer, N × hidden
}

// EvalOutputs asks EvaluateWith for per-node outputs, gathered on rank 0.
type EvalOutputs struct {
	Predictions, Embeddings bool
}

// Evaluate scores a saved node classifier on shard s (one evaluation
// pass, fp32 exchange). Every rank must call it.
func Evaluate(ck *Checkpoint, s *partition.Shard, c comm.Comm, threads int, kernel string) (*Scores, error) {
	return EvaluateWith(ck, s, c, threads, kernel, EvalOutputs{})
}

// EvaluateWith is Evaluate that also returns the per-node outputs out asks
// for, in global id order on rank 0.
func EvaluateWith(ck *Checkpoint, s *partition.Shard, c comm.Comm, threads int, kernel string, out EvalOutputs) (*Scores, error) {
	return EvaluateTask(ck, s, c, threads, kernel, out, nil)
}

// EvaluateTask is EvaluateWith for the checkpoint's task, whose targets
// are y (nil for node classification; a target table, or a link task's
// edge split and seed). Every rank must call it.
func EvaluateTask(ck *Checkpoint, s *partition.Shard, c comm.Comm, threads int, kernel string, out EvalOutputs, y *task.Table) (*Scores, error) {
	kind, err := evalKind(ck, s, out, y)
	if err != nil {
		return nil, err
	}
	saved := map[string][]float32{}
	for _, p := range ck.Params {
		saved[p.Name] = p.W
	}
	model, eng, err := loadModel(ck, saved, s, c, threads, kernel)
	if err != nil {
		return nil, err
	}
	tk, err := kind.Build(s, y, c)
	if err != nil {
		return nil, err
	}
	if pt, ok := tk.(task.Parametric); ok { // the task's own weights (the link task's mlp decoder)
		for _, p := range pt.Params(ck.Model.Out) {
			w, ok := saved[p.Name]
			if !ok || len(w) != len(p.W) {
				return nil, fmt.Errorf("checkpoint lacks task parameter %s (or its size differs)", p.Name)
			}
			copy(p.W, w)
		}
	}
	rows := evalRows(s, tk, kind.Pairs)
	x, err := evalInput(ck, saved, s, c, rows[0], model, eng)
	if err != nil {
		return nil, err
	}
	logits, err := model.Forward(nn.Pass{Train: false}, x)
	if err != nil {
		return nil, err
	}
	ts, err := tk.Evaluate(c, logits, rows)
	if err != nil {
		return nil, err
	}
	cnt := make([]int64, 3)
	for i := range rows {
		cnt[i] = tk.Terms(i, rows[i])
	}
	if err := c.AllreduceSumI64(cnt); err != nil {
		return nil, err
	}
	sc := &Scores{TrainAcc: ts.Main[0], ValAcc: ts.Main[1], TestAcc: ts.Main[2], Extra: ts.Extra,
		Train: cnt[0], Valid: cnt[1], Test: cnt[2]}
	if kind.Name != task.Default {
		sc.Metric = kind.Metric
	}
	if err := gatherOutputs(sc, out, model, logits, s, c); err != nil {
		return nil, err
	}
	if sc.Predictions != nil && kind.Predict != nil {
		kind.Predict(sc.Predictions)
	}
	return sc, nil
}

// evalKind is the task of checkpoint ck, checked against shard s, the
// outputs asked for and the targets y.
func evalKind(ck *Checkpoint, s *partition.Shard, out EvalOutputs, y *task.Table) (task.Kind, error) {
	kind, err := task.Lookup(ck.Task)
	switch {
	case err != nil:
		return kind, field.Wrap("train.Checkpoint.Task", err)
	case out.Predictions && kind.Predictions == "":
		return kind, fmt.Errorf("task %s writes no per-node predictions (its evaluation scores %s)", kind.Name, kind.Targets)
	case s.FeatDim != ck.Model.In:
		return kind, fmt.Errorf("model expects %d input features, data has %d", ck.Model.In, s.FeatDim)
	case kind.Name == task.Default && s.NumClasses > ck.Model.Out:
		return kind, fmt.Errorf("model predicts %d classes, data has %d", ck.Model.Out, s.NumClasses)
	case y != nil && kind.Table && y.Cols != ck.Model.Out:
		return kind, fmt.Errorf("%s: %d targets a node, the model predicts %d", y.Path, y.Cols, ck.Model.Out)
	}
	return kind, nil
}

// evalRows are the supervised train, validation and test rows of task tk
// on shard s (every node in every split for a task scoring pairs, as the
// trainer's splitRows).
func evalRows(s *partition.Shard, tk task.Task, pairs bool) [3][]int32 {
	var rows [3][]int32
	for v, b := range s.Split {
		if !tk.Labelled(v) {
			continue
		}
		if pairs {
			b = graph.InTrain | graph.InValid | graph.InTest
		}
		for i, bit := range []uint8{graph.InTrain, graph.InValid, graph.InTest} {
			if b&bit != 0 {
				rows[i] = append(rows[i], int32(v))
			}
		}
	}
	return rows
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

// evalInput returns the model's input: the features as an nn.Input on
// engine eng (sparse ones dense for the one pass when the model's first
// layer would aggregate them), with the training labels embedded by the
// checkpoint's label propagation when it has one.
func evalInput(ck *Checkpoint, saved map[string][]float32, s *partition.Shard, c comm.Comm, trainRows []int32, model *nn.Model, eng *aggr.Engine) (*dense.Matrix, error) {
	f := s.Features
	if nn.TransformsFirst(f) && !model.TakesSparseInput() {
		f = f.Dense() // for the one pass
	}
	in, err := nn.NewInput(f, eng)
	if err == nil {
		err = model.SetInput(in)
	}
	if err != nil {
		return nil, err
	}
	if ck.LabelProp <= 0 {
		return in.Matrix(), nil
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
	rows, term := lp.EvalTerm()
	if err := in.SetTerm(rows, term); err != nil {
		return nil, err
	}
	return in.Matrix(), nil
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

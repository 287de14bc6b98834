package train

import (
	"fmt"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/labelprop"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
)

// Scores are global accuracies of one evaluation pass.
type Scores struct {
	TrainAcc, ValAcc, TestAcc float64
	Train, Valid, Test        int64 // global node counts
}

// Evaluate scores a saved model on shard s (one evaluation pass, fp32
// exchange). Every rank must call it.
func Evaluate(ck *Checkpoint, s *partition.Shard, c comm.Comm, threads int, kernel string) (*Scores, error) {
	if s.FeatDim != ck.Model.In {
		return nil, fmt.Errorf("model expects %d input features, data has %d", ck.Model.In, s.FeatDim)
	}
	if s.NumClasses > ck.Model.Out {
		return nil, fmt.Errorf("model predicts %d classes, data has %d", ck.Model.Out, s.NumClasses)
	}
	kind, err := nn.ModelOp(ck.Model.Model)
	if err != nil {
		return nil, err
	}
	eng, err := aggr.New(threads, kernel)
	if err != nil {
		return nil, err
	}
	prop, err := exchange.New(s, c, eng, kind, exchange.Options{Mode: "hybrid"})
	if err != nil {
		return nil, err
	}
	model, err := nn.NewModel(ck.Model, prop)
	if err != nil {
		return nil, err
	}
	saved := map[string][]float32{}
	for _, p := range ck.Params {
		saved[p.Name] = p.W
	}
	for _, p := range model.Params() {
		w, ok := saved[p.Name]
		if !ok || len(w) != len(p.W) {
			return nil, fmt.Errorf("checkpoint lacks parameter %s (or its size differs)", p.Name)
		}
		copy(p.W, w)
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
	x := &dense.Matrix{Rows: len(s.Global), Cols: s.FeatDim, Data: s.X}
	if ck.LabelProp > 0 {
		lp, err := labelprop.New(ck.LabelProp, ck.Model.Out, s.FeatDim, s.Labels, rows[0], 0, c.Rank())
		if err != nil {
			return nil, err
		}
		w, ok := saved[lp.Param().Name]
		if !ok || len(w) != len(lp.Param().W) {
			return nil, fmt.Errorf("checkpoint trained with label propagation lacks %s", lp.Param().Name)
		}
		copy(lp.Param().W, w)
		x = lp.EvalInput(x)
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
	return &Scores{ratio(cnt[0], cnt[3]), ratio(cnt[1], cnt[4]), ratio(cnt[2], cnt[5]), cnt[3], cnt[4], cnt[5]}, nil
}

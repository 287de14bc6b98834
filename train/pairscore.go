package train

import (
	"fmt"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/task"
)

// ScorePairs scores pairs (global ids) with a link checkpoint on shard s:
// one evaluation pass of its model (the encoder), then its decoder on each
// pair (task.ScorePairs). Returns the logits in the order of pairs on rank
// 0, nil elsewhere. Every rank must call it.
func ScorePairs(ck *Checkpoint, s *partition.Shard, c comm.Comm, threads int, kernel string, pairs [][2]int32) ([]float32, error) {
	if ck.Task != "link" {
		return nil, fmt.Errorf("the checkpoint was trained for task %s: pairs are scored by a link prediction model (train --task link)", ck.Task)
	}
	if s.FeatDim != ck.Model.In {
		return nil, fmt.Errorf("model expects %d input features, data has %d", ck.Model.In, s.FeatDim)
	}
	saved := map[string][]float32{}
	for _, p := range ck.Params {
		saved[p.Name] = p.W
	}
	model, eng, err := loadModel(ck, saved, s, c, threads, kernel)
	if err != nil {
		return nil, err
	}
	x, err := evalInput(ck, saved, s, c, nil, model, eng)
	if err != nil {
		return nil, err
	}
	h, err := model.Forward(nn.Pass{Train: false}, x)
	if err != nil {
		return nil, err
	}
	return task.ScorePairs(c, s, h, pairs, ck.Decoder, saved)
}

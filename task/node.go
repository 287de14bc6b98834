package task

import (
	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
)

// node is single-label node classification on the shard's class labels.
type node struct {
	labels  []int32
	classes int
}

func newNode(s *partition.Shard, _ *Table, _ comm.Comm) (Task, error) {
	return &node{labels: s.Labels, classes: s.NumClasses}, nil
}

func (n *node) Out() int                        { return n.classes }
func (n *node) Labelled(v int) bool             { return n.labels[v] >= 0 }
func (n *node) Terms(_ int, rows []int32) int64 { return int64(len(rows)) }

func (n *node) Loss(grad, logits *dense.Matrix, rows []int32, denom float64, _ int) (float64, *dense.Matrix, error) {
	return nn.SoftmaxCrossEntropyInto(grad, logits, n.labels, rows, denom)
}

func (n *node) LossSum(logits *dense.Matrix, _ int, rows []int32) (float64, error) {
	return nn.SoftmaxCrossEntropySum(logits, n.labels, rows)
}

// Evaluate: the accuracy of each split.
func (n *node) Evaluate(c comm.Comm, logits *dense.Matrix, rows [3][]int32) (Scores, error) {
	cnt := make([]int64, 6)
	for i := range rows {
		cnt[i] = nn.CountCorrect(logits, n.labels, rows[i])
		cnt[3+i] = int64(len(rows[i]))
	}
	if err := c.AllreduceSumI64(cnt); err != nil {
		return Scores{}, err
	}
	var sc Scores
	for i := range rows {
		sc.Main[i] = ratio(float64(cnt[i]), float64(cnt[3+i]))
	}
	return sc, nil
}

// ratio is a/b, 0 for b = 0 (an empty split).
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

package train

import (
	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/task"
)

// buildTask builds the configured task on the (reordered) shard.
func (t *trainer) buildTask() error {
	if t.kind.Name != task.Default && t.cfg.LabelProp > 0 {
		return field.Errorf("train.Config.LabelProp", "label propagation embeds class labels: task %s has none", t.kind.Name)
	}
	var err error
	if t.task, err = t.kind.Build(t.shard, t.cfg.Targets, t.c); err != nil {
		if t.kind.Pairs { // an edge split's errors name their input
			return err
		}
		return field.Wrap("train.Config.Targets", err)
	}
	return nil
}

// negRatio is the link task's negatives per training edge (0 for other
// tasks), as checkpoints record it.
func (t *trainer) negRatio() int {
	if !t.kind.Pairs || t.cfg.Targets == nil {
		return 0
	}
	return max(t.cfg.Targets.NegRatio, 1)
}

// decoder is the link task's decoder ("" for other tasks and the dot
// product), as checkpoints record it.
func (t *trainer) decoder() string {
	if !t.kind.Pairs || t.cfg.Targets == nil || t.cfg.Targets.Decoder == "dot" {
		return ""
	}
	return t.cfg.Targets.Decoder
}

// linkMetric is the link task's selecting metric ("" for other tasks), as
// checkpoints record it.
func (t *trainer) linkMetric() string {
	if !t.kind.Pairs {
		return ""
	}
	return t.kind.MetricOf(t.task)
}

// rows are this rank's supervised train, validation and test rows.
func (t *trainer) rows() [3][]int32 { return [3][]int32{t.trainRows, t.validRows, t.testRows} }

// setScores fills an evaluated epoch's metrics from the task's scores and
// the validation and test loss sums of all ranks.
func (t *trainer) setScores(m *EpochMetrics, sc task.Scores, losses [2]float64) {
	m.TrainAcc, m.ValAcc, m.TestAcc = sc.Main[0], sc.Main[1], sc.Main[2]
	m.ValLoss, m.TestLoss = fratio(losses[0], t.terms[1]), fratio(losses[1], t.terms[2])
	m.Extra = sc.Extra
	m.Metric = t.metricName()
}

// metricName names what the accuracy fields hold: "" for node
// classification (accuracy), else the task's metric.
func (t *trainer) metricName() string {
	if t.kind.Name == task.Default {
		return ""
	}
	return t.kind.MetricOf(t.task)
}

// beats reports whether evaluated epoch m improves on the record best by
// Config.StopOn's value (any epoch does before the first evaluated one).
func (t *trainer) beats(m EpochMetrics, best FinalMetrics) bool {
	if best.BestEpoch == 0 {
		return true
	}
	if t.cfg.StopOn == StopValLoss {
		return m.ValLoss < best.BestValLoss
	}
	return t.kind.Better(m.ValAcc, best.BestValAcc)
}

// metricLabel prefixes the log's metric values: "" for node
// classification, else the metric's name ("rmse ").
func (t *trainer) metricLabel() string {
	if n := t.metricName(); n != "" {
		return n + " "
	}
	return ""
}

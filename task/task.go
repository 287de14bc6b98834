// Package task is the training objective: what a node's target is, the
// loss and its gradient with respect to the model's outputs (logits), and
// the metrics of an evaluation pass, one of which picks the best epoch.
// The trainer is task-agnostic: it asks a Task for these and nothing else.
//
// Adding a task is its own file and one row of the tasks table.
package task

import (
	"fmt"
	"strings"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/partition"
)

// Task is one rank's view of a training objective over its shard's owned
// nodes (row v of the logits is owned node v).
type Task interface {
	// Out is the number of model outputs per node (classes, tasks); 0:
	// the model's hidden width (link: the node embedding).
	Out() int
	// Labelled reports whether owned node v has a target (a node in a
	// split without one is not supervised, nor scored).
	Labelled(v int) bool
	// Terms is the number of loss terms of the rows of split (0 train,
	// 1 validation, 2 test): the nodes (node classification), their
	// labelled target entries, or the split's scored pairs (link). The
	// trainer sums it over the ranks to get the loss's denominator.
	Terms(split int, rows []int32) int64
	// Loss returns the training loss sum over rows in epoch and in grad
	// (reused when its storage suffices) the gradient of lossSum/denom
	// with respect to logits.
	Loss(grad, logits *dense.Matrix, rows []int32, denom float64, epoch int) (lossSum float64, g *dense.Matrix, err error)
	// LossSum is the loss sum of split's rows without a gradient.
	LossSum(logits *dense.Matrix, split int, rows []int32) (float64, error)
	// Evaluate scores the train, validation and test rows of every rank
	// (collective: every rank calls it; the result is the same on all).
	Evaluate(c comm.Comm, logits *dense.Matrix, rows [3][]int32) (Scores, error)
}

// Scores are the global metrics of one evaluation pass.
type Scores struct {
	// Main is the task's selecting metric (Kind.Metric) of the train,
	// validation and test rows.
	Main [3]float64
	// Extra are the other metrics by name: split prefix and metric,
	// "val_f1", "test_mae" (nil for node classification).
	Extra map[string]float64
}

// Splits are the prefixes of Scores.Extra's names, in Scores.Main's order.
var Splits = [3]string{"train", "val", "test"}

// Kind is one row of the task table.
type Kind struct {
	Name, Doc string
	// Targets says what the task trains on (help texts).
	Targets string
	// Metric names Scores.Main; HigherBetter is its direction (the best
	// epoch has the highest validation value, or the lowest).
	Metric       string
	HigherBetter bool
	// Table: the task reads its targets from a Table (ReadTargets), not
	// from the dataset's class labels. Pairs: from a Table's Edges (an
	// edge split).
	Table, Pairs bool
	// Predictions says what a per-node predictions file holds ("": the
	// task scores pairs and has none); Predict turns the model's outputs,
	// N × Out, into them in place (nil: the outputs as they are).
	Predictions string
	Predict     func(out *dense.Matrix)
	// Check validates a target table (nil: any finite or NaN value).
	Check func(t *Table) error
	// New builds the task on shard s (after any reordering of its nodes)
	// with the targets y (nil unless Table).
	New func(s *partition.Shard, y *Table, c comm.Comm) (Task, error)
}

// tasks is the task table. Read-only.
var tasks = []Kind{
	{Name: "node", Doc: "single-label node classification: softmax cross-entropy, accuracy",
		Targets: "one class per node (the dataset's labels)", Metric: "acc", HigherBetter: true, New: newNode,
		Predictions: "the class scores (logits), N × classes"},
	{Name: "multilabel", Doc: "multi-label node classification: binary cross-entropy with logits per task, ROC-AUC (OGB) and micro-F1",
		Targets: "an N×T table of 0/1 (NaN: entry unlabelled)", Metric: "rocauc", HigherBetter: true, Table: true,
		Check: checkBinary, New: newMultilabel, Predictions: "the probability of every task (the sigmoid of its logit), N × T", Predict: sigmoidInPlace},
	{Name: "regression", Doc: "node regression: mean squared error, MAE, RMSE and R²",
		Targets: "an N or N×T table of finite floats", Metric: "rmse", HigherBetter: false, Table: true,
		Check: checkFinite, New: newRegression, Predictions: "the predicted values, N × T"},
	{Name: "link", Doc: "link prediction: dot product of the endpoints' embeddings, binary cross-entropy against uniform negatives, ROC-AUC, Hits@K and (per-source negatives) MRR",
		Targets: "the training edges of an edge split (held-out edges removed from the graph)", Metric: "rocauc", HigherBetter: true, Pairs: true,
		New: newLink},
}

// Default is the task of a run that names none.
const Default = "node"

// Names lists the task names.
func Names() []string {
	n := make([]string, len(tasks))
	for i, k := range tasks {
		n[i] = k.Name
	}
	return n
}

// Lookup returns the task named name ("" = Default).
func Lookup(name string) (Kind, error) {
	if name == "" {
		name = Default
	}
	for _, k := range tasks {
		if k.Name == name {
			return k, nil
		}
	}
	return Kind{}, field.Errorf("task.Name", "%q is not one of %s", name, strings.Join(Names(), ", "))
}

// MetricOf names t's selecting metric (Scores.Main): k.Metric, unless the
// task was built with another (the link task's Table.LinkMetric). Every
// metric a task may select has k's direction.
func (k Kind) MetricOf(t Task) string {
	if m, ok := t.(interface{ Metric() string }); ok {
		return m.Metric()
	}
	return k.Metric
}

// Better reports whether metric value a beats b in k's direction.
func (k Kind) Better(a, b float64) bool {
	if k.HigherBetter {
		return a > b
	}
	return a < b
}

// Build checks y against the task and builds it on shard s of the ranks
// of c. Collective.
func (k Kind) Build(s *partition.Shard, y *Table, c comm.Comm) (Task, error) {
	if k.Table || k.Pairs {
		if y == nil {
			return nil, fmt.Errorf("task %s trains on %s: give the targets", k.Name, k.Targets)
		}
		if int64(y.Rows) != s.NumGlobalNodes {
			return nil, fmt.Errorf("%s: %d rows of targets, the graph has %d nodes", y.Path, y.Rows, s.NumGlobalNodes)
		}
	} else if y != nil {
		return nil, fmt.Errorf("%s: task %s trains on the dataset's labels, not a target table", y.Path, k.Name)
	}
	return k.New(s, y, c)
}

package task

import (
	"math"
	"slices"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/partition"
)

// multilabel is multi-label node classification: T independent binary
// targets per node, NaN entries unlabelled (masked out of loss and
// metrics).
type multilabel struct {
	y        *dense.Matrix // owned rows' targets, local order
	labelled []bool        // owned node has at least one labelled entry
}

func newMultilabel(s *partition.Shard, y *Table, _ comm.Comm) (Task, error) {
	t := &multilabel{y: owned(s, y), labelled: make([]bool, len(s.Global))}
	for v := range t.labelled {
		t.labelled[v] = slices.ContainsFunc(t.y.Row(v), func(x float32) bool { return x == x })
	}
	return t, nil
}

func (t *multilabel) Out() int            { return t.y.Cols }
func (t *multilabel) Labelled(v int) bool { return t.labelled[v] }
func (t *multilabel) Terms(_ int, rows []int32) int64 {
	return terms(t.y, rows)
}

// terms counts the labelled (non-NaN) entries of y's rows.
func terms(y *dense.Matrix, rows []int32) int64 {
	var n int64
	for _, r := range rows {
		for _, v := range y.Row(int(r)) {
			if v == v {
				n++
			}
		}
	}
	return n
}

// bce is the binary cross-entropy of logit x against target y, computed
// stably: max(x, 0) - x·y + log(1 + exp(-|x|)); its gradient is σ(x) - y.
func bce(x, y float64) (loss, grad float64) {
	loss = math.Max(x, 0) - x*y + math.Log1p(math.Exp(-math.Abs(x)))
	return loss, 1/(1+math.Exp(-x)) - y
}

// Loss is the binary cross-entropy with logits summed over the labelled
// entries of rows; the gradient is (σ(x) - y)/denom there, 0 elsewhere.
func (t *multilabel) Loss(grad, logits *dense.Matrix, rows []int32, denom float64, _ int) (float64, *dense.Matrix, error) {
	return entryLoss(grad, logits, t.y, rows, denom, bce)
}

func (t *multilabel) LossSum(logits *dense.Matrix, _ int, rows []int32) (float64, error) {
	l, _, err := entryLoss(nil, logits, t.y, rows, 0, bce)
	return l, err
}

// Evaluate: ROC-AUC averaged over the tasks with both classes among a
// split's labelled entries (OGB's evaluator, ogbn-proteins), computed
// exactly on rank 0 from every rank's scores; micro-F1 of the predictions
// logit > 0 over the labelled entries.
func (t *multilabel) Evaluate(c comm.Comm, logits *dense.Matrix, rows [3][]int32) (Scores, error) {
	all, err := gatherScored(c, logits, t.y, rows)
	if err != nil {
		return Scores{}, err
	}
	buf := make([]float64, 12) // AUC (rank 0), then TP, FP, FN per split
	for i := range rows {
		if c.Rank() == 0 {
			buf[i] = meanAUC(all[i], t.y.Cols)
		}
		tp, fp, fn := confusion(logits, t.y, rows[i])
		buf[3+3*i], buf[4+3*i], buf[5+3*i] = tp, fp, fn
	}
	if err := c.AllreduceSumF64(buf); err != nil {
		return Scores{}, err
	}
	sc := Scores{Extra: map[string]float64{}}
	for i, name := range Splits {
		tp, fp, fn := buf[3+3*i], buf[4+3*i], buf[5+3*i]
		sc.Main[i] = buf[i]
		sc.Extra[name+"_f1"] = ratio(2*tp, 2*tp+fp+fn)
	}
	return sc, nil
}

// confusion counts the true positives, false positives and false
// negatives of the predictions logit > 0 over the labelled entries of rows.
func confusion(logits, y *dense.Matrix, rows []int32) (tp, fp, fn float64) {
	for _, r := range rows {
		yr := y.Row(int(r))
		for j, x := range logits.Row(int(r)) {
			switch p := x > 0; {
			case yr[j] != yr[j]:
			case p && yr[j] == 1:
				tp++
			case p:
				fp++
			case yr[j] == 1:
				fn++
			}
		}
	}
	return tp, fp, fn
}

// meanAUC is the ROC-AUC of each of the cols tasks of rows (interleaved:
// a row's cols scores, then its cols targets) averaged over the tasks that
// have both classes; 0 when none has.
func meanAUC(rows []float32, cols int) float64 {
	var sum float64
	var n int
	scored := make([]scoredLabel, 0, len(rows)/(2*cols))
	for j := range cols {
		scored = scored[:0]
		for k := 0; k < len(rows); k += 2 * cols {
			if y := rows[k+cols+j]; y == y {
				scored = append(scored, scoredLabel{rows[k+j], y == 1})
			}
		}
		if a, ok := auc(scored); ok {
			sum += a
			n++
		}
	}
	return ratio(sum, float64(n))
}

type scoredLabel struct {
	score float32
	pos   bool
}

// auc is the area under the ROC curve of s (the Mann–Whitney statistic,
// tied scores counting one half, as scikit-learn's roc_auc_score); ok is
// false when s lacks a class. Sorts s.
func auc(s []scoredLabel) (float64, bool) {
	slices.SortFunc(s, func(a, b scoredLabel) int {
		if a.score < b.score {
			return -1
		}
		if a.score > b.score {
			return 1
		}
		return 0
	})
	var negBelow, pos, neg, u float64
	for i := 0; i < len(s); {
		var p, q float64
		j := i
		for ; j < len(s) && s[j].score == s[i].score; j++ {
			if s[j].pos {
				p++
			} else {
				q++
			}
		}
		u += p*negBelow + 0.5*p*q
		negBelow += q
		pos, neg = pos+p, neg+q
		i = j
	}
	if pos == 0 || neg == 0 {
		return 0, false
	}
	return u / (pos * neg), true
}

// sigmoidInPlace turns logits into probabilities, σ(x) = 1/(1+e^-x).
func sigmoidInPlace(m *dense.Matrix) {
	for i, x := range m.Data {
		m.Data[i] = float32(1 / (1 + math.Exp(-float64(x))))
	}
}

package task

import (
	"math"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/partition"
)

// regression is node regression: T float targets per node, the mean
// squared error over the supervised entries.
type regression struct {
	y *dense.Matrix // owned rows' targets, local order
}

func newRegression(s *partition.Shard, y *Table, _ comm.Comm) (Task, error) {
	return &regression{y: owned(s, y)}, nil
}

func (t *regression) Out() int                        { return t.y.Cols }
func (t *regression) Labelled(int) bool               { return true }
func (t *regression) Terms(_ int, rows []int32) int64 { return terms(t.y, rows) }

// se is the squared error of x against y and its gradient 2(x - y).
func se(x, y float64) (float64, float64) {
	d := x - y
	return d * d, 2 * d
}

// Loss is the squared error summed over rows' entries (the mean squared
// error once divided by denom, the entries of all ranks).
func (t *regression) Loss(grad, logits *dense.Matrix, rows []int32, denom float64, _ int) (float64, *dense.Matrix, error) {
	return entryLoss(grad, logits, t.y, rows, denom, se)
}

func (t *regression) LossSum(logits *dense.Matrix, _ int, rows []int32) (float64, error) {
	l, _, err := entryLoss(nil, logits, t.y, rows, 0, se)
	return l, err
}

// Per split and target, the sums Evaluate reduces over the ranks.
const (
	sumN = iota
	sumY
	sumYY
	sumSE
	sumAE
	sums
)

// Evaluate: RMSE and MAE over the split's entries, MSE, and R² per target
// (1 - SSE/SST) averaged over the targets that vary in the split (as
// scikit-learn's r2_score, uniform average).
func (t *regression) Evaluate(c comm.Comm, logits *dense.Matrix, rows [3][]int32) (Scores, error) {
	T := t.y.Cols
	buf := make([]float64, 3*T*sums)
	for i, rs := range rows {
		for _, r := range rs {
			yr, xr := t.y.Row(int(r)), logits.Row(int(r))
			for j, y := range yr {
				b := buf[(i*T+j)*sums:]
				d := float64(xr[j]) - float64(y)
				b[sumN]++
				b[sumY] += float64(y)
				b[sumYY] += float64(y) * float64(y)
				b[sumSE] += d * d
				b[sumAE] += math.Abs(d)
			}
		}
	}
	if err := c.AllreduceSumF64(buf); err != nil {
		return Scores{}, err
	}
	sc := Scores{Extra: map[string]float64{}}
	for i, name := range Splits {
		var n, sse, sae, r2 float64
		var varying int
		for j := range T {
			b := buf[(i*T+j)*sums:]
			n, sse, sae = n+b[sumN], sse+b[sumSE], sae+b[sumAE]
			if sst := b[sumYY] - b[sumY]*b[sumY]/b[sumN]; b[sumN] > 0 && sst > 0 {
				r2 += 1 - b[sumSE]/sst
				varying++
			}
		}
		sc.Main[i] = math.Sqrt(ratio(sse, n))
		sc.Extra[name+"_mse"] = ratio(sse, n)
		sc.Extra[name+"_mae"] = ratio(sae, n)
		sc.Extra[name+"_r2"] = ratio(r2, float64(varying))
	}
	return sc, nil
}

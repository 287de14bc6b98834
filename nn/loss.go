package nn

import (
	"fmt"
	"math"
	"slices"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/par"
	"github.com/supergcn/supergcn/internal/rowk"
)

// SoftmaxCrossEntropy is SoftmaxCrossEntropyInto with a fresh gradient
// matrix. Invalid arguments are programmer errors here (the dataset's labels
// are validated against its class count when it is loaded) and panic; use
// SoftmaxCrossEntropyInto to get them as errors and to reuse the gradient
// buffer across epochs.
func SoftmaxCrossEntropy(logits *dense.Matrix, labels []int32, rows []int32, denom float64) (lossSum float64, grad *dense.Matrix) {
	loss, grad, err := SoftmaxCrossEntropyInto(nil, logits, labels, rows, denom)
	if err != nil {
		panic(err)
	}
	return loss, grad
}

// SoftmaxCrossEntropyInto computes the softmax cross-entropy of logits
// (one row per node, one column per class) against labels (indexed by row)
// over the rows listed in rows:
//
//	lossSum = Σ_{r in rows} (logsumexp(logits[r]) - logits[r][labels[r]])
//
// with a max-shifted log-sum-exp in float64 (math.Exp: the loss the
// gradient checks difference, smooth to float64 rounding; the training rows
// only). Rows whose label is
// negative (unlabelled) are skipped. The returned gradient has the shape of
// logits, is zero outside the listed rows, and is d(lossSum/denom)/d(logits):
// (softmax - onehot)/denom. The caller passes as denom the global number of
// supervised nodes so that per-rank gradients sum to the gradient of the
// global mean loss. A row listed twice contributes twice.
//
// Rows listed in strictly increasing order run on the rank's threads (par), in
// blocks of lossBlockRows whose losses add in block order: the same sum
// whatever the thread count. Other lists run in order on the caller.
//
// grad is reused when its storage suffices (pass nil to allocate). Errors:
// a row or label out of range, denom ≤ 0, labels shorter than logits.
func SoftmaxCrossEntropyInto(grad, logits *dense.Matrix, labels []int32, rows []int32, denom float64) (float64, *dense.Matrix, error) {
	if !(denom > 0) {
		return 0, nil, fmt.Errorf("nn: SoftmaxCrossEntropy: denom %g must be > 0", denom)
	}
	if err := checkRows("SoftmaxCrossEntropy", logits, labels, rows); err != nil {
		return 0, nil, err
	}
	grad = dense.Reshape(grad, logits.Rows, logits.Cols)
	par.For(len(grad.Data), zeroGrain, func(lo, hi int) { clear(grad.Data[lo:hi]) })
	inv := 1 / denom
	// one adds row r's gradient and returns its loss; e: classes scratch
	// values, each exp computed once.
	one := func(r int32, e []float64) float64 {
		y := labels[r]
		if y < 0 {
			return 0
		}
		row, g := logits.Row(int(r)), grad.Row(int(r))
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, float64(v))
		}
		var s float64
		for j, v := range row {
			e[j] = math.Exp(float64(v) - mx)
			s += e[j]
		}
		for j := range g {
			g[j] += float32(e[j] / s * inv)
		}
		g[y] -= float32(inv)
		return mx + math.Log(s) - float64(row[y])
	}
	if !increasing(rows) { // a row listed twice: its gradient adds up in order
		var loss float64
		e := make([]float64, logits.Cols)
		for _, r := range rows {
			loss += one(r, e)
		}
		return loss, grad, nil
	}
	return sumRowBlocks(len(rows), func(lo, hi int) float64 {
		var l float64
		e := make([]float64, logits.Cols)
		for _, r := range rows[lo:hi] {
			l += one(r, e)
		}
		return l
	}), grad, nil
}

// SoftmaxCrossEntropySum is the loss sum of SoftmaxCrossEntropyInto over
// rows without a gradient (evaluation: every row): Σ (logsumexp(logits[r])
// - logits[r][labels[r]]) over the listed rows with a non-negative label,
// the exponentials in float32 by the row kernel rowk.Set.SoftmaxExp (AVX2
// where the CPU has it; within 2 ulp, so the sum is within about 1e-7 per
// row of SoftmaxCrossEntropyInto's), their sums accumulated in float64 in
// blocks of lossBlockRows (the same sum whatever the thread count; rows in
// any order). Errors: a row or label out of range, labels shorter than
// logits.
func SoftmaxCrossEntropySum(logits *dense.Matrix, labels []int32, rows []int32) (float64, error) {
	if err := checkRows("SoftmaxCrossEntropySum", logits, labels, rows); err != nil {
		return 0, err
	}
	k := rowk.Default()
	return sumRowBlocks(len(rows), func(lo, hi int) float64 {
		var l float64
		e := make([]float32, logits.Cols)
		for _, r := range rows[lo:hi] {
			y := labels[r]
			if y < 0 {
				continue
			}
			row := logits.Row(int(r))
			mx, s := k.SoftmaxExp(e, row)
			l += float64(mx) + math.Log(s) - float64(row[y])
		}
		return l
	}), nil
}

// Row blocks of the reductions over a rank's rows (the loss, the correct
// counts, GIN's ε gradient): fixed by the rows, not the threads, so a sum
// adds in the same order whatever the thread count. zeroGrain: values of
// the gradient cleared by one thread at least.
const (
	lossBlockRows = 2048
	zeroGrain     = 1 << 16
)

// sumRowBlocks runs part on the blocks of lossBlockRows of n rows on the
// rank's threads and returns the parts' sum, added in block order.
func sumRowBlocks[T int64 | float64](n int, part func(lo, hi int) T) T {
	blocks := (n + lossBlockRows - 1) / lossBlockRows
	parts := make([]T, blocks)
	par.Blocks(blocks, 0, func(b int) {
		parts[b] = part(b*lossBlockRows, min(n, (b+1)*lossBlockRows))
	})
	var sum T
	for _, p := range parts {
		sum += p
	}
	return sum
}

// increasing reports whether rows are strictly increasing (each row once).
func increasing(rows []int32) bool {
	for i := 1; i < len(rows); i++ {
		if rows[i] <= rows[i-1] {
			return false
		}
	}
	return true
}

// CountCorrect counts the listed rows with a non-negative label whose argmax
// logit (ties go to the lowest class index) equals the label, on the rank's
// threads: the row's max by the row kernel (rowk.Set.RowMax), then the label
// is right when its logit is that max and no earlier class's is (a row
// holding a NaN may count either way). Invalid arguments panic, as in
// SoftmaxCrossEntropy.
func CountCorrect(logits *dense.Matrix, labels []int32, rows []int32) int64 {
	if err := checkRows("CountCorrect", logits, labels, rows); err != nil {
		panic(err)
	}
	k := rowk.Default()
	return sumRowBlocks(len(rows), func(lo, hi int) int64 {
		var n int64
		for _, r := range rows[lo:hi] {
			y := labels[r]
			if y < 0 {
				continue
			}
			row := logits.Row(int(r))
			if m := k.RowMax(row); row[y] == m && !slices.Contains(row[:y], m) {
				n++
			}
		}
		return n
	})
}

// checkRows validates rows and their labels against logits.
func checkRows(fn string, logits *dense.Matrix, labels []int32, rows []int32) error {
	if len(labels) < logits.Rows {
		return fmt.Errorf("nn: %s: %d labels for %d rows", fn, len(labels), logits.Rows)
	}
	for _, r := range rows {
		if r < 0 || int(r) >= logits.Rows {
			return fmt.Errorf("nn: %s: row %d out of range [0, %d)", fn, r, logits.Rows)
		}
		if y := labels[r]; int(y) >= logits.Cols {
			return fmt.Errorf("nn: %s: row %d has label %d, only %d classes", fn, r, y, logits.Cols)
		}
	}
	return nil
}

package nn

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/par"
)

func TestSoftmaxCrossEntropyValue(t *testing.T) {
	logits := &dense.Matrix{Rows: 3, Cols: 3, Data: []float32{
		1, 2, 3,
		0, 0, 0,
		1000, 0, -1000, // stability: no overflow
	}}
	labels := []int32{2, 1, 0}
	loss, grad := SoftmaxCrossEntropy(logits, labels, []int32{0, 1, 2}, 2)
	want := (math.Log(math.Exp(-2)+math.Exp(-1)+1) - 0) + math.Log(3) + 0
	if math.Abs(loss-want) > 1e-9 {
		t.Fatalf("loss %g, want %g", loss, want)
	}
	// Row 1: (1/3 - onehot)/2.
	if g := grad.Row(1); math.Abs(float64(g[1])-(1.0/3-1)/2) > 1e-7 || math.Abs(float64(g[0])-1.0/6) > 1e-7 {
		t.Fatalf("grad row 1 = %v", g)
	}
	if g := grad.Row(2); g[0] != 0 || g[1] != 0 || g[2] != 0 {
		t.Fatalf("grad row 2 = %v, want zeros (confident and right)", g)
	}
}

func TestSoftmaxCrossEntropyRowsAndSkips(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	logits := randMat(r, 6, 4)
	labels := []int32{0, 3, -1, 2, 1, 1}
	rows := []int32{1, 2, 4}
	loss, grad := SoftmaxCrossEntropy(logits, labels, rows, 5)
	for _, i := range []int{0, 2, 3, 5} { // not listed, or unlabelled
		for _, v := range grad.Row(i) {
			if v != 0 {
				t.Fatalf("grad row %d non-zero: %v", i, grad.Row(i))
			}
		}
	}
	only, _ := SoftmaxCrossEntropy(logits, labels, []int32{1, 4}, 5)
	if loss != only {
		t.Fatalf("unlabelled row changed the loss: %g vs %g", loss, only)
	}
	lossFn := func() float64 {
		l, _ := SoftmaxCrossEntropy(logits, labels, rows, 5)
		return l / 5
	}
	checkFD(t, "logits", logits.Data, grad.Data, lossFn, 1e-2, 1e-3)

	// Buffer reuse: the same storage comes back, fully overwritten.
	_, g2, err := SoftmaxCrossEntropyInto(grad, logits, labels, []int32{0}, 1)
	if err != nil || &g2.Data[0] != &grad.Data[0] {
		t.Fatalf("Into did not reuse the buffer (err %v)", err)
	}
	if g2.Row(1)[0] != 0 {
		t.Fatal("reused buffer kept stale gradient rows")
	}
}

func TestSoftmaxCrossEntropyErrors(t *testing.T) {
	logits := dense.New(2, 3)
	cases := []struct {
		name   string
		labels []int32
		rows   []int32
		denom  float64
	}{
		{"label too large", []int32{0, 3}, []int32{1}, 1},
		{"row out of range", []int32{0, 1}, []int32{2}, 1},
		{"negative row", []int32{0, 1}, []int32{-1}, 1},
		{"zero denom", []int32{0, 1}, []int32{0}, 0},
		{"short labels", []int32{0}, []int32{0}, 1},
	}
	for _, c := range cases {
		if _, _, err := SoftmaxCrossEntropyInto(nil, logits, c.labels, c.rows, c.denom); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

func TestCountCorrect(t *testing.T) {
	logits := &dense.Matrix{Rows: 4, Cols: 3, Data: []float32{
		1, 5, 2, // argmax 1
		3, 3, 1, // tie → 0
		0, 0, 9, // argmax 2
		7, 0, 0, // unlabelled
	}}
	labels := []int32{1, 1, 2, -1}
	if got := CountCorrect(logits, labels, []int32{0, 1, 2, 3}); got != 2 {
		t.Fatalf("CountCorrect = %d, want 2 (tie resolved to the lowest index)", got)
	}
	if got := CountCorrect(logits, labels, []int32{1}); got != 0 {
		t.Fatalf("CountCorrect on the tie row = %d, want 0", got)
	}
}

// TestLossThreads: the loss, its gradient and the correct counts of rows
// spanning several blocks are the same, bit for bit, at 1, 3 and 8
// threads, and equal a serial reference (the loss within float64
// rounding: it adds in blocks); a list with a repeated row (run in order)
// counts that row twice. SoftmaxCrossEntropySum is the same loss sum
// within 1e-7 per row (its float32 exponentials).
func TestLossThreads(t *testing.T) {
	defer par.SetThreads(par.Threads())
	r := rand.New(rand.NewPCG(3, 4))
	n, classes := 3*lossBlockRows+17, 47
	logits := randMat(r, n, classes)
	labels := make([]int32, n)
	var rows []int32
	for i := range labels {
		labels[i] = int32(r.IntN(classes+1)) - 1 // some unlabelled
		if i%3 != 1 {
			rows = append(rows, int32(i))
		}
	}
	var want float64
	var correct int64
	for _, i := range rows {
		if y := labels[i]; y >= 0 {
			l, _ := SoftmaxCrossEntropy(&dense.Matrix{Rows: 1, Cols: classes, Data: logits.Row(int(i))}, labels[i:i+1], []int32{0}, 1)
			want += l
			row := logits.Row(int(i))
			if slices.Index(row, slices.Max(row)) == int(y) {
				correct++
			}
		}
	}
	var first *dense.Matrix
	var firstLoss, firstSum float64
	for _, threads := range []int{1, 3, 8} {
		par.SetThreads(threads)
		loss, grad := SoftmaxCrossEntropy(logits, labels, rows, 7)
		if math.Abs(loss-want) > 1e-9*math.Abs(want) {
			t.Errorf("%d threads: loss %v, serial %v", threads, loss, want)
		}
		if c := CountCorrect(logits, labels, rows); c != correct {
			t.Errorf("%d threads: %d correct, want %d", threads, c, correct)
		}
		// the float32 exponentials: within 1e-7 per row, the same sum
		// whatever the thread count
		s, err := SoftmaxCrossEntropySum(logits, labels, rows)
		if err != nil || math.Abs(s-loss) > 1e-7*float64(len(rows)) || firstSum != 0 && s != firstSum {
			t.Errorf("%d threads: SoftmaxCrossEntropySum %v (%v), the loss with gradient %v", threads, s, err, loss)
		}
		firstSum = s
		if first == nil {
			first, firstLoss = grad, loss
		} else if loss != firstLoss || !slices.Equal(grad.Data, first.Data) {
			t.Errorf("%d threads: loss %v or gradient differs from 1 thread's (%v)", threads, loss, firstLoss)
		}
	}
	if _, err := SoftmaxCrossEntropySum(logits, labels, []int32{int32(n)}); err == nil {
		t.Error("SoftmaxCrossEntropySum: a row out of range is no error")
	}
	i := rows[0]
	for labels[i] < 0 {
		i++
	}
	once, g1 := SoftmaxCrossEntropy(logits, labels, []int32{i}, 1)
	twice, g2 := SoftmaxCrossEntropy(logits, labels, []int32{i, i}, 1)
	if twice != 2*once || g2.Row(int(i))[0] != 2*g1.Row(int(i))[0] {
		t.Errorf("row listed twice: loss %v (once %v), gradient %v (once %v)", twice, once, g2.Row(int(i))[0], g1.Row(int(i))[0])
	}
}

// TestDot64Threads: GIN's ε gradient Σ x⊙y is the same at 1 and 5
// threads and equals the index-order sum within float64 rounding.
func TestDot64Threads(t *testing.T) {
	defer par.SetThreads(par.Threads())
	r := rand.New(rand.NewPCG(5, 6))
	x, y := randMat(r, 20000, 33), randMat(r, 20000, 33)
	var want float64
	for i, v := range x.Data {
		want += float64(v) * float64(y.Data[i])
	}
	par.SetThreads(1)
	one := dot64(x, y)
	par.SetThreads(5)
	if five := dot64(x, y); five != one || math.Abs(one-want) > 1e-9*math.Abs(want)+1e-9 {
		t.Errorf("dot64: %v at 1 thread, %v at 5, index order %v", one, five, want)
	}
	if d := dot64(&dense.Matrix{Cols: 4}, &dense.Matrix{Cols: 4}); d != 0 {
		t.Errorf("no rows: %v", d)
	}
}

package nn

import (
	"math/rand/v2"
	"testing"

	"github.com/supergcn/supergcn/dense"
)

// twoCommunities builds a 40-node graph of two dense communities with a few
// cross edges; labels are the community, features are weak noisy hints.
func twoCommunities(r *rand.Rand) (*dense.Matrix, *dense.Matrix, []int32) {
	const n, half = 40, 20
	var edges [][2]int
	for u := range n {
		for v := u + 1; v < n; v++ {
			same := (u < half) == (v < half)
			if same && r.Float64() < 0.3 || !same && r.Float64() < 0.02 {
				edges = append(edges, [2]int{u, v})
			}
		}
	}
	labels := make([]int32, n)
	x := dense.New(n, 8)
	for v := range n {
		if v >= half {
			labels[v] = 1
		}
		for j := range 8 {
			x.Data[v*8+j] = float32(r.NormFloat64())
		}
		x.Data[v*8+int(labels[v])] += 0.7 // hint, too weak alone for every node
	}
	return gcnAdj(n, edges), x, labels
}

func TestGCNTrainsOnTwoCommunities(t *testing.T) {
	r := rand.New(rand.NewPCG(40, 40))
	a, x, labels := twoCommunities(r)
	prop := &denseProp{a: a}
	m, err := NewModel(Config{Model: "gcn", Layers: 2, In: 8, Hidden: 16, Out: 2, Dropout: 0.5, Seed: 7}, prop)
	if err != nil {
		t.Fatal(err)
	}
	opt, err := NewAdam(m.Params(), DefaultAdam())
	if err != nil {
		t.Fatal(err)
	}
	var train, test []int32
	for v := range int32(40) {
		if v%4 == 0 {
			train = append(train, v)
		} else {
			test = append(test, v)
		}
	}
	var grad *dense.Matrix
	var first, last float64
	for epoch := range 200 {
		p := Pass{Train: true, Epoch: epoch}
		logits, err := m.Forward(p, x)
		if err != nil {
			t.Fatal(err)
		}
		var loss float64
		loss, grad, err = SoftmaxCrossEntropyInto(grad, logits, labels, train, float64(len(train)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Backward(p, grad, false); err != nil {
			t.Fatal(err)
		}
		opt.Step()
		if epoch == 0 {
			first = loss / float64(len(train))
		}
		last = loss / float64(len(train))
	}
	logits, err := m.Forward(Pass{}, x)
	if err != nil {
		t.Fatal(err)
	}
	evalLoss, _ := SoftmaxCrossEntropy(logits, labels, train, float64(len(train)))
	evalLoss /= float64(len(train))
	if !(evalLoss < 0.2*first) {
		t.Fatalf("training loss %.4f → %.4f (last dropout epoch %.4f): did not decrease enough", first, evalLoss, last)
	}
	if c := CountCorrect(logits, labels, train); c != int64(len(train)) {
		t.Fatalf("fits %d of %d training nodes", c, len(train))
	}
	if c := CountCorrect(logits, labels, test); float64(c) < 0.9*float64(len(test)) {
		t.Fatalf("test accuracy %d/%d", c, len(test))
	}
	t.Logf("loss %.4f → %.4f, test %d/%d", first, evalLoss, CountCorrect(logits, labels, test), len(test))
}

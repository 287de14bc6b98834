package task

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/partition"
)

// link is link prediction: the model's outputs are node embeddings, a
// pair (u, v) scores their dot product, and the loss is the binary
// cross-entropy of the training edges against NegRatio uniformly drawn
// negatives (u, w) per positive, drawn afresh every epoch.
type link struct {
	local    map[int64]int32 // global id → local row
	pairs    [3][][2]int32   // positive pairs per split, local rows
	negs     [3][][2]int32   // fixed negatives of each split (one per positive), local rows
	n        int             // nodes
	negRatio int
	seed     uint64
}

// LinkNegRatio is the number of negatives drawn per training edge.
const LinkNegRatio = 1

func newLink(s *partition.Shard, y *Table) (Task, error) {
	if s.Ranks > 1 {
		return nil, fmt.Errorf("task link: runs in one process; the exchange of pair endpoints between ranks is not implemented")
	}
	if y.Edges == nil {
		return nil, fmt.Errorf("task link: needs an edge split")
	}
	t := &link{local: make(map[int64]int32, len(s.Global)), n: len(s.Global), negRatio: LinkNegRatio, seed: y.Seed}
	for i, g := range s.Global {
		t.local[g] = int32(i)
	}
	for i, ps := range [][][2]int32{y.Edges.Train, y.Edges.Valid, y.Edges.Test} {
		t.pairs[i] = make([][2]int32, len(ps))
		for k, p := range ps {
			t.pairs[i][k] = [2]int32{t.local[int64(p[0])], t.local[int64(p[1])]}
		}
		t.negs[i] = t.negatives(t.pairs[i], 1, uint64(1000+i))
	}
	return t, nil
}

// negatives draws ratio negatives (u, w) per positive (u, v), w uniform
// over the nodes, from a generator seeded by the task seed and stream:
// the same pairs whatever the rank count.
func (t *link) negatives(pos [][2]int32, ratio int, stream uint64) [][2]int32 {
	rng := rand.New(rand.NewPCG(t.seed, stream))
	out := make([][2]int32, 0, len(pos)*ratio)
	for _, p := range pos {
		for range ratio {
			out = append(out, [2]int32{p[0], int32(rng.IntN(t.n))})
		}
	}
	return out
}

func (t *link) Out() int          { return 0 }
func (t *link) Labelled(int) bool { return true }
func (t *link) Terms(split int, _ []int32) int64 {
	if split == 0 {
		return int64(len(t.pairs[0]) * (1 + t.negRatio))
	}
	return int64(len(t.pairs[split]) + len(t.negs[split]))
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// pairLoss adds the BCE of pairs with target y and, with grad, its
// gradient/denom to both endpoints' rows.
func pairLoss(grad, h *dense.Matrix, pairs [][2]int32, y, denom float64) float64 {
	var l float64
	for _, p := range pairs {
		hu, hv := h.Row(int(p[0])), h.Row(int(p[1]))
		v, g := bce(dot(hu, hv), y)
		l += v
		if grad != nil {
			gu, gv := grad.Row(int(p[0])), grad.Row(int(p[1]))
			for j := range hu {
				gu[j] += float32(g / denom * float64(hv[j]))
				gv[j] += float32(g / denom * float64(hu[j]))
			}
		}
	}
	return l
}

// Loss: the training edges (target 1) and the epoch's negatives (0).
func (t *link) Loss(grad, h *dense.Matrix, _ []int32, denom float64, epoch int) (float64, *dense.Matrix, error) {
	grad = dense.Reshape(grad, h.Rows, h.Cols)
	clear(grad.Data)
	neg := t.negatives(t.pairs[0], t.negRatio, uint64(epoch))
	return pairLoss(grad, h, t.pairs[0], 1, denom) + pairLoss(grad, h, neg, 0, denom), grad, nil
}

func (t *link) LossSum(h *dense.Matrix, split int, _ []int32) (float64, error) {
	return pairLoss(nil, h, t.pairs[split], 1, 1) + pairLoss(nil, h, t.negs[split], 0, 1), nil
}

// Evaluate: per split, the ROC-AUC of its positive pairs against its
// fixed negatives, and Hits@K (OGB's: the fraction of positives scoring
// above the K-th highest negative) for K = 20, 50, 100.
func (t *link) Evaluate(_ comm.Comm, h *dense.Matrix, _ [3][]int32) (Scores, error) {
	sc := Scores{Extra: map[string]float64{}}
	for i, name := range Splits {
		var s []scoredLabel
		var negScores []float64
		for _, p := range t.negs[i] {
			x := dot(h.Row(int(p[0])), h.Row(int(p[1])))
			s = append(s, scoredLabel{float32(x), false})
			negScores = append(negScores, float64(float32(x)))
		}
		for _, p := range t.pairs[i] {
			s = append(s, scoredLabel{float32(dot(h.Row(int(p[0])), h.Row(int(p[1])))), true})
		}
		sc.Main[i], _ = auc(s)
		slices.Sort(negScores)
		for _, k := range []int{20, 50, 100} {
			kth := math.Inf(-1)
			if len(negScores) >= k {
				kth = negScores[len(negScores)-k]
			}
			var hit int
			for _, x := range s {
				if x.pos && float64(x.score) > kth {
					hit++
				}
			}
			sc.Extra[fmt.Sprintf("%s_hits%d", name, k)] = ratio(float64(hit), float64(len(t.pairs[i])))
		}
	}
	return sc, nil
}

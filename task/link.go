package task

import (
	"fmt"
	"math"
	"slices"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/partition"
)

// link is link prediction: the model's outputs are node embeddings, a
// pair (u, v) scores their dot product, and the loss is the binary
// cross-entropy of the training edges against Table.NegRatio uniformly
// drawn negatives (u, w) per edge, drawn afresh every epoch. A pair is
// scored by the rank that owns u; v's row comes from its owner, and its
// gradient goes back there (pairPlan), through the exchange's codecs once
// the trainer hands it over (UseRows).
type link struct {
	c      comm.Comm
	owner  []int32         // every node's rank
	local  map[int64]int32 // this rank's global id → local row
	nLocal int
	n      int          // nodes of the graph
	train  [][2]int32   // the training edges, global ids (every rank)
	eval   [3]*pairPlan // each split's edges and fixed negatives (one per edge)
	seed   uint64
	ratio  int
	rows   *pairRows // how the plans move rows (shared by all of them)
}

func newLink(s *partition.Shard, y *Table, c comm.Comm) (Task, error) {
	if y.Edges == nil {
		return nil, fmt.Errorf("task link: needs an edge split")
	}
	t := &link{c: c, local: make(map[int64]int32, len(s.Global)), nLocal: len(s.Global), n: int(s.NumGlobalNodes),
		train: y.Edges.Train, seed: y.Seed, ratio: max(y.NegRatio, 1), rows: &pairRows{mv: f32Rows{c}, seed: y.Seed}}
	own := make([]int64, s.NumGlobalNodes)
	for i, g := range s.Global {
		t.local[g] = int32(i)
		own[g] = int64(c.Rank())
	}
	if err := c.AllreduceSumI64(own); err != nil {
		return nil, err
	}
	t.owner = make([]int32, len(own))
	for g, r := range own {
		t.owner[g] = int32(r)
	}
	for i, ps := range [][][2]int32{y.Edges.Train, y.Edges.Valid, y.Edges.Test} {
		pairs, ys := t.withNegatives(ps, 1, uint64(1000+i))
		var err error
		if t.eval[i], err = newPairPlan(c, t.rows, false, i, pairs, ys, t.owner, t.local, t.nLocal); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// withNegatives is pairsWithNegatives of the task's nodes and seed.
func (t *link) withNegatives(pos [][2]int32, ratio int, stream uint64) ([][2]int32, []float64) {
	return pairsWithNegatives(pos, ratio, t.n, t.seed, stream)
}

// UseRows implements Exchanging: the pair rows go through m from now on.
func (t *link) UseRows(m RowMover) { t.rows.mv = m }

func (t *link) Out() int          { return 0 }
func (t *link) Labelled(int) bool { return true }

// Terms: this rank's scored pairs of the split (those whose first
// endpoint it owns); the training negatives follow their edge's rank.
func (t *link) Terms(split int, _ []int32) int64 {
	if split == 0 {
		return int64(len(t.eval[0].pairs) / 2 * (1 + t.ratio))
	}
	return int64(len(t.eval[split].pairs))
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// Loss: the training edges (target 1) and the epoch's negatives (0).
// Collective.
func (t *link) Loss(grad, h *dense.Matrix, _ []int32, denom float64, epoch int) (float64, *dense.Matrix, error) {
	pairs, y := t.withNegatives(t.train, t.ratio, uint64(epoch))
	t.rows.epoch = epoch
	pl, err := newPairPlan(t.c, t.rows, true, 0, pairs, y, t.owner, t.local, t.nLocal)
	if err != nil {
		return 0, nil, err
	}
	ext, err := pl.fetch(h)
	if err != nil {
		return 0, nil, err
	}
	gext := &dense.Matrix{Rows: ext.Rows, Cols: ext.Cols, Data: make([]float32, len(ext.Data))}
	loss := pl.loss(ext, gext, denom)
	grad = dense.Reshape(grad, h.Rows, h.Cols)
	copy(grad.Data, gext.Data[:h.Rows*h.Cols])
	return loss, grad, pl.returnGrads(gext, grad)
}

// LossSum: the split's edges and fixed negatives. Collective.
func (t *link) LossSum(h *dense.Matrix, split int, _ []int32) (float64, error) {
	ext, err := t.eval[split].fetch(h)
	if err != nil {
		return 0, err
	}
	return t.eval[split].loss(ext, nil, 1), nil
}

// Evaluate: per split, the ROC-AUC of its edges against its fixed
// negatives, and Hits@K (OGB's: the fraction of edges scoring above the
// K-th highest negative) for K = 20, 50, 100; computed on rank 0 from
// every rank's scores. Collective.
func (t *link) Evaluate(c comm.Comm, h *dense.Matrix, _ [3][]int32) (Scores, error) {
	sc := Scores{Extra: map[string]float64{}}
	ks := []int{20, 50, 100}
	buf := make([]float64, 3*(1+len(ks)))
	for i := range Splits {
		s, err := t.gatherScores(c, h, t.eval[i])
		if err != nil {
			return sc, err
		}
		if c.Rank() == 0 {
			buf[i*(1+len(ks))], _ = auc(s)
			for j, k := range ks {
				buf[i*(1+len(ks))+1+j] = hitsAt(s, k)
			}
		}
	}
	if err := c.AllreduceSumF64(buf); err != nil {
		return sc, err
	}
	for i, name := range Splits {
		sc.Main[i] = buf[i*(1+len(ks))]
		for j, k := range ks {
			sc.Extra[fmt.Sprintf("%s_hits%d", name, k)] = buf[i*(1+len(ks))+1+j]
		}
	}
	return sc, nil
}

// gatherScores scores the plan's pairs and collects every rank's scores
// on rank 0 (nil elsewhere).
func (t *link) gatherScores(c comm.Comm, h *dense.Matrix, pl *pairPlan) ([]scoredLabel, error) {
	ext, err := pl.fetch(h)
	if err != nil {
		return nil, err
	}
	send := make([]float32, 0, 2*len(pl.pairs))
	for k, p := range pl.pairs {
		send = append(send, float32(dot(ext.Row(int(p[0])), ext.Row(int(p[1])))), float32(pl.y[k]))
	}
	p := c.Size()
	counts := make([]int64, p)
	counts[c.Rank()] = int64(len(pl.pairs))
	if err := c.AllreduceSumI64(counts); err != nil {
		return nil, err
	}
	sendCounts, recvCounts := make([]int, p), make([]int, p)
	sendCounts[0] = len(pl.pairs)
	if c.Rank() == 0 {
		for r := range p {
			recvCounts[r] = int(counts[r])
		}
	}
	total := 0
	for _, n := range recvCounts {
		total += n
	}
	recv := make([]float32, 2*total)
	if err := pl.alltoall(send, sendCounts, recv, recvCounts, 2); err != nil || c.Rank() != 0 {
		return nil, err
	}
	s := make([]scoredLabel, total)
	for i := range s {
		s[i] = scoredLabel{recv[2*i], recv[2*i+1] == 1}
	}
	return s, nil
}

// hitsAt is OGB's Hits@K: the fraction of positives scoring above the
// K-th highest negative (all positives when there are fewer than K).
func hitsAt(s []scoredLabel, k int) float64 {
	var neg []float32
	var pos int
	for _, x := range s {
		if x.pos {
			pos++
		} else {
			neg = append(neg, x.score)
		}
	}
	kth := float32(math.Inf(-1))
	if len(neg) >= k {
		slices.Sort(neg)
		kth = neg[len(neg)-k]
	}
	var hit int
	for _, x := range s {
		if x.pos && x.score > kth {
			hit++
		}
	}
	return ratio(float64(hit), float64(pos))
}

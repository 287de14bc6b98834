package task

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
)

// link is link prediction: the model's outputs are node embeddings, a
// pair (u, v) is scored by the decoder (their dot product, or the mlp of
// decoder.go), and the loss is the binary
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
	n      int        // nodes of the graph
	train  [][2]int32 // the training edges, global ids (every rank)
	// eval are each split's scored pairs. group > 0: the pairs come in
	// groups of group, a positive (u, v) then its negatives (u, w) (drawn
	// ones, or the split files' per-source negatives); 0: the positives
	// then the negatives they share (the split files' edge_neg).
	eval   [3]*pairPlan
	group  [3]int
	seed   uint64
	ratio  int
	metric string // Scores.Main: linkMetric's names
	// perSource: the split files give per-source negatives (MRR and
	// Hits@K by rank among a positive's own negatives); otherwise Hits@K
	// ranks the positives against all negatives of the split.
	perSource bool
	decoder   string    // Decoders
	dec       *mlp      // the mlp decoder (nil: dot), made by Params
	rows      *pairRows // how the plans move rows (shared by all of them)
}

// LinkMetrics lists what Table.LinkMetric may name: "auto" (mrr with
// per-source negatives, else rocauc), "rocauc", "mrr", or "hitsK" for a K
// ≥ 1.
const LinkMetrics = "auto|rocauc|mrr|hitsK (K ≥ 1)"

// linkMetric resolves metric name m ("" = auto) for a split with or
// without per-source negatives.
func linkMetric(m string, perSource bool) (string, error) {
	switch {
	case m == "" || m == "auto":
		if perSource {
			return "mrr", nil
		}
		return "rocauc", nil
	case m == "rocauc":
		return m, nil
	case m == "mrr":
		if !perSource {
			return "", fmt.Errorf("mrr ranks each positive among its own negatives: the validation and test files need target_node_neg (OGB citation2's per-source negatives)")
		}
		return m, nil
	}
	if k := hitsK(m); k >= 1 {
		return m, nil
	}
	return "", fmt.Errorf("%q is not one of %s", m, LinkMetrics)
}

// hitsK is the K of metric "hitsK" (0 for other metrics).
func hitsK(m string) int {
	k, err := strconv.Atoi(strings.TrimPrefix(m, "hits"))
	if err != nil || m != "hits"+strconv.Itoa(k) {
		return 0
	}
	return k
}

func newLink(s *partition.Shard, y *Table, c comm.Comm) (Task, error) {
	es := y.Edges
	if es == nil {
		return nil, fmt.Errorf("task link: needs an edge split")
	}
	t := &link{c: c, local: make(map[int64]int32, len(s.Global)), nLocal: len(s.Global), n: int(s.NumGlobalNodes),
		train: es.Train, seed: y.Seed, ratio: max(y.NegRatio, 1), decoder: y.Decoder,
		rows: &pairRows{mv: f32Rows{c}, seed: y.Seed}}
	if err := CheckDecoder(y.Decoder); err != nil {
		return nil, field.Wrap("task.Table.Decoder", err)
	}
	if (es.TargetNeg[0] != nil) != (es.TargetNeg[1] != nil) {
		return nil, fmt.Errorf("%s: per-source negatives (target_node_neg) in one of the validation and test parts only: give them for both or neither", y.Path)
	}
	t.perSource = es.TargetNeg[0] != nil
	var err error
	if t.metric, err = linkMetric(y.LinkMetric, t.perSource); err != nil {
		return nil, field.Wrap("task.Table.LinkMetric", err)
	}
	if err := t.own(s); err != nil {
		return nil, err
	}
	for i, ps := range [][][2]int32{es.Train, es.Valid, es.Test} {
		pairs, ys, group := t.evalPairs(es, i, ps)
		t.group[i] = group
		if t.eval[i], err = newPairPlan(c, t.rows, false, i, pairs, ys, t.owner, t.local, t.nLocal); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// own fills t's node → rank table and this rank's global id → local row
// map for shard s. Collective.
func (t *link) own(s *partition.Shard) error {
	own := make([]int64, s.NumGlobalNodes)
	for i, g := range s.Global {
		t.local[g] = int32(i)
		own[g] = int64(t.c.Rank())
	}
	if err := t.c.AllreduceSumI64(own); err != nil {
		return err
	}
	t.owner = make([]int32, len(own))
	for g, r := range own {
		t.owner[g] = int32(r)
	}
	return nil
}

// evalPairs lists split i's scored pairs (positives ps) and their targets,
// and their grouping (link.group): the split files' negatives for
// validation and test where given, else one negative (u, w) drawn for
// each positive (u, v) from the task seed, right after it.
func (t *link) evalPairs(es *graph.EdgeSplit, i int, ps [][2]int32) ([][2]int32, []float64, int) {
	if i > 0 && es.TargetNeg[i-1] != nil {
		k := es.NegK[i-1]
		pairs := make([][2]int32, 0, len(ps)*(1+k))
		y := make([]float64, 0, len(ps)*(1+k))
		for e, p := range ps {
			pairs, y = append(pairs, p), append(y, 1)
			for _, w := range es.TargetNeg[i-1][e*k : (e+1)*k] {
				pairs, y = append(pairs, [2]int32{p[0], w}), append(y, 0)
			}
		}
		return pairs, y, 1 + k
	}
	if i > 0 && es.Neg[i-1] != nil {
		pairs := append(slices.Clone(ps), es.Neg[i-1]...)
		y := make([]float64, len(pairs))
		for e := range ps {
			y[e] = 1
		}
		return pairs, y, 0
	}
	drawn, _ := t.withNegatives(ps, 1, uint64(1000+i))
	pairs := make([][2]int32, 0, len(drawn))
	y := make([]float64, 0, len(drawn))
	for e, p := range ps {
		pairs, y = append(pairs, p, drawn[len(ps)+e]), append(y, 1, 0)
	}
	return pairs, y, 2
}

// withNegatives is pairsWithNegatives of the task's nodes and seed.
func (t *link) withNegatives(pos [][2]int32, ratio int, stream uint64) ([][2]int32, []float64) {
	return pairsWithNegatives(pos, ratio, t.n, t.seed, stream)
}

// UseRows implements Exchanging: the pair rows go through m from now on.
func (t *link) UseRows(m RowMover) { t.rows.mv = m }

// Metric is the selecting metric (Kind.MetricOf).
func (t *link) Metric() string { return t.metric }

// CheckLinkMetric checks the form of a Table.LinkMetric name (whether the
// split has the negatives it needs is checked when the task is built).
func CheckLinkMetric(m string) error {
	_, err := linkMetric(m, true)
	return err
}

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
	loss := t.pairLoss(pl, ext, gext, denom)
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
	return t.pairLoss(t.eval[split], ext, nil, 1), nil
}

// Params: the mlp decoder's weights (none for dot), made on the first
// call for embeddings of width columns.
func (t *link) Params(width int) []*nn.Param {
	if t.decoder != "mlp" {
		return nil
	}
	if t.dec == nil {
		t.dec = newMLP(width, t.seed)
	}
	return t.dec.params()
}

// pairLoss is the BCE sum of pl's pairs on the extended table ext and,
// with gext, adds its gradient/denom to gext (and, mlp, sets the
// decoder's gradients).
func (t *link) pairLoss(pl *pairPlan, ext, gext *dense.Matrix, denom float64) float64 {
	if t.dec == nil {
		return pl.loss(ext, gext, denom)
	}
	z, a, s := t.dec.forward(ext, pl.pairs)
	var l float64
	for k, x := range s {
		v, g := bce(x, pl.y[k])
		l += v
		s[k] = g / denom
	}
	if gext != nil {
		for _, p := range t.dec.params() {
			clear(p.G)
		}
		t.dec.backward(ext, gext, pl.pairs, z, a, s)
	}
	return l
}

// scores are pl's pair scores on the extended table ext.
func (t *link) scores(ext *dense.Matrix, pl *pairPlan) []float32 {
	out := make([]float32, len(pl.pairs))
	if t.dec != nil {
		_, _, s := t.dec.forward(ext, pl.pairs)
		for k, x := range s {
			out[k] = float32(x)
		}
		return out
	}
	for k, p := range pl.pairs {
		out[k] = float32(dot(ext.Row(int(p[0])), ext.Row(int(p[1]))))
	}
	return out
}

// Evaluate: per split, the ROC-AUC of its positives against its
// negatives (all pairs pooled; computed on rank 0 from every rank's
// scores), and OGB's ranking metrics: with per-source negatives, MRR and
// Hits@1, 3, 10 by each positive's rank among its own negatives (summed
// over the ranks, each scoring whole groups); otherwise Hits@20, 50, 100
// of the positives against all the split's negatives (on rank 0). A
// selected hitsK of another K is computed too. Collective.
func (t *link) Evaluate(c comm.Comm, h *dense.Matrix, _ [3][]int32) (Scores, error) {
	sc := Scores{Extra: map[string]float64{}}
	ks := []int{20, 50, 100}
	if t.perSource {
		ks = []int{1, 3, 10}
	}
	if k := hitsK(t.metric); k > 0 && !slices.Contains(ks, k) {
		ks = append(ks, k)
	}
	w := 2 + len(ks) // per split: AUC, MRR, Hits@K
	buf := make([]float64, 3*w)
	var groups [3]float64
	for i := range Splits {
		s, err := t.gatherScores(c, h, t.eval[i])
		if err != nil {
			return sc, err
		}
		b := buf[i*w : (i+1)*w]
		if c.Rank() == 0 {
			b[0], _ = auc(s.all)
		}
		if t.perSource {
			groups[i] = rankMetrics(s.local, t.group[i], ks, b[1:])
			continue
		}
		if c.Rank() == 0 {
			for j, k := range ks {
				b[2+j] = hitsAt(s.all, k)
			}
		}
	}
	buf = append(buf, groups[:]...)
	if err := c.AllreduceSumF64(buf); err != nil {
		return sc, err
	}
	for i, name := range Splits {
		b, n := buf[i*w:(i+1)*w], buf[3*w+i]
		if t.perSource {
			for j := 1; j < w; j++ {
				b[j] = ratio(b[j], n)
			}
			sc.Extra[name+"_mrr"] = b[1]
		}
		sc.Extra[name+"_rocauc"] = b[0]
		for j, k := range ks {
			sc.Extra[fmt.Sprintf("%s_hits%d", name, k)] = b[2+j]
		}
		switch k := hitsK(t.metric); {
		case t.metric == "rocauc":
			sc.Main[i] = b[0]
		case t.metric == "mrr":
			sc.Main[i] = b[1]
		default:
			sc.Main[i] = b[2+slices.Index(ks, k)]
		}
		delete(sc.Extra, name+"_"+t.metric)
	}
	return sc, nil
}

// rankMetrics adds to out (MRR, then Hits@K for each of ks) the sums over
// the groups of local (a positive's score, then its negatives') of OGB's
// reciprocal rank and rank ≤ K, the rank being the mean of the optimistic
// and pessimistic ones (ties: negatives scoring above, or at least as
// high as, the positive), plus one. Returns the number of groups.
func rankMetrics(local []scoredLabel, group int, ks []int, out []float64) float64 {
	var n float64
	for g := 0; g+group <= len(local); g += group {
		pos := local[g].score
		var above, atLeast int
		for _, x := range local[g+1 : g+group] {
			if x.score > pos {
				above++
			}
			if x.score >= pos {
				atLeast++
			}
		}
		rank := 0.5*float64(above+atLeast) + 1
		out[0] += 1 / rank
		for j, k := range ks {
			if rank <= float64(k) {
				out[1+j]++
			}
		}
		n++
	}
	return n
}

// linkScores are a plan's scores: this rank's pairs in plan order
// (local), and every rank's on rank 0 (all; nil elsewhere).
type linkScores struct {
	local, all []scoredLabel
}

// gatherScores scores the plan's pairs and collects every rank's scores
// on rank 0.
func (t *link) gatherScores(c comm.Comm, h *dense.Matrix, pl *pairPlan) (linkScores, error) {
	var ls linkScores
	ext, err := pl.fetch(h)
	if err != nil {
		return ls, err
	}
	send := make([]float32, 0, 2*len(pl.pairs))
	ls.local = make([]scoredLabel, len(pl.pairs))
	for k, s := range t.scores(ext, pl) {
		ls.local[k] = scoredLabel{s, pl.y[k] == 1}
		send = append(send, s, float32(pl.y[k]))
	}
	p := c.Size()
	counts := make([]int64, p)
	counts[c.Rank()] = int64(len(pl.pairs))
	if err := c.AllreduceSumI64(counts); err != nil {
		return ls, err
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
		return ls, err
	}
	ls.all = make([]scoredLabel, total)
	for i := range ls.all {
		ls.all[i] = scoredLabel{recv[2*i], recv[2*i+1] == 1}
	}
	return ls, nil
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

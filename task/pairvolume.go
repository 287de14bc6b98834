package task

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/quant"
)

// PairVolume is what a link task's pair exchange moves with the nodes
// owned by ranks ranks: its pair lists, each with the pairs every rank
// scores, the rows it fetches and the messages those rows travel in.
type PairVolume struct {
	Ranks int `json:"ranks"`
	// Train is the training step's list (the training edges and the
	// first epoch's negatives): its rows forward, their gradients back
	// along the same messages reversed.
	Train PairList `json:"train"`
	// Eval are an evaluation's lists: the train, validation and test
	// edges, each with one fixed negative an edge.
	Eval []PairList `json:"eval"`
}

// PairList is one scored pair list's exchange.
type PairList struct {
	Name string `json:"name"`
	// Fetches is how many times a pass moves the list's rows: the
	// evaluation fetches the validation and test rows twice (for the
	// metrics, then for the loss).
	Fetches int `json:"fetches"`
	// Pairs and Rows are, per rank, the pairs it scores (those whose first
	// endpoint it owns; each pair's score and target go to rank 0 in an
	// evaluation, 8 bytes) and the distinct rows it fetches (second
	// endpoints owned by other ranks).
	Pairs []int64 `json:"pairs"`
	Rows  []int64 `json:"rows"`
	// Msgs are the rows by (owner, scoring rank), From ascending, then To.
	Msgs []exchange.Message `json:"messages"`
}

// evalFetches are the times an evaluation fetches each split's rows:
// Evaluate scores all three, LossSum fetches validation and test again.
var evalFetches = [3]int{1, 2, 2}

// PairVolumes counts the pair exchange of a link task on edge split es
// with ratio negatives a training edge drawn from seed, the nodes owned
// as owner says (every node's rank, of ranks ranks): the lists the task
// plans (newLink, Loss of epoch 1).
func PairVolumes(owner []int32, ranks int, es *graph.EdgeSplit, ratio int, seed uint64) (*PairVolume, error) {
	n := len(owner)
	for i, ps := range [][][2]int32{es.Train, es.Valid, es.Test} {
		for k, p := range ps {
			if p[0] < 0 || int(p[0]) >= n || p[1] < 0 || int(p[1]) >= n {
				return nil, fmt.Errorf("task: %s pair %d (%d, %d): ids outside the %d nodes", Splits[i], k, p[0], p[1], n)
			}
		}
	}
	for v, r := range owner {
		if r < 0 || int(r) >= ranks {
			return nil, fmt.Errorf("task: node %d is owned by rank %d of %d", v, r, ranks)
		}
	}
	train, _ := pairsWithNegatives(es.Train, max(ratio, 1), n, seed, 1)
	v := &PairVolume{Ranks: ranks, Train: countPairs("train", 1, train, owner, ranks)}
	for i, pos := range [][][2]int32{es.Train, es.Valid, es.Test} {
		pairs, _ := pairsWithNegatives(pos, 1, n, seed, uint64(1000+i))
		v.Eval = append(v.Eval, countPairs(Splits[i], evalFetches[i], pairs, owner, ranks))
	}
	return v, nil
}

// countPairs counts one list's pairs, fetched rows and messages.
func countPairs(name string, fetches int, pairs [][2]int32, owner []int32, ranks int) PairList {
	l := PairList{Name: name, Fetches: fetches, Pairs: make([]int64, ranks), Rows: make([]int64, ranks)}
	seen := map[int64]bool{} // scoring rank × n + fetched node
	msgs := map[[2]int]int64{}
	n := int64(len(owner))
	for _, p := range pairs {
		r, o := owner[p[0]], owner[p[1]]
		l.Pairs[r]++
		if k := int64(r)*n + int64(p[1]); o != r && !seen[k] {
			seen[k] = true
			l.Rows[r]++
			msgs[[2]int{int(o), int(r)}]++
		}
	}
	for k, rows := range msgs {
		l.Msgs = append(l.Msgs, exchange.Message{From: k[0], To: k[1], Rows: rows})
	}
	slices.SortFunc(l.Msgs, func(a, b exchange.Message) int { return cmp.Or(a.From-b.From, a.To-b.To) })
	return l
}

// pairsWithNegatives returns the positives pos (target 1) followed by
// ratio negatives (u, w) per positive (u, v) (target 0), w uniform over
// the n nodes from a generator seeded by seed and stream: the same pairs
// on every rank, whatever the rank count.
func pairsWithNegatives(pos [][2]int32, ratio, n int, seed, stream uint64) ([][2]int32, []float64) {
	rng := rand.New(rand.NewPCG(seed, stream))
	pairs := slices.Clone(pos)
	y := make([]float64, len(pos), len(pos)*(1+ratio))
	for i := range y {
		y[i] = 1
	}
	for _, p := range pos {
		for range ratio {
			pairs = append(pairs, [2]int32{p[0], int32(rng.IntN(n))})
			y = append(y, 0)
		}
	}
	return pairs, y
}

// PartitionPairVolumes is PairVolumes of the edge split spec (as
// graph.SplitEdges reads it) of the graph in partition directory dir
// shared by ranks ranks, its nodes owned as the directory says
// (partition.Assemble). Train splits the graph before partitioning it
// without the held-out edges; the directory's partition of the whole
// graph stands in for that one.
func PartitionPairVolumes(dir string, ranks int, spec string, ratio int, seed uint64) (*PairVolume, error) {
	g, owner, err := partition.Assemble(dir, ranks)
	if err != nil {
		return nil, err
	}
	es, err := graph.SplitEdges(&graph.Dataset{Graph: g}, spec)
	if err != nil {
		return nil, err
	}
	return PairVolumes(owner, ranks, es, ratio, seed)
}

// PairReport is a PairVolume's bytes at one wire format, per rank and
// epoch (a training step and one evaluation).
type PairReport struct {
	Ranks int `json:"ranks"`
	Width int `json:"width"` // values a row: the model's output (the embedding)
	Bits  int `json:"bits"`  // 32: fp32 rows
	// Per rank: the pairs it scores and the rows it fetches in the
	// training step (as many gradient rows go back), and the bytes it
	// sends (the rows other ranks fetch from it, the gradients it
	// returns).
	TrainPairs []int64 `json:"train_pairs"`
	TrainRows  []int64 `json:"train_rows"`
	TrainBytes []int64 `json:"train_bytes"`
	// The same for an evaluation (every list's rows times its fetches),
	// and the scores and targets each rank sends rank 0 (8 bytes a pair).
	EvalPairs  []int64 `json:"eval_pairs"`
	EvalRows   []int64 `json:"eval_rows"`
	EvalBytes  []int64 `json:"eval_bytes"`
	ScoreBytes []int64 `json:"score_bytes"`
	// Sums over the ranks.
	TrainBytesTotal int64       `json:"train_bytes_total"`
	EvalBytesTotal  int64       `json:"eval_bytes_total"`
	Volume          *PairVolume `json:"volume"`
}

// Report prices v's rows of width values at wire.
func (v *PairVolume) Report(width int, wire quant.Wire) *PairReport {
	p := v.Ranks
	r := &PairReport{Ranks: p, Width: width, Bits: wire.Bits, Volume: v,
		TrainPairs: slices.Clone(v.Train.Pairs), TrainRows: slices.Clone(v.Train.Rows), TrainBytes: make([]int64, p),
		EvalPairs: make([]int64, p), EvalRows: make([]int64, p), EvalBytes: make([]int64, p), ScoreBytes: make([]int64, p)}
	for _, m := range v.Train.Msgs {
		b := wire.Bytes(m.Rows, width)
		r.TrainBytes[m.From] += b // the rows
		r.TrainBytes[m.To] += b   // their gradients
	}
	for _, l := range v.Eval {
		f := int64(l.Fetches)
		for q := range p {
			r.EvalPairs[q] += l.Pairs[q]
			r.EvalRows[q] += f * l.Rows[q]
			if q != 0 {
				r.ScoreBytes[q] += 8 * l.Pairs[q]
			}
		}
		for _, m := range l.Msgs {
			r.EvalBytes[m.From] += f * wire.Bytes(m.Rows, width)
		}
	}
	for q := range p {
		r.TrainBytesTotal += r.TrainBytes[q]
		r.EvalBytesTotal += r.EvalBytes[q]
	}
	return r
}

package task

import (
	"fmt"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/partition"
)

// ScorePairs scores pairs (global ids) with a trained link model: h holds
// the model's outputs (embeddings) of shard s's owned nodes, decoder names
// the pair scorer (Decoders) and saved holds the mlp decoder's weights by
// parameter name. It returns the decoder's logits (before the sigmoid) in
// the order of pairs on rank 0, nil elsewhere. Each pair is scored by the
// rank owning its first endpoint, as in training. Collective.
func ScorePairs(c comm.Comm, s *partition.Shard, h *dense.Matrix, pairs [][2]int32, decoder string, saved map[string][]float32) ([]float32, error) {
	if err := CheckDecoder(decoder); err != nil {
		return nil, err
	}
	t := &link{c: c, local: make(map[int64]int32, len(s.Global)), nLocal: len(s.Global), n: int(s.NumGlobalNodes), decoder: decoder}
	if decoder == "mlp" {
		t.dec = newMLP(h.Cols, 0)
		for _, p := range t.dec.params() {
			w, ok := saved[p.Name]
			if !ok || len(w) != len(p.W) {
				return nil, fmt.Errorf("checkpoint lacks decoder parameter %s (or its size differs)", p.Name)
			}
			copy(p.W, w)
		}
	}
	if err := t.own(s); err != nil {
		return nil, err
	}
	var mine []int64 // the indices of the pairs this rank scores, in plan order
	for k, p := range pairs {
		if t.owner[p[0]] == int32(c.Rank()) {
			mine = append(mine, int64(k))
		}
	}
	// The rows travel in fp32: scoring is exact at any rank count.
	pl, err := newPairPlan(c, &pairRows{mv: f32Rows{c}}, false, 0, pairs, make([]float64, len(pairs)), t.owner, t.local, t.nLocal)
	if err != nil {
		return nil, err
	}
	ext, err := pl.fetch(h)
	if err != nil {
		return nil, err
	}
	scores := t.scores(ext, pl)
	p := c.Size()
	counts := make([]int64, p)
	counts[c.Rank()] = int64(len(mine))
	if err := c.AllreduceSumI64(counts); err != nil {
		return nil, err
	}
	sendCounts, recvCounts := make([]int, p), make([]int, p)
	sendCounts[0] = len(mine)
	total := 0
	if c.Rank() == 0 {
		for r := range p {
			recvCounts[r] = int(counts[r])
			total += recvCounts[r]
		}
	}
	got, idx := make([]float32, total), make([]int64, total)
	if err := pl.alltoall(scores, sendCounts, got, recvCounts, 1); err != nil {
		return nil, err
	}
	if err := c.AlltoallvI64(mine, sendCounts, offsets(sendCounts, 1), idx, recvCounts, offsets(recvCounts, 1)); err != nil || c.Rank() != 0 {
		return nil, err
	}
	out := make([]float32, len(pairs))
	for i, k := range idx {
		out[k] = got[i]
	}
	return out, nil
}

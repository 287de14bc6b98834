package perfmodel

import (
	"fmt"
	"math"

	"github.com/supergcn/supergcn/exchange"
)

// ScaleVolumes returns vols with every count (owned and training nodes,
// local and cut edges, rows of every pair) multiplied by f, rounded: the
// per-rank volumes of a graph f times larger with the same structure, cut
// into as many parts, assuming the boundary grows in proportion to the
// part (true of graphs without geometric locality, where the cut fraction
// at a given part count depends on degrees, not size; see docs/SCALING.md).
// Pairs stay pairs: the message count per rank does not change. A factor
// that is not finite and positive, or that takes a count past 2^40 (a
// trillion per rank: far beyond any graph, and small enough that bytes of
// any width stay within int64), is an error rather than a wrapped count.
func ScaleVolumes(vols []exchange.RankVolume, f float64) ([]exchange.RankVolume, error) {
	if !(f > 0) || math.IsInf(f, 1) {
		return nil, fmt.Errorf("scale factor %g, want a finite factor > 0", f)
	}
	const limit = 1 << 40
	var bad error
	s := func(x int64) int64 {
		y := math.Round(float64(x) * f)
		if y > limit && bad == nil {
			bad = fmt.Errorf("scale factor %g takes a count of %d to %.3g, beyond 2^40 per rank", f, x, y)
		}
		return int64(min(y, limit))
	}
	out := make([]exchange.RankVolume, len(vols))
	for i, v := range vols {
		w := v
		w.Nodes, w.TrainNodes, w.LocalEdges, w.CutEdges = s(v.Nodes), s(v.TrainNodes), s(v.LocalEdges), s(v.CutEdges)
		w.Recv = make([]exchange.PeerRows, len(v.Recv))
		for j, p := range v.Recv {
			w.Recv[j] = exchange.PeerRows{From: p.From, CutEdges: s(p.CutEdges),
				Counts: exchange.RowCounts{Pre: s(p.Counts.Pre), Post: s(p.Counts.Post), Hybrid: s(p.Counts.Hybrid)}}
		}
		out[i] = w
	}
	if bad != nil {
		return nil, bad
	}
	return out, nil
}

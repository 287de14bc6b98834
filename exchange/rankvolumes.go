package exchange

import (
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/par"
	"github.com/supergcn/supergcn/partition"
)

// PeerRows is what one sender rank sends a receiver per layer and direction:
// the rows of each mode (SplitCut's counts) and the cut edges behind them.
type PeerRows struct {
	From     int       `json:"from"`
	Counts   RowCounts `json:"rows"`
	CutEdges int64     `json:"cut_edges"`
}

// RankVolume is one rank's share of a partition as the exchange would run
// it: owned nodes, in-edges (local and cut) and, for every rank that sends
// it rows, the pair's row counts (senders ascending, pairs without cut
// edges left out).
type RankVolume struct {
	Rank       int        `json:"rank"`
	Nodes      int64      `json:"nodes"`
	TrainNodes int64      `json:"train_nodes"`
	LocalEdges int64      `json:"local_edges"`
	CutEdges   int64      `json:"cut_edges"`
	Recv       []PeerRows `json:"recv"`
}

// Volumes plans every ordered rank pair of the partition in dir shared by
// ranks ranks with the exchange's own planner (SplitShard, which computes
// the counts of all three modes), loading each rank's shard in turn (up to
// workers at once; ≤ 0: the thread budget). It is the per-pair volume
// `supergcn stats` totals and the performance model (perfmodel) reads.
func Volumes(dir string, ranks, workers int) ([]RankVolume, error) {
	vols := make([]RankVolume, ranks)
	errs := make([]error, ranks)
	par.Blocks(ranks, workers, func(r int) {
		vols[r], errs[r] = rankVolume(dir, r, ranks)
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return vols, nil
}

func rankVolume(dir string, r, ranks int) (RankVolume, error) {
	sh, err := partition.Load(dir, r, ranks)
	if err != nil {
		return RankVolume{}, err
	}
	splits, err := SplitShard(sh, ModeHybrid)
	if err != nil {
		return RankVolume{}, err
	}
	v := RankVolume{Rank: r, Nodes: int64(len(sh.Global))}
	if sh.Local != nil {
		v.LocalEdges = int64(len(sh.Local.Idx))
	}
	for _, s := range sh.Split {
		if s&graph.InTrain != 0 {
			v.TrainNodes++
		}
	}
	cut := make([]int64, ranks)
	for _, q := range sh.Remote.Owner {
		cut[q]++ // SplitShard checked the owners
	}
	for q, sp := range splits {
		if sp.Counts == (RowCounts{}) {
			continue
		}
		v.Recv = append(v.Recv, PeerRows{From: q, Counts: sp.Counts, CutEdges: cut[q]})
		v.CutEdges += cut[q]
	}
	return v, nil
}

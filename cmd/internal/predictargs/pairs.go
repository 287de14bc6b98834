package predictargs

import (
	"flag"
	"fmt"

	"github.com/supergcn/supergcn/cmd/internal/flagtab"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/task"
)

// Pairs are the link task's flags of stats and predict: the edge split
// whose pair exchange they count, and train's negatives and seed.
type Pairs struct {
	EdgeSplit string
	NegRatio  int
	Seed      uint64
}

// Register adds --edge-split, --neg-ratio and --seed to fs.
func (p *Pairs) Register(fs *flag.FlagSet) {
	fs.StringVar(&p.EdgeSplit, "edge-split", "", "also count the pair exchange of --task link on this edge split (random:TRAIN,VALID[,TEST][:SEED], as train's) of the partitioned graph")
	fs.IntVar(&p.NegRatio, "neg-ratio", 1, "with --edge-split: negatives per training edge, as train's")
	fs.Uint64Var(&p.Seed, "seed", 1, "with --edge-split: train's --seed (it draws the negatives)")
}

// Volume returns the pair exchange of the partition directory dir on
// ranks ranks (nil without --edge-split).
func (p *Pairs) Volume(dir string, ranks int) (*task.PairVolume, error) {
	if p.EdgeSplit == "" {
		return nil, nil
	}
	if _, err := graph.ParseEdgeSplit(p.EdgeSplit); err != nil {
		return nil, flagtab.UsageError("--edge-split: " + err.Error())
	}
	if p.NegRatio < 1 {
		return nil, flagtab.UsageError(fmt.Sprintf("--neg-ratio: %d, want ≥ 1", p.NegRatio))
	}
	v, err := task.PartitionPairVolumes(dir, ranks, p.EdgeSplit, p.NegRatio, p.Seed)
	if err != nil {
		return nil, fmt.Errorf("--edge-split: %w", err)
	}
	return v, nil
}

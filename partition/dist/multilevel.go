package dist

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/supergcn/supergcn/comm"
)

// MultilevelOptions tune Multilevel.
type MultilevelOptions struct {
	// Weights is the node-weight scheme (WeightsNone, WeightsDegree,
	// WeightsDegreeTrain as VertexWeights; "" = WeightsDegree).
	Weights string
	// Imbalance is the allowed excess of a part over the average, per
	// constraint (0 = 0.05).
	Imbalance float64
	// Seed seeds every random choice; the result depends on it and on the
	// number of ranks only.
	Seed uint64
	// CoarseNodes and CoarseArcs: coarsening stops at a level with at most
	// this many nodes and arcs (0 = max(100000, 2000·parts) nodes and 30
	// arcs a node), or when a level has less than 5 % fewer nodes.
	CoarseNodes, CoarseArcs int64
	// ClusterSweeps: label-propagation sweeps per coarsening level (0 = 3).
	ClusterSweeps int
	// RefineSweeps: label-propagation sweeps per level when uncoarsening (0 = 6).
	RefineSweeps int
	// FMPasses: boundary passes (moves at a loss allowed, the best prefix
	// kept) per level after label propagation (0 = 2; -1 = none).
	FMPasses int
	// Batches: each sweep visits the nodes in this many batches, between
	// which the ranks exchange their ghosts' new labels (0 = 8).
	Batches int
	// InitialTries: ranks that partition the coarsest graph, each with its
	// own seed (0 = 4; never more than the ranks).
	InitialTries int
	// Initial partitions the coarsest graph (partition/metis's METIS); nil:
	// greedy growing and label propagation in Go.
	Initial InitialPartitioner
	// Log receives one line per level (rank 0 passes one, the others nil).
	Log io.Writer
}

func (o *MultilevelOptions) defaults(parts int) error {
	if o.Weights == "" {
		o.Weights = WeightsDegree
	}
	if o.Imbalance == 0 {
		o.Imbalance = 0.05
	}
	if o.CoarseNodes == 0 {
		o.CoarseNodes = max(100000, 2000*int64(parts))
	}
	if o.CoarseArcs == 0 {
		o.CoarseArcs = 30 * o.CoarseNodes
	}
	orDefault(&o.ClusterSweeps, 3)
	orDefault(&o.RefineSweeps, 6)
	orDefault(&o.Batches, 8)
	orDefault(&o.InitialTries, 4)
	orDefault(&o.FMPasses, 2)
	switch {
	case parts < 1 || parts > math.MaxInt32:
		return fmt.Errorf("dist: multilevel: %d parts, want at least 1", parts)
	case !(o.Imbalance > 0 && o.Imbalance <= 10):
		return fmt.Errorf("dist: multilevel: imbalance %g outside (0, 10]", o.Imbalance)
	case o.CoarseNodes < 1 || o.CoarseArcs < 1 || o.ClusterSweeps < 0 || o.RefineSweeps < 0 || o.Batches < 1 || o.InitialTries < 1 || o.FMPasses < -1:
		return fmt.Errorf("dist: multilevel: coarse nodes %d, arcs %d, sweeps %d/%d, batches %d, tries %d, FM passes %d: want positive values",
			o.CoarseNodes, o.CoarseArcs, o.ClusterSweeps, o.RefineSweeps, o.Batches, o.InitialTries, o.FMPasses)
	}
	return nil
}

// Multilevel partitions the distributed graph into parts the multilevel
// way, every stage distributed except the partitioning of the coarsest
// graph: it coarsens by size-constrained label-propagation clustering
// (see clusterCap) and contraction until at most CoarseNodes nodes and
// CoarseArcs arcs remain, partitions the coarsest graph gathered on
// several ranks with different seeds (Initial, or the Go fallback) keeping
// the best, then projects level by level, refining each with balanced label
// propagation and FM-style boundary passes. Node weights follow Weights; arcs weigh 1. Memory per rank
// is the rank's share of every level, plus the coarsest graph on the ranks
// partitioning it. It returns the part of each of this rank's nodes.
// Collective; deterministic for a seed and a number of ranks.
func Multilevel(c comm.Comm, g *Graph, parts int, o MultilevelOptions) ([]int32, error) {
	if err := agree(c, o.defaults(parts)); err != nil {
		return nil, err
	}
	t0 := time.Now()
	logf := func(format string, a ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, "multilevel: "+format+" (%.2fs)\n", append(a, time.Since(t0).Seconds())...)
		}
	}
	l, err := levelZero(c, g, o.Weights)
	if err != nil {
		return nil, err
	}
	if parts == 1 {
		return make([]int32, l.n), nil
	}
	logf("level 0: %d nodes, %d arcs", l.nodes, l.arcs)
	type step struct {
		fine *mlGraph
		cid  []int64 // coarse id of each fine local node
	}
	var levels []step
	for l.nodes > o.CoarseNodes || l.arcs > o.CoarseArcs {
		cap := l.clusterCap(parts, &o)
		label, err := l.cluster(c, cap, o.ClusterSweeps, o.Batches, o.Seed+uint64(len(levels)))
		if err != nil {
			return nil, err
		}
		coarse, cid, err := l.contract(c, label)
		if err != nil {
			return nil, err
		}
		levels = append(levels, step{l, cid})
		logf("level %d: %d nodes, %d arcs", len(levels), coarse.nodes, coarse.arcs)
		stalled := coarse.nodes > l.nodes*95/100
		l = coarse
		if stalled {
			break
		}
	}
	part, how, err := l.initial(c, parts, &o)
	if err != nil {
		return nil, err
	}
	if err := l.logQuality(c, part, false, parts, &o, logf, fmt.Sprintf("initial partition of level %d (%s)", len(levels), how)); err != nil {
		return nil, err
	}
	for i := len(levels); ; i-- {
		full, err := l.refine(c, part, parts, o.Imbalance, o.RefineSweeps, o.Batches, max(0, o.FMPasses), o.Seed+uint64(i))
		if err != nil {
			return nil, err
		}
		if err := l.logQuality(c, full, true, parts, &o, logf, fmt.Sprintf("refined level %d", i)); err != nil {
			return nil, err
		}
		if i == 0 {
			return full[:l.n:l.n], nil
		}
		s := levels[i-1]
		part, err = project(c, l.vd, full[:l.n], s.cid)
		if err != nil {
			return nil, err
		}
		l = s.fine
		levels = levels[:i-1]
	}
}

// logQuality prints the cut and balance of part (the local nodes', then
// the ghosts' when withGhosts) to rank 0's log. Collective.
func (l *mlGraph) logQuality(c comm.Comm, part []int32, withGhosts bool, parts int, o *MultilevelOptions, logf func(string, ...any), what string) error {
	full := part
	if !withGhosts {
		ans, err := askOwners(c, l.vd, l.ghost, func(i int) int64 { return int64(part[i]) })
		if err != nil {
			return err
		}
		full = make([]int32, l.n+len(l.ghost))
		copy(full, part)
		for j, x := range ans {
			full[l.n+j] = int32(x)
		}
	}
	cut, err := l.cut(c, full)
	if err != nil {
		return err
	}
	b, err := l.newBalance(c, full, parts, o.Imbalance)
	if err != nil {
		return err
	}
	logf("%s: cut %d of %d, imbalance %.3f", what, cut, l.edgeW, b.imbalance(l.total))
	return nil
}

// orDefault sets *x to d when it is zero.
func orDefault(x *int, d int) {
	if *x == 0 {
		*x = d
	}
}

// clusterCap is the heaviest cluster the coarsening of l may form: at most
// imbalance·total/parts (so the coarsest graph can be balanced) and twice
// the average node of the level it aims for, CoarseNodes nodes (fewer, in
// proportion, while the arcs exceed CoarseArcs), so that coarsening ends
// near the target, not far below it.
func (l *mlGraph) clusterCap(parts int, o *MultilevelOptions) int64 {
	target := float64(o.CoarseNodes)
	if l.arcs > o.CoarseArcs {
		target = min(target, float64(l.nodes)*float64(o.CoarseArcs)/float64(l.arcs))
	}
	w := float64(l.total[0])
	return max(1, int64(min(o.Imbalance*w/float64(parts), 2*w/max(1, target))))
}

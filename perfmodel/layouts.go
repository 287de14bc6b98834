package perfmodel

import (
	"errors"
	"fmt"
	"strings"

	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/partition"
)

// Layout is how a node runs its cores: RanksPerNode ranks of Threads
// threads each.
type Layout struct {
	RanksPerNode int `json:"ranks_per_node"`
	Threads      int `json:"threads"`
}

// Layouts lists the layouts that fill a node of cores cores exactly: R
// ranks of cores/R threads for every divisor R of cores, R ascending.
func Layouts(cores int) []Layout {
	var ls []Layout
	for r := 1; r <= cores; r++ {
		if cores%r == 0 {
			ls = append(ls, Layout{RanksPerNode: r, Threads: cores / r})
		}
	}
	return ls
}

// ErrNoVolumes is what a layout plan's volume source returns (wrapped)
// for a rank count it cannot supply (a partition whose parts that many
// ranks cannot share): the layout is skipped, its reason kept.
var ErrNoVolumes = errors.New("no volumes for this rank count")

// LayoutRow is one layout's predicted epoch (Row), or why it was skipped.
type LayoutRow struct {
	Layout
	Nodes   int    `json:"nodes"`
	Skipped string `json:"skipped,omitempty"`
	// Assumed is the assumption a widened profile makes for the layout
	// (Profile.WidenNote), "" for one the profile measured.
	Assumed string `json:"assumed,omitempty"`
	Best    bool   `json:"recommended,omitempty"`
	*Row    `json:",omitempty"`
}

// LayoutPlan predicts one epoch for every layout of Nodes nodes of
// CoresPerNode cores (Layouts(CoresPerNode)): Nodes·R ranks of
// CoresPerNode/R threads, R a node, each rank at its thread count's rates
// (Profile.RatesAt), with the volumes of its rank count (Volumes) and the
// exchange and model of Sweep (its one profile, network and mode;
// Threads, RanksPerNode and CoresPerNode are the layout's), for each of its
// bits in turn (the rows of Bits[0]'s layouts first): the recommendation is
// the fastest layout and bits.
// NodesPerHost is how many of the nodes share one machine (0 or 1: a real
// cluster; Nodes: an emulated cluster on one box, scripts/emu-cluster.sh),
// so that each rank runs at the rates of the ranks busy on its machine.
// A layout whose threads a rank the profile did not measure within
// (Profile.ThreadsNote) is skipped, as one without volumes is; with
// Widen, one of more threads than the profile's widest rank is predicted
// at its widened rates instead (Profile.Widened; LayoutRow.Assumed).
// Only a layout compared with another is recommended: with fewer than two
// predicted layouts none is Best.
type LayoutPlan struct {
	Sweep        Sweep
	Nodes        int
	CoresPerNode int
	NodesPerHost int
	Widen        bool
	Volumes      func(ranks int) (*Volumes, error)
}

// Run predicts every layout (for every bits), marks the fastest Best and
// returns its index: -1, with none Best, when fewer than two layouts were
// predicted (an error when none was).
func (lp *LayoutPlan) Run() ([]LayoutRow, int, error) {
	s, nodes, cores := lp.Sweep, lp.Nodes, lp.CoresPerNode
	if nodes < 1 {
		return nil, -1, field.Errorf("perfmodel.LayoutPlan.Nodes", "%d, want ≥ 1", nodes)
	}
	if cores < 1 {
		return nil, -1, field.Errorf("perfmodel.LayoutPlan.CoresPerNode", "%d, want ≥ 1", cores)
	}
	if len(s.Profiles) != 1 || len(s.Networks) != 1 || len(s.Modes) != 1 || len(s.Bits) == 0 {
		return nil, -1, fmt.Errorf("perfmodel: a layout plan takes one profile, network and mode, and bits (%d, %d, %d, %d)",
			len(s.Profiles), len(s.Networks), len(s.Modes), len(s.Bits))
	}
	if lp.NodesPerHost < 0 || lp.NodesPerHost > nodes {
		return nil, -1, field.Errorf("perfmodel.LayoutPlan.NodesPerHost", "%d, want 0 to %d (the nodes)", lp.NodesPerHost, nodes)
	}
	if s.Networks[0].Single && nodes > 1 {
		return nil, -1, field.Errorf("perfmodel.LayoutPlan.Nodes", "%d nodes on the single-node network %s", nodes, s.Networks[0].Name)
	}
	// each layout's volumes once (planning them can take long), its rows
	// at every bits; the rows then go bits by bits
	byBits := make([][]LayoutRow, len(s.Bits))
	for _, l := range Layouts(cores) {
		rs, err := lp.layout(l)
		if err != nil {
			return nil, -1, err
		}
		for i := range byBits {
			byBits[i] = append(byBits[i], rs[i])
		}
	}
	var rows []LayoutRow
	best := -1
	predicted := map[Layout]bool{}
	for _, rs := range byBits {
		for _, row := range rs {
			if row.Row != nil {
				predicted[row.Layout] = true
				if best < 0 || row.EpochS < rows[best].EpochS {
					best = len(rows)
				}
			}
			rows = append(rows, row)
		}
	}
	if best < 0 {
		return rows, -1, fmt.Errorf("perfmodel: no layout of %d nodes × %d cores can be predicted (%s)", nodes, cores, rows[0].Skipped)
	}
	if len(predicted) < 2 { // nothing to compare it with
		return rows, -1, nil
	}
	rows[best].Best = true
	return rows, best, nil
}

// layout predicts one layout at each of the sweep's bits (a row each, in
// their order), or says why it is skipped.
func (lp *LayoutPlan) layout(l Layout) ([]LayoutRow, error) {
	s, nodes := lp.Sweep, lp.Nodes
	rows := make([]LayoutRow, len(s.Bits))
	for i := range rows {
		rows[i] = LayoutRow{Layout: l, Nodes: nodes}
	}
	skip := func(why string) ([]LayoutRow, error) {
		for i := range rows {
			rows[i].Skipped = why
		}
		return rows, nil
	}
	if n := s.Profiles[0].ThreadsNote(l.Threads); n != "" {
		p := s.Profiles[0]
		if !lp.Widen || p.WidenNote(l.Threads) == "" {
			// no rates for this rank size: recommending it would rest on another's
			return skip(n)
		}
		s.Profiles = []*Profile{p.Widened(l.Threads)}
		for i := range rows {
			rows[i].Assumed = p.WidenNote(l.Threads)
		}
	}
	v, err := lp.Volumes(nodes * l.RanksPerNode)
	if errors.Is(err, ErrNoVolumes) {
		return skip(err.Error())
	}
	if err != nil {
		return nil, err
	}
	s.Config.RanksPerNode, s.Config.Threads, s.Config.CoresPerNode = l.RanksPerNode, l.Threads, lp.CoresPerNode
	s.Config.RanksPerHost = max(lp.NodesPerHost, 1) * l.RanksPerNode
	pr, err := s.Run(v) // one row per bits, in their order (one profile, network and mode)
	if err != nil {
		return nil, fmt.Errorf("%d×%d per node: %w", l.RanksPerNode, l.Threads, err)
	}
	for i := range rows {
		rows[i].Row = &pr[i]
	}
	return rows, nil
}

// VolumeSource is where a layout plan's volumes come from: the partition
// directory Dir planned on each rank count that shares its parts evenly
// (with Threads threads), or, without Dir, the volume files Files (Volumes.
// Write) by the rank counts they hold.
type VolumeSource struct {
	Dir     string
	Files   []string
	Threads int
}

// ByRanks reads the source (the partition's metadata, or every file) and
// returns LayoutPlan.Volumes for it.
func (s VolumeSource) ByRanks() (func(ranks int) (*Volumes, error), error) {
	if s.Dir != "" {
		meta, err := partition.ReadMeta(s.Dir)
		if err != nil {
			return nil, err
		}
		return func(ranks int) (*Volumes, error) {
			if meta.Parts%ranks != 0 {
				return nil, fmt.Errorf("%d parts for %d ranks: %w", meta.Parts, ranks, ErrNoVolumes)
			}
			return PlanVolumes(s.Dir, ranks, s.Threads)
		}, nil
	}
	byRanks := map[int]*Volumes{}
	for _, f := range s.Files {
		v, err := ReadVolumes(strings.TrimSpace(f))
		if err != nil {
			return nil, field.Wrap("perfmodel.VolumeSource.Files", err)
		}
		byRanks[len(v.Ranks)] = v
	}
	return func(ranks int) (*Volumes, error) {
		if v, ok := byRanks[ranks]; ok {
			return v, nil
		}
		return nil, fmt.Errorf("no perfmodel.VolumeSource.Files file of %d ranks: %w", ranks, ErrNoVolumes)
	}, nil
}

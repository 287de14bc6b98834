package perfmodel

import (
	"encoding/json"
	"fmt"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/partition"
)

// Volumes are what a prediction reads of a partition: its shape, the
// per-rank volumes (exchange.Volumes) and, once planned, the two-level
// volumes per node layout. PlanVolumes plans them from a partition
// directory, ReadVolumes reads them from a file Write wrote.
type Volumes struct {
	Meta struct {
		Dir        string `json:"dir"`
		Parts      int    `json:"parts"`
		Nodes      int64  `json:"num_nodes"`
		Edges      int64  `json:"num_edges"`
		FeatDim    int    `json:"feat_dim"`
		NumClasses int    `json:"num_classes"`
	} `json:"partition"`
	Ranks []exchange.RankVolume `json:"volumes"`
	// Node: the patterns' volumes per node layout (ranks per node), as
	// planned by exchange.NodeVolumesOf.
	Node     map[int]*exchange.NodeVolumes `json:"node_volumes,omitempty"`
	fromFile bool
}

// PlanVolumes plans the partition in dir on ranks ranks (0: one part
// each) with threads threads.
func PlanVolumes(dir string, ranks, threads int) (*Volumes, error) {
	meta, err := partition.ReadMeta(dir)
	if err != nil {
		return nil, err
	}
	if ranks == 0 {
		ranks = meta.Parts
	}
	var v Volumes
	v.Meta.Dir, v.Meta.Parts, v.Meta.Nodes, v.Meta.Edges = dir, meta.Parts, meta.NumNodes, meta.NumEdges
	v.Meta.FeatDim, v.Meta.NumClasses = meta.FeatDim, meta.NumClasses
	if v.Ranks, err = exchange.Volumes(dir, ranks, threads); err != nil {
		return nil, err
	}
	return &v, nil
}

// Write writes v as one line of JSON to path (atomically).
func (v *Volumes) Write(path string) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return container.WriteBytes(path, 0o644, append(b, '\n'))
}

// ReadVolumes reads and checks a file Volumes.Write wrote; it never plans
// (NodeVolumes of a layout the file lacks is an error).
func ReadVolumes(path string) (*Volumes, error) {
	b, err := container.ReadInput(path, 1<<30, "volumes file")
	if err != nil {
		return nil, err
	}
	var v Volumes
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", path, jsonPosError(b, err))
	}
	v.fromFile = true
	if err := v.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := ValidateVolumes(v.Ranks, v.Meta.Nodes, v.Meta.Edges); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &v, nil
}

// check validates a file's volumes: counts ≥ 0, senders in range and
// ascending, messages between existing ranks.
func (v *Volumes) check() error {
	if len(v.Ranks) == 0 || v.Meta.Parts < 1 {
		return fmt.Errorf("no volumes: no ranks or no parts (not a planned volumes file?)")
	}
	m := v.Meta
	if r := len(v.Ranks); m.Parts%r != 0 || m.Nodes < 0 || m.Edges < 0 || m.FeatDim < 0 || m.NumClasses < 0 {
		return fmt.Errorf("partition: %d parts, %d nodes, %d edges, %d features, %d classes for %d ranks: want a multiple of the ranks and counts ≥ 0",
			m.Parts, m.Nodes, m.Edges, m.FeatDim, m.NumClasses, r)
	}
	for i, rv := range v.Ranks {
		if rv.Rank != i || rv.Nodes < 0 || rv.LocalEdges < 0 || rv.CutEdges < 0 || rv.TrainNodes < 0 || rv.TrainNodes > rv.Nodes {
			return fmt.Errorf("volumes[%d]: rank %d, nodes %d (%d training), edges %d+%d: want rank %d, counts ≥ 0 and training nodes ≤ nodes",
				i, rv.Rank, rv.Nodes, rv.TrainNodes, rv.LocalEdges, rv.CutEdges, i)
		}
		for j, p := range rv.Recv {
			if p.From < 0 || p.From >= len(v.Ranks) || p.From == i || (j > 0 && p.From <= rv.Recv[j-1].From) {
				return fmt.Errorf("volumes[%d].recv[%d]: sender %d out of range or not ascending", i, j, p.From)
			}
			if c := p.Counts; c.Pre < 0 || c.Post < 0 || c.Hybrid < 0 || p.CutEdges < 0 {
				return fmt.Errorf("volumes[%d].recv[%d]: rows pre %d, post %d, hybrid %d, cut edges %d: want counts ≥ 0",
					i, j, c.Pre, c.Post, c.Hybrid, p.CutEdges)
			}
		}
	}
	for per, nv := range v.Node {
		if nv == nil || nv.Ranks != len(v.Ranks) || per < 1 {
			return fmt.Errorf("node_volumes[%d]: not for %d ranks", per, len(v.Ranks))
		}
		for _, ev := range nv.Exchange {
			for _, ms := range [][]exchange.Message{ev.Gather, ev.Inter, ev.Scatter} {
				for _, msg := range ms {
					if msg.From < 0 || msg.From >= nv.Ranks || msg.To < 0 || msg.To >= nv.Ranks || msg.Rows < 0 {
						return fmt.Errorf("node_volumes[%d]: message %d→%d of %d rows out of range", per, msg.From, msg.To, msg.Rows)
					}
				}
			}
		}
	}
	return nil
}

// NodeVolumes returns the patterns' volumes of perNode ranks per node,
// planning them from the partition when v does not hold them (and keeping
// them, so that Write saves them).
func (v *Volumes) NodeVolumes(perNode int) (*exchange.NodeVolumes, error) {
	ranks := len(v.Ranks)
	if perNode < 1 || ranks%perNode != 0 {
		return nil, field.Errorf("perfmodel.Config.RanksPerNode", "%d, want ≥ 1 and a divisor of the %d ranks", perNode, ranks)
	}
	if nv, ok := v.Node[perNode]; ok {
		if nv.Ranks != ranks || len(nv.Node) != ranks {
			return nil, fmt.Errorf("volumes: node_volumes[%d] holds %d ranks, want %d", perNode, nv.Ranks, ranks)
		}
		return nv, nil
	}
	if v.fromFile {
		return nil, fmt.Errorf("the volumes file holds no two-level volumes for %d ranks per node: plan them from the partition %s", perNode, v.Meta.Dir)
	}
	dir := v.Meta.Dir
	nv, err := exchange.NodeVolumesOf(ranks, comm.BlockNodes(ranks, perNode), func(r int) (*partition.Shard, error) { return partition.Load(dir, r, ranks) })
	if err != nil {
		return nil, err
	}
	if v.Node == nil {
		v.Node = map[int]*exchange.NodeVolumes{}
	}
	v.Node[perNode] = nv
	return nv, nil
}

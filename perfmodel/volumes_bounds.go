package perfmodel

import (
	"fmt"
	"math"

	"github.com/supergcn/supergcn/exchange"
)

// Bounds of a partition the model predicts for: global node ids are int32,
// and 2^48 edges is far beyond any graph that fits a cluster's memory.
const (
	maxNodes = math.MaxInt32
	maxEdges = 1 << 48
)

// ValidateVolumes checks per-rank volumes read from a file against the
// partition they claim to describe (nodes and edges of the whole graph):
// each rank's counts within the graph's, the rows it receives within the
// nodes. Errors name the entry.
func ValidateVolumes(vols []exchange.RankVolume, nodes, edges int64) error {
	if nodes < 0 || nodes > maxNodes || edges < 0 || edges > maxEdges {
		return fmt.Errorf("partition: %d nodes, %d edges: want at most %d nodes and %d edges", nodes, edges, int64(maxNodes), int64(maxEdges))
	}
	for i, v := range vols {
		if v.Nodes > nodes || v.LocalEdges > edges || v.CutEdges > edges || v.LocalEdges+v.CutEdges > 2*edges {
			return fmt.Errorf("volumes[%d]: %d nodes, %d+%d edges, more than the partition's %d nodes, %d edges",
				i, v.Nodes, v.LocalEdges, v.CutEdges, nodes, edges)
		}
		for j, p := range v.Recv {
			if c := p.Counts; c.Pre > nodes || c.Post > nodes || c.Hybrid > nodes || p.CutEdges > edges {
				return fmt.Errorf("volumes[%d].recv[%d]: rows pre %d, post %d, hybrid %d, cut edges %d, more than the partition's %d nodes, %d edges",
					i, j, c.Pre, c.Post, c.Hybrid, p.CutEdges, nodes, edges)
			}
		}
	}
	return nil
}

package partition

import (
	"github.com/supergcn/supergcn/graph"
)

// PartStat describes one part of a partition. Edges are the directed
// in-edges u→v of the part's owned nodes v.
type PartStat struct {
	Part          int   `json:"part"`
	Nodes         int64 `json:"nodes"`
	LocalEdges    int64 `json:"local_edges"`        // in-edges whose source is owned too
	CutEdges      int64 `json:"cut_edges"`          // in-edges from other parts (Remote)
	InnerNodes    int64 `json:"inner_nodes"`        // owned nodes with no remote in-edge
	BoundaryNodes int64 `json:"boundary_nodes"`     // owned nodes with an out-edge into another part (others need them)
	HaloRows      int64 `json:"halo_rows"`          // distinct remote sources (rows received per exchange)
	TrainNodes    int64 `json:"train_nodes"`        // owned training nodes
	FeatNNZ       int64 `json:"feat_nnz,omitempty"` // non-zeros of the owned nodes' sparse features (meta's sparse_features)

	// Set by Write: the part file, its size and CRC32-C (Castagnoli).
	File   string `json:"file,omitempty"`
	Bytes  int64  `json:"bytes,omitempty"`
	CRC32C uint32 `json:"crc32c,omitempty"`
}

// Stats summarises a partition.
type Stats struct {
	Parts []PartStat `json:"per_part"`
	// EdgeCut counts directed edges whose endpoints lie in different parts
	// (the sum of CutEdges; twice the undirected cut of a symmetric graph).
	EdgeCut int64 `json:"edge_cut"`
	// CutFraction is EdgeCut over all edges.
	CutFraction float64 `json:"cut_fraction"`
	// NodeImbalance and EdgeImbalance are max/avg over parts of the owned
	// nodes and of the in-edges (local + cut: the aggregation work);
	// HaloImbalance likewise for halo rows (1 when no part has any).
	NodeImbalance float64 `json:"node_imbalance"`
	EdgeImbalance float64 `json:"edge_imbalance"`
	HaloImbalance float64 `json:"halo_imbalance"`
	// TotalHaloRows is the sum of HaloRows: rows moved per feature exchange.
	TotalHaloRows int64 `json:"total_halo_rows"`
}

// ComputeStats measures owner (validated: see ValidateOwner) on g; split
// (one byte per node, graph.InTrain bits) may be nil. O(N + nnz).
func ComputeStats(g *graph.CSR, owner []int32, parts int, split []uint8) (*Stats, error) {
	if err := CheckSquare(g); err != nil {
		return nil, err
	}
	if err := ValidateOwner(owner, g.NumRows, parts); err != nil {
		return nil, err
	}
	n := g.NumRows
	st := &Stats{Parts: make([]PartStat, parts)}
	for p := range st.Parts {
		st.Parts[p].Part = p
	}
	// Nodes grouped by part, so halo rows can be counted with one stamp array.
	offset := make([]int, parts+1)
	for _, p := range owner {
		offset[p+1]++
	}
	for p := 0; p < parts; p++ {
		offset[p+1] += offset[p]
	}
	order := make([]int32, n)
	next := append([]int(nil), offset[:parts]...)
	for v, p := range owner {
		order[next[p]] = int32(v)
		next[p]++
	}
	boundary := make([]bool, n)
	stamp := make([]int32, n) // stamp[u] = p+1 once u is counted in part p's halo
	for p := 0; p < parts; p++ {
		ps := &st.Parts[p]
		p32 := int32(p)
		for _, v := range order[offset[p]:offset[p+1]] {
			ps.Nodes++
			if split != nil && split[v]&graph.InTrain != 0 {
				ps.TrainNodes++
			}
			inner := true
			for _, u := range g.Idx[g.Ptr[v]:g.Ptr[v+1]] {
				if owner[u] == p32 {
					ps.LocalEdges++
					continue
				}
				inner = false
				ps.CutEdges++
				boundary[u] = true
				if stamp[u] != p32+1 {
					stamp[u] = p32 + 1
					ps.HaloRows++
				}
			}
			if inner {
				ps.InnerNodes++
			}
		}
	}
	for v, b := range boundary {
		if b {
			st.Parts[owner[v]].BoundaryNodes++
		}
	}
	st.finish(int64(n))
	return st, nil
}

// StatsOf returns the Stats of a partition from its per-part entries (as
// ComputeStats fills them) over numNodes nodes: the totals and imbalances.
func StatsOf(parts []PartStat, numNodes int64) *Stats {
	st := &Stats{Parts: parts}
	st.finish(numNodes)
	return st
}

// finish computes the totals and imbalances from st.Parts.
func (st *Stats) finish(n int64) {
	parts := len(st.Parts)
	var maxN, maxE, maxH, sumE int64
	for _, ps := range st.Parts {
		st.EdgeCut += ps.CutEdges
		st.TotalHaloRows += ps.HaloRows
		e := ps.LocalEdges + ps.CutEdges
		sumE += e
		maxN, maxE, maxH = max(maxN, ps.Nodes), max(maxE, e), max(maxH, ps.HaloRows)
	}
	st.NodeImbalance = ratio(maxN, n, parts)
	st.EdgeImbalance = ratio(maxE, sumE, parts)
	st.HaloImbalance = ratio(maxH, st.TotalHaloRows, parts)
	if sumE > 0 {
		st.CutFraction = float64(st.EdgeCut) / float64(sumE)
	}
}

// ratio returns max / (sum/parts), or 1 when sum is 0.
func ratio(maxV, sum int64, parts int) float64 {
	if sum == 0 {
		return 1
	}
	return float64(maxV) * float64(parts) / float64(sum)
}

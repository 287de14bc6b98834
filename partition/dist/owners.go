package dist

import (
	"fmt"
	"math"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/partition"
)

// RandomOwners returns the parts of this rank's nodes under
// partition.Random(NumNodes, parts, seed), the same owners the serial
// random method gives them, in memory proportional to the rank's nodes.
func RandomOwners(g *Graph, parts int, seed uint64) []int32 {
	return partition.RandomRange(int64(g.NumNodes), int64(g.Lo), int64(g.Hi), parts, seed)
}

// Vertex-weight schemes (as partition/metis names them).
const (
	WeightsNone        = "none"
	WeightsDegree      = "degree"
	WeightsDegreeTrain = "degree+train"
)

// VertexWeights returns the vertex weights of this rank's nodes for a
// ParMETIS-style partitioner, as partition/metis computes them for the whole
// graph: none → ncon 1 and nil; degree → in-degree+1 (the degree in the
// symmetrised graph; the +1 for the self loop GCN adds); degree+train → also
// 1 for a training node (ncon 2), or degree alone when no rank has a
// training node. Collective.
func VertexWeights(c comm.Comm, g *Graph, scheme string) (ncon int, w []int32, err error) {
	switch scheme {
	case WeightsNone:
		return 1, nil, nil
	case WeightsDegree, WeightsDegreeTrain:
	default:
		return 0, nil, fmt.Errorf("dist: unknown weights %q", scheme)
	}
	ncon = 1
	if scheme == WeightsDegreeTrain && g.NumTrain > 0 {
		ncon = 2
	}
	n := g.Hi - g.Lo
	w = make([]int32, n*ncon)
	var bad error
	for i := 0; i < n; i++ {
		d := g.Ptr[i+1] - g.Ptr[i] + 1
		if d > math.MaxInt32 && bad == nil {
			bad = fmt.Errorf("dist: node %d has degree %d, beyond int32 weights", g.Lo+i, d-1)
		}
		w[i*ncon] = int32(min(d, math.MaxInt32))
		if ncon == 2 && hasTrain(g.Split[i]) {
			w[i*ncon+1] = 1
		}
	}
	return ncon, w, agree(c, bad)
}

// LocalCSR32 returns the node ranges and this rank's rows in the 32-bit
// form of the ParMETIS API (row offsets from 0, global column ids), or, on
// every rank, an error when the graph has more than 2^31-1 nodes (its ids
// exceed int32) or some rank's arcs exceed int32. Collective.
func LocalCSR32(c comm.Comm, g *Graph) (vtxdist, ptr, adj []int32, err error) {
	switch {
	case int64(g.NumNodes) > math.MaxInt32:
		err = fmt.Errorf("dist: %d nodes exceed the int32 node ids of the ParMETIS API: partition with the multilevel or ldg method", g.NumNodes)
	case int64(len(g.Adj)) > math.MaxInt32:
		err = fmt.Errorf("dist: %d arcs on rank %d exceed the int32 row offsets of the ParMETIS API: use more ranks", len(g.Adj), c.Rank())
	}
	if err = agree(c, err); err != nil {
		return nil, nil, nil, err
	}
	vtxdist = make([]int32, len(g.VtxDist))
	for q, x := range g.VtxDist {
		vtxdist[q] = int32(x)
	}
	ptr = make([]int32, len(g.Ptr))
	for i, x := range g.Ptr {
		ptr[i] = int32(x)
	}
	adj = make([]int32, len(g.Adj))
	for k, u := range g.Adj {
		adj[k] = int32(u)
	}
	return vtxdist, ptr, adj, nil
}

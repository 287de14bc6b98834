package graph

import (
	"fmt"
	"math/rand/v2"

	"github.com/supergcn/supergcn/internal/sysmem"
)

// Synthetic labels and features for structure-only graphs.
const (
	synthSeedsPerClass = 4   // BFS sources per class
	synthTrain         = 0.1 // split fractions of AttachSyntheticFeatures
	synthValid         = 0.1
	synthTest          = 0.8
)

// AttachSyntheticFeatures gives a structure-only dataset (FeatDim 0, no
// labels, e.g. an edge list) labels, features and a split, so models can be
// trained on it. It replaces any labels, features and splits ds had.
//
//   - Labels follow the structure: 4·classes distinct random source nodes
//     (source i has class i mod classes) grow regions by one simultaneous
//     breadth-first search over the edges in both directions, each node
//     taking the class of the region that reaches it first. A component
//     without a source gets one random class from its lowest-numbered node.
//     Regions are connected, so most edges join nodes of the same class.
//   - Features are class-mean plus noise, as Generate's: x = (μ_y + σ·N(0,1))
//     / √(1+σ²) per entry with class means μ ~ N(0,1) and σ =
//     DefaultSpec.Noise, so features alone predict labels poorly and
//     aggregation over neighbours helps.
//   - The split is random: 10% train, 10% valid, 80% test.
//
// Everything is deterministic from seed.
func AttachSyntheticFeatures(ds *Dataset, dim, classes int, seed uint64) error {
	if ds == nil || ds.Graph == nil {
		return fmt.Errorf("synthetic features: dataset has no graph")
	}
	n := ds.NumNodes()
	switch {
	case n < 1:
		return fmt.Errorf("synthetic features: graph has no nodes")
	case dim < 1:
		return fmt.Errorf("synthetic features: dimension %d, want ≥ 1", dim)
	case classes < 1 || classes > min(n, MaxClasses):
		return fmt.Errorf("synthetic features: %d classes, want 1..%d (nodes, at most %d)", classes, n, MaxClasses)
	case ds.Graph.NumCols != n:
		return fmt.Errorf("synthetic features: adjacency is %d×%d, not square", n, ds.Graph.NumCols)
	}
	if err := sysmem.Check(int64(n)*int64(dim)*4, fmt.Sprintf("synthetic features: %d×%d", n, dim)); err != nil {
		return err
	}
	labels := synthLabels(ds.Graph, classes, seed)
	ds.Labels = labels
	ds.NumClasses = classes
	ds.FeatDim = dim
	ds.Features = DenseX(genFeatures(labels, classes, dim, defaultSpec().Noise, seed, 0), n, dim)
	ds.Train, ds.Valid, ds.Test = genSplit(n, synthTrain, synthValid, synthTest, seed)
	return nil
}

// synthLabels grows BFS regions from random sources; see
// AttachSyntheticFeatures.
func synthLabels(g *CSR, classes int, seed uint64) []int32 {
	n := g.NumRows
	r := rand.New(genStream(seed, genPhaseLabels, 0))
	labels := make([]int32, n)
	for v := range labels {
		labels[v] = -1
	}
	// Distinct sources: the first k entries of a partial Fisher–Yates shuffle.
	k := min(n, synthSeedsPerClass*classes)
	perm := make(map[int]int, 2*k) // sparse permutation: index → value where moved
	at := func(i int) int {
		if p, ok := perm[i]; ok {
			return p
		}
		return i
	}
	queue := make([]int32, 0, n)
	for i := 0; i < k; i++ {
		j := i + r.IntN(n-i)
		vi, vj := at(i), at(j)
		perm[i], perm[j] = vj, vi
		labels[vj] = int32(i % classes)
		queue = append(queue, int32(vj))
	}
	t := g.Transpose() // out-neighbours, so regions grow along either direction
	queue = synthBFS(g, t, labels, queue)
	for v := 0; v < n; v++ {
		if labels[v] < 0 {
			labels[v] = int32(r.IntN(classes))
			queue = synthBFS(g, t, labels, append(queue[:0], int32(v)))
		}
	}
	return labels
}

// synthBFS runs a multi-source breadth-first search from the labelled nodes
// in queue over the rows of g and t, labelling every unlabelled node reached
// with its discoverer's label. It returns the queue for reuse.
func synthBFS(g, t *CSR, labels []int32, queue []int32) []int32 {
	for head := 0; head < len(queue); head++ {
		v := queue[head]
		for _, m := range []*CSR{g, t} {
			for _, u := range m.Idx[m.Ptr[v]:m.Ptr[v+1]] {
				if labels[u] < 0 {
					labels[u] = labels[v]
					queue = append(queue, u)
				}
			}
		}
	}
	return queue
}

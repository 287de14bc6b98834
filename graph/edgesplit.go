package graph

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/supergcn/supergcn/internal/field"
)

// EdgeSplit holds the edges of a link-prediction split as pairs (u, v)
// (u < v for a random split; as given for split files): Train stays in
// the graph, Valid and Test were removed from it (both directions).
type EdgeSplit struct {
	Train, Valid, Test [][2]int32
	// The fixed negatives of Valid (index 0) and Test (1), as split files
	// give them: Neg, pairs scored against every positive of the part
	// (OGB's edge_neg), or TargetNeg, NegK negative targets per positive
	// (u, v), scored as (u, w) (OGB's target_node_neg; row-major). None:
	// the task draws them.
	Neg       [2][][2]int32
	TargetNeg [2][]int32
	NegK      [2]int
}

// SplitEdges splits the undirected edges of ds's symmetric graph at
// random (spec random:TRAIN,VALID[,TEST][:SEED], the fractions of the
// edges, as ParseSplit's) and removes the validation and test edges from
// ds.Graph in both directions, so message passing never sees them. Each
// edge is counted once (u < v); the split depends on the seed only.
// Fractions summing to less than 1 leave the other edges in the graph,
// for message passing only.
func SplitEdges(ds *Dataset, spec string) (*EdgeSplit, error) {
	r, err := ParseEdgeSplit(spec)
	if err != nil {
		return nil, err
	}
	g := ds.Graph
	var pairs [][2]int32
	for v := range g.NumRows {
		for _, u := range g.Idx[g.Ptr[v]:g.Ptr[v+1]] {
			if u < int32(v) {
				pairs = append(pairs, [2]int32{u, int32(v)})
			}
		}
	}
	rng := rand.New(rand.NewPCG(r.Seed, 0xed6e))
	rng.Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })
	nt := int(r.Train * float64(len(pairs)))
	nv := int(r.Valid * float64(len(pairs)))
	nx := len(pairs) - nt - nv // fractions summing to 1: the rest
	if r.Train+r.Valid+r.Test < 1-1e-9 {
		nx = min(nx, int(r.Test*float64(len(pairs))))
	}
	es := &EdgeSplit{Train: pairs[:nt], Valid: pairs[nt : nt+nv], Test: pairs[nt+nv : nt+nv+nx]}
	for _, p := range [][][2]int32{es.Train, es.Valid, es.Test} {
		slices.SortFunc(p, func(a, b [2]int32) int {
			if a[0] != b[0] {
				return int(a[0] - b[0])
			}
			return int(a[1] - b[1])
		})
	}
	held := make(map[[2]int32]bool, len(es.Valid)+len(es.Test))
	for _, p := range append(slices.Clone(es.Valid), es.Test...) {
		held[p] = true
	}
	ds.Graph = removeEdges(g, held)
	return es, nil
}

// ParseEdgeSplit reads an edge split spec, random:TRAIN,VALID[,TEST][:SEED]
// (as ParseSplit's random split); the caller names the spec's field.
func ParseEdgeSplit(spec string) (*RandomSplit, error) {
	name, r, err := ParseSplit(spec)
	if err == nil && (name != "" || r == nil) {
		return nil, fmt.Errorf("%q: want random:TRAIN,VALID[,TEST][:SEED]", spec)
	}
	var fe *field.Error
	if errors.As(err, &fe) {
		return nil, fe.Err
	}
	return r, err
}

// removeEdges returns g without the edges u→v and v→u of the pairs held.
func removeEdges(g *CSR, held map[[2]int32]bool) *CSR {
	out := &CSR{NumRows: g.NumRows, NumCols: g.NumCols, Ptr: make([]int64, g.NumRows+1)}
	for v := range g.NumRows {
		for k := g.Ptr[v]; k < g.Ptr[v+1]; k++ {
			u := g.Idx[k]
			if held[[2]int32{min(u, int32(v)), max(u, int32(v))}] {
				continue
			}
			out.Idx = append(out.Idx, u)
			if g.Val != nil {
				out.Val = append(out.Val, g.Val[k])
			}
		}
		out.Ptr[v+1] = int64(len(out.Idx))
	}
	return out
}

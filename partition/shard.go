// Package partition splits a graph into parts (METIS, ParMETIS, random), keeps
// them on disk, and hands each MPI rank its Shard.
package partition

import "github.com/supergcn/supergcn/graph"

// Shard is everything one rank holds of a partitioned dataset: its owned
// nodes with their features, labels and split, the edges among them, and the
// in-edges that arrive from nodes owned by other ranks (cut edges).
type Shard struct {
	Rank, Ranks    int
	NumGlobalNodes int64
	Global         []int64 // global ids of owned nodes, ascending as split or loaded (Reorder permutes them); local id = index

	FeatDim    int
	Features   graph.Features // len(Global)×FeatDim in one storage kind (graph/featstore.go); none when FeatDim is 0
	Labels     []int32        // -1 = unlabelled
	NumClasses int
	Split      []uint8 // graph.InTrain|InValid|InTest bits

	// Local: square CSR over local ids; row v = in-neighbours of v owned here.
	// Local.Val holds the edge weights of a weighted graph (nil: unweighted).
	Local *graph.CSR
	// Remote: in-edges of owned nodes whose source lives on another rank.
	Remote RemoteEdges
}

// RemoteEdges lists cut in-edges u→v grouped by destination v (local id):
// edges of v are k in [Ptr[v], Ptr[v+1]), with source global id Src[k] owned
// by rank Owner[k] (never the shard's own rank) and weight Val[k]. Val is
// set exactly when the shard is weighted (Local.Val != nil).
type RemoteEdges struct {
	Ptr   []int64
	Src   []int64
	Owner []int32
	Val   []float32
}

// Weighted reports whether the shard carries edge weights.
func (s *Shard) Weighted() bool { return s.Local != nil && s.Local.Val != nil }

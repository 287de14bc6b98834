package train

import (
	"fmt"
	"math"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/mix"
	"github.com/supergcn/supergcn/partition"
)

// DataIdentity fingerprints the whole dataset that shard s is one rank's
// part of: every node's global id, label, split bits and feature row, and
// every edge (destination, source, weight). It is a collective (one
// all-reduce) and gives the same string on every rank, for any number of
// ranks and any partitioning of the same data, so a checkpoint can tell
// whether a run trains on the data it was written from.
func DataIdentity(s *partition.Shard, c comm.Comm) (string, error) {
	var nodes, edges uint64 // wrapping sums of per-node and per-edge hashes
	x := s.Features.Layout()
	for v, g := range s.Global {
		h := mix.Mix64(uint64(g) + 0x51ed27)
		if s.Labels != nil {
			h = mix.Mix64(h ^ uint64(uint32(s.Labels[v])))
		}
		if s.Split != nil {
			h = mix.Mix64(h ^ uint64(s.Split[v])<<40)
		}
		if s.FeatDim > 0 {
			h = mix.Mix64(h ^ rowHash(x, v))
		}
		nodes += h
		if s.Local != nil {
			for k := s.Local.Ptr[v]; k < s.Local.Ptr[v+1]; k++ {
				e := edgeHash(g, s.Global[s.Local.Idx[k]])
				if s.Local.Val != nil {
					e = mix.Mix64(e ^ uint64(math.Float32bits(s.Local.Val[k])))
				}
				edges += e
			}
		}
		if len(s.Remote.Ptr) > v+1 {
			for k := s.Remote.Ptr[v]; k < s.Remote.Ptr[v+1]; k++ {
				e := edgeHash(g, s.Remote.Src[k])
				if s.Remote.Val != nil {
					e = mix.Mix64(e ^ uint64(math.Float32bits(s.Remote.Val[k])))
				}
				edges += e
			}
		}
	}
	// Sum the two 64-bit values over ranks exactly, modulo 2^64: in 16-bit
	// lanes, which no realistic rank count can overflow in an int64.
	lanes := make([]int64, 8)
	for i := 0; i < 4; i++ {
		lanes[i] = int64(nodes >> (16 * i) & 0xffff)
		lanes[4+i] = int64(edges >> (16 * i) & 0xffff)
	}
	if err := c.AllreduceSumI64(lanes); err != nil {
		return "", err
	}
	nodes, edges = 0, 0
	for i := 0; i < 4; i++ {
		nodes += uint64(lanes[i]) << (16 * i)
		edges += uint64(lanes[4+i]) << (16 * i)
	}
	id := mix.Mix64(mix.Mix64(nodes^uint64(s.NumGlobalNodes)) ^ edges ^ uint64(s.FeatDim)<<48 ^ uint64(s.NumClasses)<<32)
	return fmt.Sprintf("%016x", id), nil
}

// edgeHash hashes the edge dst ← src: the two ids packed into one word
// while both fit 32 bits (the form checkpoints have always recorded), and
// chained through two hashes past that, so that no bits of large ids fold
// onto each other.
func edgeHash(dst, src int64) uint64 {
	if uint64(dst)|uint64(src) < 1<<32 {
		return mix.Mix64(uint64(dst)<<32 | uint64(src))
	}
	return mix.Mix64(mix.Mix64(uint64(dst)^0x6c8e9cf570932bd5) ^ uint64(src))
}

// rowHash hashes row v of the features: the values of dense rows, the
// non-zeros with their columns of sparse ones (a sparse run has its own
// identity).
func rowHash(x graph.FeatureLayout, v int) uint64 {
	if x.Sparse() {
		f, val := uint64(0x84222325cbf29ce4), x.RowVal(v)
		for k, j := range x.RowIdx(v) {
			f = (f ^ uint64(j)<<32 ^ uint64(math.Float32bits(val[k]))) * 0x100000001b3
		}
		return f
	}
	f := uint64(0xcbf29ce484222325)
	for _, e := range x.RowVal(v) {
		f = (f ^ uint64(math.Float32bits(e))) * 0x100000001b3
	}
	return f
}

package exchange

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
)

// BenchmarkForwardBackward: one GCN forward and backward of width 64 at
// P ranks (goroutines) on a 20k-node random graph with block owners.
func BenchmarkForwardBackward(b *testing.B) {
	const n, w = 20000, 64
	rng := rand.New(rand.NewPCG(1, 1))
	ds := randomDataset(rng, n, 8, 0)
	for _, p := range []int{1, 4} {
		owner := ownerKinds(rng, n, 0, max(p, 2))["blocks"]
		if p == 1 {
			owner = make([]int32, n)
		}
		for _, mode := range allModes {
			b.Run(fmt.Sprintf("P=%d/%s", p, mode), func(b *testing.B) {
				var once sync.Once
				err := comm.RunGroup(p, func(c comm.Comm) error {
					return benchRank(b, &once, c, ds, owner, p, w, Options{Mode: mode})
				})
				if err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

// BenchmarkTwoLevelForwardBackward: GCN forward and backward of width 64 at
// 8 goroutine ranks on 2 emulated nodes of 4, flat against two-level (the
// in-process transport costs a copy, so this weighs the extra stages' CPU
// work, not the network).
func BenchmarkTwoLevelForwardBackward(b *testing.B) {
	const n, w, p = 20000, 64, 8
	rng := rand.New(rand.NewPCG(1, 1))
	ds := randomDataset(rng, n, 8, 0)
	owner := ownerKinds(rng, n, 0, p)["blocks"]
	for _, exch := range []string{ExchangeFlat, ExchangeTwoLevel, ExchangeTwoLevelPaired} {
		b.Run(exch, func(b *testing.B) {
			var once sync.Once
			err := comm.RunGroupNodes(p, 4, func(c comm.Comm) error {
				return benchRank(b, &once, c, ds, owner, p, w, Options{Exchange: exch})
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}

// benchRank is one rank's part of a forward+backward benchmark: it builds
// the GCN propagator of its shard with o, waits for every rank, restarts
// b's timer (once for all ranks) and runs b.N forward and backward passes
// of width w.
func benchRank(b *testing.B, once *sync.Once, c comm.Comm, ds *graph.Dataset, owner []int32, p, w int, o Options) error {
	s := partition.Split(ds, owner, c.Rank(), p)
	prop, err := New(s, c, testEngine(), nn.OpGCN, o)
	if err != nil {
		return err
	}
	x, out := dense.New(len(s.Global), w), dense.New(len(s.Global), w)
	if err := c.Barrier(); err != nil {
		return err
	}
	once.Do(b.ResetTimer)
	for i := 0; i < b.N; i++ {
		if err := prop.Forward(nn.Pass{}, x, out); err != nil {
			return err
		}
		if err := prop.Backward(nn.Pass{}, out, x); err != nil {
			return err
		}
	}
	return nil
}

package exchange

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
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
					s := partition.Split(ds, owner, c.Rank(), p)
					prop, err := New(s, c, testEngine(), nn.OpGCN, Options{Mode: mode})
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
				s := partition.Split(ds, owner, c.Rank(), p)
				prop, err := New(s, c, testEngine(), nn.OpGCN, Options{Exchange: exch})
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
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}

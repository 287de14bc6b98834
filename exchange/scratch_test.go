package exchange

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
)

// lendCounter is an nn.Scratch that lends fresh NaN-filled buffers (a
// product that read one before writing it would show) and counts the
// buffers taken and not yet given back; safe for goroutine ranks.
type lendCounter struct {
	mu         sync.Mutex
	taken, out int
}

func (l *lendCounter) Take(rows, cols int) *dense.Matrix {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.taken++
	l.out++
	m := dense.New(rows, cols)
	for i := range m.Data {
		m.Data[i] = float32(math.NaN())
	}
	return m
}

func (l *lendCounter) Give(*dense.Matrix) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.out--
}

// sameBits fails unless got and want are equal bit for bit.
func sameBits(t *testing.T, what string, got, want *dense.Matrix) {
	t.Helper()
	for i := range want.Data {
		if math.Float32bits(got.Data[i]) != math.Float32bits(want.Data[i]) {
			t.Fatalf("%s: element %d = %v, want %v", what, i, got.Data[i], want.Data[i])
		}
	}
}

// The row scalings copied into buffers borrowed from Pass.Scratch (the Model's
// pool), or applied in place to an input marked Pass.Consume, give the
// products of the Propagator's own buffers bit for bit (forward and
// backward), flat and two-level,
// on one and several ranks; every borrowed buffer is given back before the
// call returns, and kinds without a scaling borrow nothing.
func TestScratchAndConsumeSameProducts(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const n, w = 120, 6
	ds := randomDataset(rng, n, 4, 0)
	x := randomMatrix(rng, n, w)
	for _, kind := range allKinds {
		for _, c := range []struct {
			p, perNode int
			exch       string
		}{{1, 1, ExchangeFlat}, {3, 1, ExchangeFlat}, {4, 2, ExchangeTwoLevel}} {
			name := fmt.Sprintf("%s/P=%d/%s", kind, c.p, c.exch)
			owner := partition.Random(n, c.p, 5)
			o := Options{Exchange: c.exch}
			wantF, wantB, err := gatheredNodes(ds, owner, c.p, c.perNode, kind, o, c.exch, nn.Pass{}, x)
			if err != nil {
				t.Fatal(err)
			}
			lc := &lendCounter{}
			gotF, gotB, err := gatheredNodes(ds, owner, c.p, c.perNode, kind, o, c.exch, nn.Pass{Scratch: lc}, x)
			if err != nil {
				t.Fatal(err)
			}
			sameBits(t, name+" forward with scratch", gotF, wantF)
			sameBits(t, name+" backward with scratch", gotB, wantB)
			if lc.out != 0 || (kind == nn.OpSum) != (lc.taken == 0) {
				t.Fatalf("%s: %d buffers taken, %d not given back", name, lc.taken, lc.out)
			}
			// Consume: each rank's input may be scaled in place.
			consumed, consumedB := dense.New(n, w), dense.New(n, w)
			var mu sync.Mutex
			err = comm.RunGroupNodes(c.p, c.perNode, func(cm comm.Comm) error {
				s := partition.Split(ds, owner, cm.Rank(), c.p)
				prop, err := New(s, cm, testEngine(), kind, Options{Exchange: c.exch})
				if err != nil {
					return err
				}
				xl := rowsOf(x, s.Global)
				orig := slices.Clone(xl.Data)
				out := dense.New(len(s.Global), w)
				if err := prop.Forward(nn.Pass{Consume: true, Scratch: lc}, xl, out); err != nil {
					return err
				}
				if kind == nn.OpSum && !slices.Equal(orig, xl.Data) {
					return fmt.Errorf("rank %d: an unscaled input was modified", cm.Rank())
				}
				gl := rowsOf(x, s.Global)
				gx := dense.New(len(s.Global), w)
				if err := prop.Backward(nn.Pass{Consume: true, Scratch: lc}, gl, gx); err != nil {
					return err
				}
				mu.Lock()
				defer mu.Unlock()
				scatterRows(consumed, out, s.Global)
				scatterRows(consumedB, gx, s.Global)
				return nil
			})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			sameBits(t, name+" forward consuming its input", consumed, wantF)
			sameBits(t, name+" backward consuming its input", consumedB, wantB)
		}
	}
}

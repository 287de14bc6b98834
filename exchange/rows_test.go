package exchange

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/quant"
)

// rowsBlock is the block rank r sends rank q in a MoveRows test: 3r+q+1
// rows (none to itself) of width w, values in [-1, 1) from (r, q).
func rowsBlock(r, q, w int) *dense.Matrix {
	rows := 3*r + q + 1
	if r == q {
		rows = 0
	}
	return randomMatrix(rand.New(rand.NewPCG(uint64(r), uint64(q))), rows, w)
}

// moveRows runs one MoveRows on p in-process ranks (perNode a node) with
// the role codecs of wires (the quantised ones) and returns each rank's
// received blocks (by sender) and statistics.
func moveRows(t *testing.T, p, perNode, w int, wires quant.Wires, m RowMove) ([][]*dense.Matrix, []Stats) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	ds := randomDataset(rng, 60, 3, 0)
	owner := ownerKinds(rng, 60, 0, p)["random"]
	got, stats := make([][]*dense.Matrix, p), make([]Stats, p)
	var mu sync.Mutex
	err := comm.RunGroupNodes(p, perNode, func(c comm.Comm) error {
		var o Options
		for r, wire := range wires {
			if wire.Bits != 0 && !wire.Exact() {
				q, err := wire.NewCodec(1, "")
				if err != nil {
					return err
				}
				o.Codecs[r] = q
			}
		}
		prop, err := New(partition.Split(ds, owner, c.Rank(), p), c, testEngine(), nn.OpSum, o)
		if err != nil {
			return err
		}
		me, send, recv := c.Rank(), []*dense.Matrix{}, []*dense.Matrix{}
		mm := m
		mm.SendOff, mm.RecvOff = make([]int, p+1), make([]int, p+1)
		for q := range p {
			send, recv = append(send, rowsBlock(me, q, w)), append(recv, rowsBlock(q, me, w))
			mm.SendOff[q+1], mm.RecvOff[q+1] = mm.SendOff[q]+send[q].Rows, mm.RecvOff[q]+recv[q].Rows
		}
		mm.Send, mm.Recv = dense.New(mm.SendOff[p], w), dense.New(mm.RecvOff[p], w)
		for q := range p {
			copy(mm.Send.Data[mm.SendOff[q]*w:], send[q].Data)
		}
		if err := prop.MoveRows(mm); err != nil {
			return err
		}
		blocks := make([]*dense.Matrix, p)
		for q := range p {
			blocks[q] = &dense.Matrix{Rows: recv[q].Rows, Cols: w, Data: mm.Recv.Data[mm.RecvOff[q]*w : mm.RecvOff[q+1]*w]}
		}
		mu.Lock()
		got[me], stats[me] = blocks, prop.Stats()
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, stats
}

// TestMoveRows: MoveRows delivers every block; float32 rows bit for bit
// (no codec, an evaluation pass without an Eval codec, or all ranks on one
// node without an Intra codec), quantised ones within one quantisation
// step of their row (the codec's bound, as for the boundary rows) for
// every width and parameter layout; the same bytes on every run, other
// bytes for another stream; RowBytes is all of CommBytes, the codec's
// size of the rows sent to other ranks.
func TestMoveRows(t *testing.T) {
	const p, w = 3, 20
	exact := func(got [][]*dense.Matrix) bool {
		for me := range p {
			for q := range p {
				if !slicesEqual(got[me][q].Data, rowsBlock(q, me, w).Data) {
					return false
				}
			}
		}
		return true
	}
	fwd := RowMove{Pass: nn.Pass{Train: true, Epoch: 3}, Stream: 7, What: "test rows"}
	got, stats := moveRows(t, p, 1, w, quant.Wires{}, fwd)
	if !exact(got) {
		t.Fatal("float32 rows changed on the way")
	}
	for me, st := range stats {
		rows := 0
		for q := range p {
			rows += rowsBlock(me, q, w).Rows
		}
		if st.RowBytes != int64(4*rows*w) || st.CommBytes != st.RowBytes || st.DataBytes != st.RowBytes {
			t.Fatalf("rank %d: %+v for %d float32 rows of %d", me, st, rows, w)
		}
	}
	for _, wire := range []quant.Wire{{Bits: 8}, {Bits: 4}, {Bits: 2}, {Bits: 2, Params: quant.ParamsBF16}, {Bits: 4, Params: quant.ParamsBlock}} {
		t.Run(wire.Name(), func(t *testing.T) {
			wires := quant.Wires{quant.Forward: wire, quant.Backward: wire}
			got, stats := moveRows(t, p, 1, w, wires, fwd)
			for me := range p {
				var bytes int64
				for q := range p {
					checkStep(t, wire, got[me][q], rowsBlock(q, me, w))
					if q != me {
						bytes += wire.Bytes(int64(rowsBlock(me, q, w).Rows), w)
					}
				}
				if st := stats[me]; st.RowBytes != bytes || st.CommBytes != bytes {
					t.Fatalf("rank %d: %+v, want %d bytes", me, st, bytes)
				}
			}
			if exact(got) {
				t.Fatal("quantised rows arrived exact: codec not used")
			}
			again, _ := moveRows(t, p, 1, w, wires, fwd)
			other := fwd
			other.Stream++
			moved, _ := moveRows(t, p, 1, w, wires, other)
			back := fwd
			back.Backward = true
			gradients, _ := moveRows(t, p, 1, w, wires, back)
			for me := range p {
				for q := range p {
					if !slicesEqual(again[me][q].Data, got[me][q].Data) {
						t.Fatalf("rank %d from %d: another run quantised differently", me, q)
					}
				}
			}
			if fmt.Sprint(moved) == fmt.Sprint(got) || fmt.Sprint(gradients) == fmt.Sprint(got) {
				t.Fatal("another stream or direction drew the same rounding")
			}
		})
	}
	int2 := quant.Wires{quant.Forward: {Bits: 2}}
	if got, _ := moveRows(t, p, 1, w, int2, RowMove{Pass: nn.Pass{Epoch: 3}, What: "eval rows"}); !exact(got) {
		t.Fatal("an evaluation pass without an Eval codec quantised its rows")
	}
	got, stats = moveRows(t, p, p, w, int2, fwd)
	if !exact(got) || stats[0].IntraBytes != stats[0].RowBytes || stats[0].RowBytes == 0 {
		t.Fatalf("ranks of one node without an Intra codec: exact %v, %+v", exact(got), stats[0])
	}
}

// checkStep fails unless every value of got is within one quantisation
// step of want's (its row's range over the levels, widened for rounded
// parameters as the quant tests do).
func checkStep(t *testing.T, wire quant.Wire, got, want *dense.Matrix) {
	t.Helper()
	levels := float64(int(1)<<wire.Bits - 1)
	for i := range want.Rows {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range want.Row(i) {
			lo, hi = min(lo, float64(v)), max(hi, float64(v))
		}
		step := (hi-lo)/levels*1.05 + math.Abs(lo)/128
		for j, v := range want.Row(i) {
			if d := math.Abs(float64(got.Row(i)[j] - v)); d > step*(1+1e-5)+1e-6 {
				t.Fatalf("%s row %d col %d: |%g - %g| = %g > step %g", wire.Name(), i, j, got.Row(i)[j], v, d, step)
			}
		}
	}
}

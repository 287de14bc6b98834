package quant_test

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/quant"
)

// TestTestWidthThroughExchange: the test-only width (export_test.go),
// parsed and built like any other, travels through the exchange between
// two nodes. Rows of 0s and 1s (both in every row) quantise exactly at one
// bit (post mode: the rows themselves travel, not sums), so the results equal the float32 exchange's bit for bit, while the
// bytes sent are one bit a value.
func TestTestWidthThroughExchange(t *testing.T) {
	const n, width = 60, 13
	rng := rand.New(rand.NewPCG(3, 4))
	var src, dst []int32
	for v := 0; v < n; v++ {
		for k := 0; k < 3; k++ {
			src, dst = append(src, int32(rng.IntN(n))), append(dst, int32(v))
		}
	}
	ds := &graph.Dataset{Name: "bits", Graph: graph.FromCOO(n, n, src, dst, nil)}
	owner := make([]int32, n)
	for v := range owner {
		owner[v] = int32(v % 2)
	}
	x := dense.New(n, width)
	for i := 0; i < n; i++ {
		for j := 0; j < width; j++ {
			x.Data[i*width+j] = float32(rng.IntN(2))
		}
		x.Data[i*width], x.Data[i*width+1] = 0, 1
	}
	w, err := quant.ParseWire("int1", quant.ParamsBlock)
	if err != nil {
		t.Fatal(err)
	}
	run := func(ws quant.Wires) (out []*dense.Matrix, data int64) {
		var mu sync.Mutex
		out = make([]*dense.Matrix, 2)
		err := comm.RunGroupNodes(2, 1, func(c comm.Comm) error {
			s := partition.Split(ds, owner, c.Rank(), 2)
			cs, err := ws.NewCodecs("test.Wire", 1, "")
			if err != nil {
				return err
			}
			o := exchange.Options{Mode: "post"} // source rows on the wire, not partial sums
			for r, q := range cs {
				if q != nil {
					o.Codecs[r] = q
				}
			}
			e, err := aggr.New(1, "")
			if err != nil {
				return err
			}
			prop, err := exchange.New(s, c, e, nn.OpSum, o)
			if err != nil {
				return err
			}
			xl := dense.New(len(s.Global), width)
			for i, g := range s.Global {
				copy(xl.Data[i*width:(i+1)*width], x.Data[int(g)*width:(int(g)+1)*width])
			}
			y := dense.New(len(s.Global), width)
			if err := prop.Forward(nn.Pass{Train: true}, xl, y); err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			out[c.Rank()] = y
			data += prop.Stats().DataBytes
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out, data
	}
	want, fp32Bytes := run(quant.Wires{})
	got, bitBytes := run(quant.Wires{quant.Forward: w})
	for r := range want {
		for i, v := range want[r].Data {
			if got[r].Data[i] != v {
				t.Fatalf("rank %d value %d = %g, float32 exchange %g", r, i, got[r].Data[i], v)
			}
		}
	}
	rows := fp32Bytes / (4 * width)
	if rows == 0 || bitBytes != rows*((width+7)/8) {
		t.Fatalf("%d rows sent: %d data bytes at one bit, want %d", rows, bitBytes, rows*((width+7)/8))
	}
}

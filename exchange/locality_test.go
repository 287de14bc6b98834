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
	"github.com/supergcn/supergcn/quant"
)

// TestFlatLocalityCodecs: the flat exchange on 2 emulated nodes × 2 ranks
// with an int2 forward codec and no intra-node codec sends the rows of
// same-node pairs as exact float32 and the others quantised. A node whose
// cut edges all come from its own node's ranks gets the float32
// exchange's result bit for bit; nodes with edges from the other node
// differ; the bytes are float32 inside nodes (IntraBytes) and int2 between
// them. With all four ranks on one node no codec runs at all.
func TestFlatLocalityCodecs(t *testing.T) {
	const n, p, perNode, w = 200, 4, 2, 16
	rng := rand.New(rand.NewPCG(21, 22))
	ds := randomDataset(rng, n, 5, 0)
	owner := ownerKinds(rng, n, 0, p)["random"]
	x := randomMatrix(rng, n, w)
	int2 := quant.Wire{Bits: 2}
	type result struct {
		out   *dense.Matrix
		s     *partition.Shard
		stats Stats
		plan  PlanStats
	}
	run := func(perNode int, o Options) []result {
		res := make([]result, p)
		var mu sync.Mutex
		err := comm.RunGroupNodes(p, perNode, func(c comm.Comm) error {
			s := partition.Split(ds, owner, c.Rank(), p)
			oo := o
			if oo.Codecs[quant.Forward] != nil {
				q, err := int2.NewCodec(1, "")
				if err != nil {
					return err
				}
				oo.Codecs[quant.Forward] = q
			}
			prop, err := New(s, c, testEngine(), nn.OpSum, oo)
			if err != nil {
				return err
			}
			out := dense.New(len(s.Global), w)
			if err := prop.Forward(nn.Pass{Train: true}, rowsOf(x, s.Global), out); err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			res[c.Rank()] = result{out, s, prop.Stats(), prop.PlanStats()}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	flat := Options{Mode: "hybrid", Exchange: ExchangeFlat}
	coded := flat
	coded.Codecs[quant.Forward] = FP32{} // replaced by an int2 codec per rank
	want := run(perNode, flat)
	got := run(perNode, coded)
	differ := 0
	for r := range got {
		g, s := got[r], got[r].s
		for v := range s.Global {
			inter := false
			for k := s.Remote.Ptr[v]; k < s.Remote.Ptr[v+1]; k++ {
				inter = inter || int(s.Remote.Owner[k])/perNode != r/perNode
			}
			same := true
			for j := 0; j < w; j++ {
				same = same && g.out.Data[v*w+j] == want[r].out.Data[v*w+j]
			}
			if !inter && !same {
				t.Fatalf("rank %d node %d: only same-node cut edges, yet the result differs from float32's", r, s.Global[v])
			}
			if inter && !same {
				differ++
			}
		}
		var intraRows, interRows int64
		for q, rc := range g.plan.Sent {
			if q/perNode == r/perNode {
				intraRows += rc.Hybrid
			} else {
				interRows += rc.Hybrid
			}
		}
		d, pb := int2.Size(int(interRows), w) // one message per peer: fp32 params, no per-block part
		if g.stats.IntraBytes != 4*w*intraRows || g.stats.CommBytes != g.stats.IntraBytes+int64(d+pb) || intraRows == 0 || interRows == 0 {
			t.Fatalf("rank %d: %d intra and %d inter rows; intra bytes %d, comm bytes %d, want %d and %d",
				r, intraRows, interRows, g.stats.IntraBytes, g.stats.CommBytes, 4*w*intraRows, 4*w*intraRows+int64(d+pb))
		}
		if g.stats.QuantSeconds == 0 {
			t.Errorf("rank %d: no time in the codec", r)
		}
	}
	if differ == 0 {
		t.Fatal("no result quantised: the inter-node rows travelled exact")
	}
	// One node: the int2 codec never runs, the rows are float32.
	want = run(p, flat)
	got = run(p, coded)
	for r := range got {
		if fmt.Sprint(got[r].out.Data) != fmt.Sprint(want[r].out.Data) {
			t.Fatalf("rank %d: one node, int2 forward codec: result differs from float32's", r)
		}
		if st := got[r].stats; st.QuantSeconds != 0 || st.IntraBytes != st.CommBytes || st.ParamBytes != 0 {
			t.Fatalf("rank %d: one node: codec ran (quant %gs, intra %d of %d bytes, params %d)", r, st.QuantSeconds, st.IntraBytes, st.CommBytes, st.ParamBytes)
		}
	}
}

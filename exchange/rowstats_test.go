package exchange

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/quant"
)

// TestReports: ReportRows' totals are the plans' counts summed over the
// ordered pairs, its bytes the wire format's, its per-rank spreads those
// of the same counts; ReportNodes on one node sends nothing between nodes
// and counts its messages per epoch.
func TestReports(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ds := randomDataset(rng, 300, 4, 2)
	const p, width = 4, 10
	owner := ownerKinds(rng, 300, 0, p)["random"]
	dir := filepath.Join(t.TempDir(), "parts")
	if err := partition.Write(dir, ds, owner, p, partition.MetaInfo{Method: "random"}); err != nil {
		t.Fatal(err)
	}
	rep, err := ReportRows(dir, p, p, width, 0, nn.OpGCN, quant.Wire{Bits: quant.ExactBits})
	if err != nil {
		t.Fatal(err)
	}
	var want RowCounts
	sent := make([]int64, p)
	for r := range p {
		splits, err := SplitShard(partition.Split(ds, owner, r, p), ModeHybrid)
		if err != nil {
			t.Fatal(err)
		}
		for q, sp := range splits {
			want = want.Add(sp.Counts)
			sent[q] += sp.Counts.Hybrid
		}
	}
	if rep.Rows != want || rep.Bytes.Hybrid != 4*width*want.Hybrid || rep.FP32Bytes != rep.Bytes.Hybrid || rep.QuantParams != "" {
		t.Errorf("rows %+v bytes %+v, want rows %+v and 4·%d bytes a row", rep.Rows, rep.Bytes, want, width)
	}
	if got, w := rep.PerRank["sent"].Of(ModeHybrid), SpreadOf(sent); got != w {
		t.Errorf("hybrid rows sent per rank %+v, want %+v", got, w)
	}
	q, err := ReportRows(dir, p, p, width, 0, nn.OpGCN, quant.Wire{Bits: 2, Params: quant.ParamsF32})
	if err != nil || q.Rows != want || q.DataBytes+q.ParamBytes != q.Bytes.Hybrid || q.Bytes.Hybrid >= rep.Bytes.Hybrid {
		t.Errorf("2 bits: %v, %+v", err, q)
	}
	nodes, err := ReportNodes(dir, p, p, p, 3, width, quant.Wire{Bits: 2}, quant.Wire{Bits: quant.ExactBits})
	if err != nil {
		t.Fatal(err)
	}
	f := nodes.Exchange[ExchangeFlat]
	if nodes.Nodes != 1 || f.InterRows != 0 || f.InterBytes != 0 || f.MessagesPerEpoch != (f.InterMessages+f.IntraMessages)*2*3 || f.IntraBytes != 4*width*f.IntraRows {
		t.Errorf("one node: %+v", nodes)
	}
	if w := q.Wire(); w != (quant.Wire{Bits: 2, Params: quant.ParamsF32}) || rep.Wire() != (quant.Wire{Bits: quant.ExactBits}) {
		t.Errorf("report wires %v, %v", w, rep.Wire())
	}
	if inter, intra := nodes.Wires(); inter.Bits != 2 || intra.Bits != quant.ExactBits {
		t.Errorf("node report wires %v, %v", inter, intra)
	}
	if s := SpreadOf([]int64{4, 1, 7}); s != (Spread{Min: 1, Avg: 4, Max: 7}) {
		t.Errorf("SpreadOf: %+v", s)
	}
}

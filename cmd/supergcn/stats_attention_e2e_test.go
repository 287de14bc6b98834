package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/internal/testdataset"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/quant"
)

// TestCLIStatsAttentionModels: `stats --heads` counts a GAT layer by
// default and a GATv2 layer with --model gatv2, in the table and in the
// JSON, the bytes exchange.ReportRows gives for that kind (whose agreement
// with the operators' own counts the exchange tests check).
func TestCLIStatsAttentionModels(t *testing.T) {
	cora := testdataset.Dataset(t, "cora")
	pdir := filepath.Join(t.TempDir(), "cora-3")
	if r := run(t, 2*time.Minute, nil, "partition", "--data", cora, "--parts", "3", "--method", "random", "--out", pdir); r.code != 0 {
		t.Fatalf("partitioning: %s", r.stderr)
	}
	for _, c := range []struct {
		args  []string
		model string
		kind  nn.OpKind
	}{
		{nil, "gat", nn.OpAttention},
		{[]string{"--model", "gatv2"}, "gatv2", nn.OpAttentionV2},
	} {
		args := append([]string{"stats", pdir, "--width", "64", "--heads", "8", "--bits", "2"}, c.args...)
		r := run(t, time.Minute, nil, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "attention layer, "+c.model+", 8 heads") {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		r = run(t, time.Minute, nil, append(args, "--json")...)
		var got struct {
			Attention exchange.AttnBytes `json:"attention"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &got); r.code != 0 || err != nil {
			t.Fatalf("%v --json: exit %d, %v\n%s%s", args, r.code, err, r.stdout, r.stderr)
		}
		want, err := exchange.ReportRows(pdir, 3, 3, 64, 8, c.kind, quant.Wire{Bits: 2, Params: quant.ParamsBlock})
		if err != nil {
			t.Fatal(err)
		}
		a, w := got.Attention, want.Attention
		if a.Model != c.model || a.Forward != w.Forward || a.Backward != w.Backward || a.Scalars != w.Scalars {
			t.Errorf("%v: attention %+v, ReportRows says %+v", args, a, *w)
		}
	}
}

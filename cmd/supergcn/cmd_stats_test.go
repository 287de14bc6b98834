package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/quant"
	"github.com/supergcn/supergcn/task"
)

// statsDataset writes a random 4-part partition of a 400-node graph with
// 6 features and returns its directory and the dataset.
func statsDataset(t *testing.T) (string, *graph.Dataset, []int32) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	const n, parts = 400, 4
	var src, dst []int32
	for k := 0; k < 3*n; k++ {
		src = append(src, int32(rng.IntN(n)))
		dst = append(dst, int32(rng.IntN(n)))
	}
	ds := &graph.Dataset{Name: "rand", Graph: graph.FromCOO(n, n, src, dst, nil), FeatDim: 6,
		Features: graph.DenseX(make([]float32, n*6), n, 6), Labels: make([]int32, n), NumClasses: 2, Train: []int32{0, 1}}
	owner := partition.Random(n, parts, 7)
	dir := filepath.Join(t.TempDir(), "p")
	if err := partition.Write(dir, ds, owner, parts, partition.MetaInfo{Method: "random"}); err != nil {
		t.Fatal(err)
	}
	return dir, ds, owner
}

// TestStatsJSON: the totals equal the plan counts of every rank of an
// in-memory split, for one part per rank and for two parts per rank.
func TestStatsJSON(t *testing.T) {
	dir, ds, owner := statsDataset(t)
	for _, ranks := range []int{4, 2} {
		var out bytes.Buffer
		args := []string{dir, "--json"}
		if ranks == 2 {
			args = []string{"--ranks", "2", "--width", "10", "--json", dir}
		}
		if err := cmdStats(args, &out); err != nil {
			t.Fatal(err)
		}
		var rep exchange.RowReport
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		var want exchange.RowCounts
		ownerR := make([]int32, len(owner))
		for v, p := range owner {
			ownerR[v] = p / int32(4/ranks)
		}
		for r := 0; r < ranks; r++ {
			splits, err := exchange.SplitShard(partition.Split(ds, ownerR, r, ranks), exchange.ModeHybrid)
			if err != nil {
				t.Fatal(err)
			}
			for _, sp := range splits {
				want = want.Add(sp.Counts)
			}
		}
		if rep.Rows != want || want.Pre == 0 {
			t.Fatalf("ranks %d: rows %+v, want %+v", ranks, rep.Rows, want)
		}
		if rep.Rows.Hybrid > min(rep.Rows.Pre, rep.Rows.Post) {
			t.Fatalf("hybrid %d above min(pre, post)", rep.Rows.Hybrid)
		}
		wantWidth := 6
		if ranks == 2 {
			wantWidth = 10
		}
		if rep.Width != wantWidth || rep.Bytes.Post != rep.Rows.Post*4*int64(wantWidth) {
			t.Fatalf("width %d, bytes %+v", rep.Width, rep.Bytes)
		}
		if rep.Bits != 32 || rep.DataBytes != rep.Bytes.Hybrid || rep.ParamBytes != 0 || rep.FP32Bytes != rep.Bytes.Hybrid {
			t.Fatalf("fp32: bits %d, data %d + param %d, fp32 %d, bytes %+v", rep.Bits, rep.DataBytes, rep.ParamBytes, rep.FP32Bytes, rep.Bytes)
		}
		if s := rep.PerRank["sent"].Hybrid; s.Min > s.Max || float64(s.Max)*float64(ranks) < float64(rep.Rows.Hybrid) {
			t.Fatalf("per-rank sent %+v for total %d", s, rep.Rows.Hybrid)
		}
	}
}

// TestStatsBits: quantised byte counts follow the wire format, row by row:
// ⌈width·bits/8⌉ data bytes and 8 (fp32) or 4 (bf16) parameter bytes, for
// every mode; the rows do not change with the format.
func TestStatsBits(t *testing.T) {
	dir, _, _ := statsDataset(t)
	const width = 10
	run := func(args ...string) exchange.RowReport {
		t.Helper()
		var out bytes.Buffer
		if err := cmdStats(append([]string{dir, "--json", "--width", "10"}, args...), &out); err != nil {
			t.Fatal(err)
		}
		var rep exchange.RowReport
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		return rep
	}
	fp32 := run()
	for _, c := range []struct {
		args        []string
		bits        int
		params      string
		data, param int64 // per row (block: plus 4 bytes per block of 64 rows of a message)
	}{
		{[]string{"--bits", "2", "--quant-params", "fp32"}, 2, "fp32", 3, 8}, // 20 bits → 3 bytes
		{[]string{"--bits", "2", "--quant-params", "bf16"}, 2, "bf16", 3, 4},
		{[]string{"--bits", "2"}, 2, "block", 3, 3},
		{[]string{"--bits", "4", "--quant-params", "fp32"}, 4, "fp32", 5, 8},
		{[]string{"--bits", "8", "--quant-params", "bf16"}, 8, "bf16", 10, 4},
		{[]string{"--bits", "32"}, 32, "", 4 * width, 0},
	} {
		rep := run(c.args...)
		h := rep.Rows.Hybrid
		if rep.Rows != fp32.Rows || h == 0 {
			t.Fatalf("%q: rows %+v, fp32 rows %+v", c.args, rep.Rows, fp32.Rows)
		}
		block := c.params == "block"
		perRow := float64(c.data + c.param)
		if block {
			perRow += 4.0 / 64
		}
		if rep.Bits != c.bits || rep.QuantParams != c.params || rep.BytesPerRow != perRow {
			t.Errorf("%q: bits %d params %q, %g bytes/row; want %d %q %g", c.args, rep.Bits, rep.QuantParams, rep.BytesPerRow, c.bits, c.params, perRow)
		}
		// Block bases: at least one per message (pair), at most one per 64 rows more.
		bases := func(rows int64) (lo, hi int64) {
			if !block {
				return 0, 0
			}
			return 4 * int64(rep.Pairs), 4 * (int64(rep.Pairs) + rows/64)
		}
		lo, hi := bases(h)
		if rep.DataBytes != h*c.data || rep.ParamBytes < h*c.param+lo || rep.ParamBytes > h*c.param+hi || rep.Bytes.Hybrid != rep.DataBytes+rep.ParamBytes {
			t.Errorf("%q: hybrid data %d + param %d = %d for %d rows", c.args, rep.DataBytes, rep.ParamBytes, rep.Bytes.Hybrid, h)
		}
		for _, m := range []exchange.Mode{exchange.ModePre, exchange.ModePost} {
			rows := rep.Rows.Of(m)
			lo, hi := bases(rows)
			if b := rep.Bytes.Of(m); b < rows*(c.data+c.param)+lo || b > rows*(c.data+c.param)+hi {
				t.Errorf("%q: %s bytes %d for %d rows", c.args, m, b, rows)
			}
		}
		if rep.FP32Bytes != fp32.Bytes.Hybrid || rep.FP32Bytes != h*4*width {
			t.Errorf("%q: fp32 bytes %d, want %d", c.args, rep.FP32Bytes, h*4*width)
		}
	}
	var out bytes.Buffer
	if err := cmdStats([]string{dir, "--width", "128", "--bits", "2", "--quant-params", "bf16"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"int2 (bf16 params)", "36 bytes/row: 32 data + 4 params", "14.22x fewer"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

func TestStatsTableAndErrors(t *testing.T) {
	dir, _, _ := statsDataset(t)
	var out bytes.Buffer
	if err := cmdStats([]string{dir}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pre", "post", "hybrid", "4 parts on 4 ranks", "24 bytes/row"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	for _, args := range [][]string{{}, {dir, "extra"}, {dir, "--ranks", "3"}, {dir, "--width", "-1"},
		{dir, "--bits", "3"}, {dir, "--bits", "16"}, {dir, "--half-params"}, {dir, "--bits", "2", "--quant-params", "fp16"}, {filepath.Join(dir, "none")}} {
		if err := cmdStats(args, &out); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}

// TestStatsRanksPerNode: with --ranks-per-node the flat inter-node rows
// are the hybrid rows of the rank pairs on different nodes, two-level
// sends no more, and one node moves nothing between nodes; bad values are
// refused.
func TestStatsRanksPerNode(t *testing.T) {
	dir, ds, owner := statsDataset(t)
	for _, perNode := range []int{1, 2, 4} {
		var out bytes.Buffer
		if err := cmdStats([]string{dir, "--ranks-per-node", fmt.Sprint(perNode), "--json", "--bits", "2"}, &out); err != nil {
			t.Fatal(err)
		}
		var rep exchange.NodeReport
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		var want int64
		for r := 0; r < 4; r++ {
			splits, err := exchange.SplitShard(partition.Split(ds, owner, r, 4), exchange.ModeHybrid)
			if err != nil {
				t.Fatal(err)
			}
			for q, sp := range splits {
				if q/perNode != r/perNode {
					want += sp.Counts.Hybrid
				}
			}
		}
		if rep.Exchange[exchange.ExchangeFlat].InterRows != want || rep.Exchange[exchange.ExchangeTwoLevel].InterRows > want || rep.Nodes != 4/perNode {
			t.Fatalf("perNode %d: inter rows flat %d (want %d), two-level %d, nodes %d", perNode, rep.Exchange[exchange.ExchangeFlat].InterRows, want, rep.Exchange[exchange.ExchangeTwoLevel].InterRows, rep.Nodes)
		}
		if perNode == 4 && (rep.Exchange[exchange.ExchangeFlat].InterRows != 0 || rep.Exchange[exchange.ExchangeTwoLevel].InterBytes != 0) {
			t.Fatalf("one node: %+v", rep)
		}
		if perNode == 2 && (rep.Exchange[exchange.ExchangeTwoLevel].InterRows >= rep.Exchange[exchange.ExchangeFlat].InterRows || rep.Exchange[exchange.ExchangeFlat].MessagesPerEpoch != (rep.Exchange[exchange.ExchangeFlat].InterMessages+rep.Exchange[exchange.ExchangeFlat].IntraMessages)*4) {
			t.Fatalf("2 per node: %+v", rep)
		}
		if rep.Exchange[exchange.ExchangeFlat].IntraBytes != 4*int64(rep.Width)*rep.Exchange[exchange.ExchangeFlat].IntraRows || rep.IntraBits != 32 {
			t.Fatalf("perNode %d: flat intra bytes %d for %d fp32 rows", perNode, rep.Exchange[exchange.ExchangeFlat].IntraBytes, rep.Exchange[exchange.ExchangeFlat].IntraRows)
		}
		if perNode > 1 { // --intra-bits 2: the same rows at int2 inside the nodes
			var q exchange.NodeReport
			out.Reset()
			if err := cmdStats([]string{dir, "--ranks-per-node", fmt.Sprint(perNode), "--json", "--bits", "2", "--intra-bits", "int2"}, &out); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(out.Bytes(), &q); err != nil {
				t.Fatal(err)
			}
			if q.IntraBits != 2 || q.Exchange[exchange.ExchangeFlat].IntraRows != rep.Exchange[exchange.ExchangeFlat].IntraRows || !(q.Exchange[exchange.ExchangeFlat].IntraBytes < rep.Exchange[exchange.ExchangeFlat].IntraBytes/4) || q.Exchange[exchange.ExchangeFlat].InterBytes != rep.Exchange[exchange.ExchangeFlat].InterBytes {
				t.Fatalf("perNode %d, --intra-bits 2: %+v, fp32 inside nodes %+v", perNode, q.Exchange[exchange.ExchangeFlat], rep.Exchange[exchange.ExchangeFlat])
			}
		}
		out.Reset()
		if err := cmdStats([]string{dir, "--ranks-per-node", fmt.Sprint(perNode)}, &out); err != nil || !strings.Contains(out.String(), "two-level") {
			t.Fatalf("table: %v\n%s", err, out.String())
		}
	}
	for _, bad := range [][]string{{dir, "--ranks-per-node", "-1"}, {dir, "--ranks-per-node", "3"}, {dir, "--ranks-per-node", "2", "--layers", "0"}, {dir, "--ranks-per-node", "2", "--intra-bits", "3"}} {
		if err := cmdStats(bad, &bytes.Buffer{}); err == nil {
			t.Fatalf("%v accepted", bad)
		}
	}
}

// TestStatsLinkPairs: with --edge-split, the "link" object is the pair
// exchange that task.PairVolumes counts on the split of the partitioned
// graph with the directory's owners, at one part a rank and two; bad link
// flags are one line naming the flag.
func TestStatsLinkPairs(t *testing.T) {
	dir, ds, owner := statsDataset(t)
	g := ds.Graph
	for v := range g.NumRows { // the directory's rows are sorted
		slices.Sort(g.Idx[g.Ptr[v]:g.Ptr[v+1]])
	}
	es, err := graph.SplitEdges(&graph.Dataset{Graph: g}, "random:0.8,0.1,0.1:5")
	if err != nil {
		t.Fatal(err)
	}
	for _, ranks := range []int{4, 2} {
		var out bytes.Buffer
		args := []string{dir, "--json", "--ranks", fmt.Sprint(ranks), "--width", "16", "--bits", "2",
			"--edge-split", "random:0.8,0.1,0.1:5", "--neg-ratio", "3", "--seed", "9"}
		if err := cmdStats(args, &out); err != nil {
			t.Fatal(err)
		}
		var got struct {
			Link *task.PairReport `json:"link"`
		}
		if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Link == nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		ownerR := make([]int32, len(owner))
		for v, p := range owner {
			ownerR[v] = p / int32(4/ranks)
		}
		v, err := task.PairVolumes(ownerR, ranks, es, 3, 9)
		if err != nil {
			t.Fatal(err)
		}
		want := v.Report(16, quant.Wire{Bits: 2, Params: quant.ParamsBlock})
		if a, b := fmt.Sprint(*got.Link.Volume, got.Link.TrainBytes, got.Link.EvalBytes), fmt.Sprint(*want.Volume, want.TrainBytes, want.EvalBytes); a != b {
			t.Fatalf("ranks %d: link %s, want %s", ranks, a, b)
		}
	}
	for _, tc := range []struct{ args, want string }{
		{"--edge-split random:2,0", "--edge-split:"},
		{"--edge-split random:0.8,0.1 --neg-ratio 0", "--neg-ratio: 0"},
		{"--edge-split random:0.8,0.1 --ranks-per-node 2", "--edge-split: not with --ranks-per-node"},
	} {
		err := cmdStats(append([]string{dir}, strings.Fields(tc.args)...), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line with %q", tc.args, err, tc.want)
		}
	}
}

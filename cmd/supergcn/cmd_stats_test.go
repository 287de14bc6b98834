package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/partition"
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
		X: make([]float32, n*6), Labels: make([]int32, n), NumClasses: 2, Train: []int32{0, 1}}
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
		var rep statsReport
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
		if s := rep.PerRank["sent"].Hybrid; s.Min > s.Max || float64(s.Max)*float64(ranks) < float64(rep.Rows.Hybrid) {
			t.Fatalf("per-rank sent %+v for total %d", s, rep.Rows.Hybrid)
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
	for _, args := range [][]string{{}, {dir, "extra"}, {dir, "--ranks", "3"}, {dir, "--width", "-1"}, {filepath.Join(dir, "none")}} {
		if err := cmdStats(args, &out); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}

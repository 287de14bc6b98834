package exchange

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/supergcn/supergcn/partition"
)

// TestSplitCutAccountsEveryEdge: in every mode each cut edge is carried
// exactly once, by the post row of its source or inside the partial row of
// its destination; rows match the counts; hybrid ≤ min(pre, post).
func TestSplitCutAccountsEveryEdge(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for trial := 0; trial < 300; trial++ {
		m := rng.IntN(60)
		src, dst := make([]int64, m), make([]int32, m)
		nu, nv := rng.IntN(20)+1, rng.IntN(20)+1
		for k := range src {
			src[k], dst[k] = int64(1000+3*rng.IntN(nu)), int32(rng.IntN(nv))
		}
		var counts RowCounts
		for i, mode := range []Mode{ModePost, ModePre, ModeHybrid} {
			ps := SplitCut(src, dst, mode)
			if i > 0 && ps.Counts != counts {
				t.Fatalf("counts differ between modes: %+v vs %+v", ps.Counts, counts)
			}
			counts = ps.Counts
			if int64(ps.Rows()) != ps.Counts.Of(mode) {
				t.Fatalf("%s: %d rows, counts %+v", mode, ps.Rows(), ps.Counts)
			}
			if c := ps.Counts; c.Hybrid > min(c.Pre, c.Post) {
				t.Fatalf("hybrid %+v", c)
			}
			if !slices.IsSorted(ps.Post) || !slices.IsSorted(ps.Pre) {
				t.Fatalf("%s: rows not ascending", mode)
			}
			checkAccounting(t, mode, src, dst, &ps)
		}
	}
}

// checkAccounting removes every edge from the multiset of what the split
// carries and expects nothing left on either side.
func checkAccounting(t *testing.T, mode Mode, src []int64, dst []int32, ps *PairSplit) {
	t.Helper()
	type edge struct {
		u int64
		v int32
	}
	carried := map[edge]int{}
	for i, v := range ps.Pre {
		for _, u := range ps.PreSrc[ps.PrePtr[i]:ps.PrePtr[i+1]] {
			if _, post := slices.BinarySearch(ps.Post, u); post {
				t.Fatalf("%s: source %d is post but also in the partial row of %d", mode, u, v)
			}
			carried[edge{u, v}]++
		}
	}
	for k, u := range src {
		if _, post := slices.BinarySearch(ps.Post, u); post {
			continue
		}
		e := edge{u, dst[k]}
		if carried[e] == 0 {
			t.Fatalf("%s: edge %d→%d is carried by no row", mode, u, dst[k])
		}
		carried[e]--
	}
	for e, c := range carried {
		if c != 0 {
			t.Fatalf("%s: partial rows carry edge %v %d extra times", mode, e, c)
		}
	}
}

// TestSplitShardMatchesPairs: SplitShard, which splits the pairs
// concurrently, returns for every sender what SplitCutWeighted returns for
// that pair alone, in every mode, on a weighted and an unweighted shard.
func TestSplitShardMatchesPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	const n, p = 400, 7
	for _, weighted := range []bool{false, true} {
		ds := randomDataset(rng, n, 6, 2)
		if weighted {
			ds.Graph.Val = make([]float32, len(ds.Graph.Idx))
			for i := range ds.Graph.Val {
				ds.Graph.Val[i] = 0.5 + rng.Float32()
			}
		}
		owner := ownerKinds(rng, n, 0, p)["random"]
		for r := range p {
			s := partition.Split(ds, owner, r, p)
			cuts, err := GroupCuts(s)
			if err != nil {
				t.Fatal(err)
			}
			for _, mode := range []Mode{ModePost, ModePre, ModeHybrid} {
				got, err := SplitShard(s, mode)
				if err != nil {
					t.Fatal(err)
				}
				for q := range p {
					var want PairSplit
					if len(cuts.Src[q]) > 0 {
						want = SplitCutWeighted(cuts.Src[q], cuts.Dst[q], cuts.weights(q), mode)
					}
					if !reflect.DeepEqual(got[q], want) {
						t.Fatalf("weighted %v, rank %d, mode %v: pair from %d differs from its split alone", weighted, r, mode, q)
					}
				}
			}
		}
	}
}

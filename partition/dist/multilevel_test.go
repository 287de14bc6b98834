package dist

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/partition/metis"
)

// communityGraph writes a generated graph with strong communities.
func communityGraph(t *testing.T, nodes int) (*graph.Dataset, string) {
	t.Helper()
	s := graph.DefaultSpec
	s.Nodes, s.Degree, s.Feat, s.Homophily, s.Communities, s.Classes = nodes, 10, 0, 0.9, 64, 4
	ds, err := graph.Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "g.sgb")
	if err := graph.WriteBinary(path, ds); err != nil {
		t.Fatal(err)
	}
	ds.Graph = graph.Symmetrize(graph.Dedup(graph.RemoveSelfLoops(ds.Graph)))
	return ds, path
}

func TestMultilevelQuick(t *testing.T) {
	ds, path := communityGraph(t, 6000)
	const parts = 8
	ref, err := metis.Metis(ds.Graph, parts, metis.Options{Weights: metis.WeightsDegree})
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := partition.ComputeStats(ds.Graph, ref, parts, nil)
	for p := 1; p <= 4; p++ {
		for _, init := range []InitialPartitioner{metis.PartWeighted, nil} {
			owner := gatherOwners(t, path, p, func(c comm.Comm, g *Graph) ([]int32, error) {
				var log testLog
				o := MultilevelOptions{Seed: 1, CoarseNodes: 500, Initial: init}
				if c.Rank() == 0 {
					o.Log = &log
				}
				own, err := Multilevel(c, g, parts, o)
				if c.Rank() == 0 {
					t.Log(string(log))
				}
				return own, err
			})
			st, err := partition.ComputeStats(ds.Graph, owner, parts, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("P=%d metis=%v: cut %.4f (metis %.4f), imb %.3f", p, init != nil, st.CutFraction, rs.CutFraction, st.EdgeImbalance)
		}
	}
	_ = slices.Equal[[]int32]
	_ = fmt.Sprint
}

type testLog []byte

func (l *testLog) Write(b []byte) (int, error) { *l = append(*l, b...); return len(b), nil }

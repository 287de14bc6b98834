package dist

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/testdataset"
	"github.com/supergcn/supergcn/partition"
)

// gatherOwners runs fn's owners on p ranks and joins them in node order.
func gatherOwners(t *testing.T, path string, p int, fn func(c comm.Comm, g *Graph) ([]int32, error)) []int32 {
	t.Helper()
	res := make([][]int32, p)
	err := comm.RunGroup(p, func(c comm.Comm) error {
		g, err := Read(c, Source{Path: path})
		if err != nil {
			return err
		}
		res[c.Rank()], err = fn(c, g)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var all []int32
	for _, r := range res {
		all = append(all, r...)
	}
	return all
}

func TestLDG(t *testing.T) {
	s := graph.DefaultSpec
	s.Nodes, s.Degree, s.Feat, s.Homophily, s.Communities, s.Classes = 4000, 10, 0, 0.95, 16, 4
	ds, err := graph.Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "g.sgb")
	if err := graph.WriteBinary(path, ds); err != nil {
		t.Fatal(err)
	}
	const parts = 8
	rnd, err := partition.ComputeStats(ds.Graph, partition.Random(ds.NumNodes(), parts, 1), parts, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{1, 2, 4} {
		owner := gatherOwners(t, path, p, func(c comm.Comm, g *Graph) ([]int32, error) {
			return LDG(c, g, parts, LDGOptions{})
		})
		st, err := partition.ComputeStats(ds.Graph, owner, parts, nil) // validates every owner
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("P=%d: ldg cut %.3f, random %.3f, node imbalance %.3f", p, st.CutFraction, rnd.CutFraction, st.NodeImbalance)
		if st.NodeImbalance > 1.2 {
			t.Errorf("P=%d: node imbalance %.3f", p, st.NodeImbalance)
		}
		if st.CutFraction > 0.8*rnd.CutFraction {
			t.Errorf("P=%d: ldg cuts %.3f of the arcs, random %.3f: no better than chance", p, st.CutFraction, rnd.CutFraction)
		}
	}
}

// TestArcLimitForgedHeader: a binary dataset whose header states 2^31
// arcs fails before anything is read, naming the count and the remedy.
// The file is sparse: its sections are laid out for the forged count.
func TestArcLimitForgedHeader(t *testing.T) {
	ds := genDataset(t, 50)
	path := filepath.Join(t.TempDir(), "big.sgb")
	if err := graph.WriteBinary(path, ds); err != nil {
		t.Fatal(err)
	}
	testdataset.ForgeArcCount(t, path, 1<<31)
	err := comm.RunGroup(2, func(c comm.Comm) error {
		_, err := Read(c, Source{Path: path, MaxArcs: 1<<31 - 1, MaxArcsRemedy: "use the ldg method"})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "2147483648 arcs") || !strings.Contains(err.Error(), "use the ldg method") {
		t.Fatalf("got %v, want the arc count and the remedy", err)
	}
}

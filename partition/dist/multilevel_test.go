package dist

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/testdataset"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/partition/metis"
)

// mlCase is a graph to partition: the dataset as the distributed reader
// cleans it, and its binary file.
type mlCase struct {
	ds   *graph.Dataset
	path string
}

// writeCase writes ds as .sgb under a temporary directory.
func writeCase(t *testing.T, ds *graph.Dataset) mlCase {
	t.Helper()
	path := filepath.Join(t.TempDir(), "g.sgb")
	if err := graph.WriteBinary(path, ds); err != nil {
		t.Fatal(err)
	}
	ds.Graph = graph.Symmetrize(graph.Dedup(graph.RemoveSelfLoops(ds.Graph)))
	return mlCase{ds, path}
}

// communityCase is a generated graph with communities, features omitted.
func communityCase(t *testing.T, nodes int) mlCase {
	t.Helper()
	s := graph.DefaultSpec
	s.Nodes, s.Degree, s.Feat, s.Homophily, s.Communities, s.Classes, s.Seed = nodes, 10, 0, 0.9, 64, 4, 5
	ds, err := graph.Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	return writeCase(t, ds)
}

// realCase loads a shared dataset (skipped when absent or in -short).
func realCase(t *testing.T, name, file string) mlCase {
	t.Helper()
	if testing.Short() {
		t.Skip("a real graph: not in -short")
	}
	ds, err := graph.Load(filepath.Join(testdataset.Dataset(t, name), file), graph.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return writeCase(t, ds)
}

// runML partitions the case on p ranks and returns the owners in node order.
func runML(t *testing.T, mc mlCase, p, parts int, o MultilevelOptions) []int32 {
	t.Helper()
	return gatherOwners(t, mc.path, p, func(c comm.Comm, g *Graph) ([]int32, error) {
		return Multilevel(c, g, parts, o)
	})
}

// checkBalance fails when a part's degree+1 weight (or training nodes,
// when the graph has them) exceeds (1+imb) of the average.
func checkBalance(t *testing.T, mc mlCase, owner []int32, parts int, imb float64, what string) {
	t.Helper()
	g := mc.ds.Graph
	deg := make([]float64, parts)
	train := make([]float64, parts)
	var dt, tt float64
	mask := mc.ds.SplitMask()
	for v := 0; v < g.NumRows; v++ {
		d := float64(g.Ptr[v+1] - g.Ptr[v] + 1)
		deg[owner[v]] += d
		dt += d
		if mask != nil && mask[v]&graph.InTrain != 0 {
			train[owner[v]]++
			tt++
		}
	}
	for q := 0; q < parts; q++ {
		if x := deg[q] * float64(parts) / dt; x > 1+imb+1e-9 {
			t.Errorf("%s: part %d's degree weight is %.4f of the average, bound %.2f", what, q, x, 1+imb)
		}
		if tt > 0 {
			if x := train[q] * float64(parts) / tt; x > 1+imb+1e-9 {
				t.Errorf("%s: part %d's training nodes are %.4f of the average, bound %.2f", what, q, x, 1+imb)
			}
		}
	}
}

// serialMetis is METIS's cut fraction of the case (degree and training
// weights); it skips the test in a build without METIS.
func serialMetis(t *testing.T, mc mlCase, parts int) float64 {
	t.Helper()
	if !metis.Linked {
		t.Skip("built without METIS")
	}
	owner, err := metis.Metis(mc.ds.Graph, parts, metis.Options{TrainMask: mc.ds.SplitMask()})
	if err != nil {
		t.Fatal(err)
	}
	return cutFraction(t, mc, owner, parts)
}

func cutFraction(t *testing.T, mc mlCase, owner []int32, parts int) float64 {
	t.Helper()
	st, err := partition.ComputeStats(mc.ds.Graph, owner, parts, nil) // validates every owner
	if err != nil {
		t.Fatal(err)
	}
	return st.CutFraction
}

// TestMultilevelVsMetis: on every rank count 1…8, with several levels, the
// cut stays within 1.15× serial METIS's (METIS partitioning the coarsest
// graph) and every part within the balance bound; the Go fallback stays
// within 1.5× and balanced.
func TestMultilevelVsMetis(t *testing.T) {
	mc := communityCase(t, 6000)
	const parts = 8
	ref := serialMetis(t, mc, parts)
	for p := 1; p <= 8; p++ {
		for _, init := range []InitialPartitioner{metis.PartWeighted, nil} {
			o := MultilevelOptions{Weights: WeightsDegreeTrain, Seed: 3, CoarseNodes: 500, Initial: init}
			bound, what := 1.15, fmt.Sprintf("P=%d METIS", p)
			if init == nil {
				bound, what = 1.5, fmt.Sprintf("P=%d Go", p)
			}
			owner := runML(t, mc, p, parts, o)
			cut := cutFraction(t, mc, owner, parts)
			t.Logf("%s: cut %.4f, serial METIS %.4f (%.3f×)", what, cut, ref, cut/ref)
			if cut > bound*ref {
				t.Errorf("%s: cut %.4f > %.2f × METIS's %.4f", what, cut, bound, ref)
			}
			checkBalance(t, mc, owner, parts, 0.05, what)
		}
	}
}

// TestMultilevelRealGraphs: dblp-2010 and wave into 16 parts on 1…8 ranks:
// cut within 1.15× serial METIS's, parts within the bound.
func TestMultilevelRealGraphs(t *testing.T) {
	for _, d := range []struct{ name, file string }{{"dblp-2010", "edges.txt.gz"}, {"wave", "wave.graph.bz2"}} {
		t.Run(d.name, func(t *testing.T) {
			mc := realCase(t, d.name, d.file)
			const parts = 16
			ref := serialMetis(t, mc, parts)
			for p := 1; p <= 8; p++ {
				o := MultilevelOptions{Seed: 1, Initial: metis.PartWeighted, InitialTries: 2, CoarseNodes: 20000}
				owner := runML(t, mc, p, parts, o)
				cut := cutFraction(t, mc, owner, parts)
				t.Logf("P=%d: cut %.4f, serial METIS %.4f (%.3f×)", p, cut, ref, cut/ref)
				if cut > 1.15*ref {
					t.Errorf("P=%d: cut %.4f > 1.15 × METIS's %.4f", p, cut, ref)
				}
				checkBalance(t, mc, owner, parts, 0.05, fmt.Sprintf("P=%d", p))
			}
		})
	}
}

// TestMultilevelDeterministic: the same seed and rank count give the same
// owners, with METIS and with the Go fallback.
func TestMultilevelDeterministic(t *testing.T) {
	mc := communityCase(t, 3000)
	for _, p := range []int{1, 3, 4} {
		for _, init := range []InitialPartitioner{metis.PartWeighted, nil} {
			o := MultilevelOptions{Seed: 11, CoarseNodes: 300, Initial: init}
			if init != nil && !metis.Linked {
				continue
			}
			a, b := runML(t, mc, p, 6, o), runML(t, mc, p, 6, o)
			if !slices.Equal(a, b) {
				t.Errorf("P=%d METIS=%v: two runs differ", p, init != nil)
			}
		}
	}
}

// TestMultilevelEdgeCases: ranks without nodes, isolated nodes (most of
// the graph), more parts than ranks and nodes, P not a power of two.
func TestMultilevelEdgeCases(t *testing.T) {
	// 40 isolated nodes and a path of 10 (the edge list names node 49).
	var b strings.Builder
	for v := 40; v < 49; v++ {
		fmt.Fprintf(&b, "%d %d\n", v, v+1)
	}
	fmt.Fprintf(&b, "0 0\n") // a self loop: node 0 stays isolated
	path := filepath.Join(t.TempDir(), "iso.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ p, parts int }{{1, 4}, {3, 5}, {7, 16}, {8, 3}, {6, 64}} {
		for _, init := range []InitialPartitioner{metis.PartWeighted, nil} {
			if init != nil && !metis.Linked {
				continue
			}
			o := MultilevelOptions{Weights: WeightsNone, CoarseNodes: 4, Initial: init}
			owner := gatherOwners(t, path, c.p, func(cm comm.Comm, g *Graph) ([]int32, error) {
				return Multilevel(cm, g, c.parts, o)
			})
			if len(owner) != 50 {
				t.Fatalf("P=%d: %d owners for 50 nodes", c.p, len(owner))
			}
			size := make([]int, c.parts)
			for v, q := range owner {
				if q < 0 || int(q) >= c.parts {
					t.Fatalf("P=%d parts=%d: node %d in part %d", c.p, c.parts, v, q)
				}
				size[q]++
			}
			if limit := max(1, int(1.05*50/float64(c.parts))); c.parts <= 50 && slices.Max(size) > limit+1 {
				t.Errorf("P=%d parts=%d METIS=%v: part sizes %v, bound %d", c.p, c.parts, init != nil, size, limit)
			}
		}
	}
}

// TestMultilevelBadInput: bad parts or options are one error on every rank.
func TestMultilevelBadInput(t *testing.T) {
	mc := communityCase(t, 200)
	for _, c := range []struct {
		parts int
		o     MultilevelOptions
		want  string
	}{
		{0, MultilevelOptions{}, "0 parts"},
		{4, MultilevelOptions{Imbalance: -1}, "imbalance -1"},
		{4, MultilevelOptions{Weights: "train"}, `unknown weights "train"`},
		{4, MultilevelOptions{Batches: -2}, "batches -2"},
		{4, MultilevelOptions{Initial: func(xadj, adjncy, adjwgt, vwgt []int32, ncon, parts int, imbalance float64, seed int) ([]int32, error) {
			return make([]int32, len(xadj)-1), nil
		}, CoarseNodes: 500}, ""},
		{4, MultilevelOptions{Initial: func(xadj, adjncy, adjwgt, vwgt []int32, ncon, parts int, imbalance float64, seed int) ([]int32, error) {
			p := make([]int32, len(xadj)-1)
			p[0] = int32(parts)
			return p, nil
		}}, "outside [0,4)"},
	} {
		var mu sync.Mutex
		var errs []error
		gatherOwnersErr(mc.path, 3, func(cm comm.Comm, g *Graph) ([]int32, error) {
			own, err := Multilevel(cm, g, c.parts, c.o)
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
			return own, nil
		})
		for _, err := range errs {
			if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
				t.Errorf("parts %d %+v: got %v, want %q", c.parts, c.o, err, c.want)
			}
		}
	}
}

// gatherOwnersErr runs fn on p ranks of a group, ignoring the owners.
func gatherOwnersErr(path string, p int, fn func(c comm.Comm, g *Graph) ([]int32, error)) error {
	return comm.RunGroup(p, func(c comm.Comm) error {
		g, err := Read(c, Source{Path: path})
		if err != nil {
			return err
		}
		_, err = fn(c, g)
		return err
	})
}

// TestMultilevelForgedArcs: a binary dataset whose header states 2^31 arcs
// is not refused for its count on the multilevel path (no 32-bit limit):
// the read fails on the file's content, one error naming the file.
func TestMultilevelForgedArcs(t *testing.T) {
	ds := genDataset(t, 50)
	path := filepath.Join(t.TempDir(), "big.sgb")
	if err := graph.WriteBinary(path, ds); err != nil {
		t.Fatal(err)
	}
	testdataset.ForgeArcCount(t, path, 1<<31+5)
	err := comm.RunGroup(2, func(c comm.Comm) error {
		g, err := Read(c, Source{Path: path})
		if err != nil {
			return err
		}
		_, err = Multilevel(c, g, 2, MultilevelOptions{})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "32-bit") {
		t.Fatalf("got %v, want an error about the content of %s", err, path)
	}
	t.Log(err)
}

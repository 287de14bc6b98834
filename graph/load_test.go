package graph

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/internal/testdataset"
)

// isSymmetric reports whether g equals its transpose as a multiset of
// entries per row.
func isSymmetric(g *CSR) bool {
	a := &CSR{NumRows: g.NumRows, NumCols: g.NumCols, Ptr: g.Ptr, Idx: slices.Clone(g.Idx)}
	a.SortRows()
	tr := g.Transpose()
	tr.SortRows()
	return slices.Equal(a.Ptr, tr.Ptr) && slices.Equal(a.Idx, tr.Idx)
}

func TestLoadCora(t *testing.T) {
	dir := testdataset.Dataset(t, "cora")
	ds, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g := ds.Graph
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	if ds.Name != "cora" || ds.NumNodes() != 2708 || g.NNZ() != 10556 || ds.FeatDim != 1433 || ds.NumClasses != 7 {
		t.Fatalf("%s: %d nodes, %d edges, %d features, %d classes", ds.Name, ds.NumNodes(), g.NNZ(), ds.FeatDim, ds.NumClasses)
	}
	if len(xd(ds)) != 2708*1433 || len(ds.Labels) != 2708 {
		t.Fatalf("len X %d, len labels %d", len(xd(ds)), len(ds.Labels))
	}
	// Binary bag of words with 49,216 ones (counted with zcat | tr | grep).
	ones := 0
	for _, v := range xd(ds) {
		switch v {
		case 1:
			ones++
		case 0:
		default:
			t.Fatalf("feature value %v", v)
		}
	}
	if ones != 49216 {
		t.Errorf("%d ones in X, want 49216", ones)
	}
	count := make([]int, 7)
	for _, y := range ds.Labels {
		count[y]++
	}
	if !slices.Equal(count, []int{351, 217, 418, 818, 426, 298, 180}) {
		t.Errorf("class sizes %v", count)
	}
	// Planetoid public split: train 0..139, valid 140..639, test 1708..2707.
	for _, c := range []struct {
		ids       []int32
		n, lo, hi int32
	}{{ds.Train, 140, 0, 139}, {ds.Valid, 500, 140, 639}, {ds.Test, 1000, 1708, 2707}} {
		if int32(len(c.ids)) != c.n || c.ids[0] != c.lo || c.ids[len(c.ids)-1] != c.hi || !slices.IsSorted(c.ids) {
			t.Errorf("split part: %d ids from %d to %d, want %d from %d to %d", len(c.ids), c.ids[0], c.ids[len(c.ids)-1], c.n, c.lo, c.hi)
		}
	}
	// edge.csv line 1 is "0,633": row 633 lists source 0.
	if !slices.Contains(g.Idx[g.Ptr[633]:g.Ptr[634]], 0) {
		t.Error("edge 0→633 missing")
	}
	if !isSymmetric(g) {
		t.Error("Cora lists both directions; the loaded graph is not symmetric")
	}
}

func TestLoadDBLP(t *testing.T) {
	p := filepath.Join(testdataset.Dataset(t, "dblp-2010"), "edges.txt.gz")
	if f, err := DetectFormat(p); err != nil || f != "edgelist" {
		t.Fatalf("DetectFormat = %q, %v", f, err)
	}
	ds, err := Load(p, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g := ds.Graph
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	if ds.NumNodes() != 326186 || g.NNZ() != 1615400 || g.Val != nil || ds.FeatDim != 0 || ds.Labels != nil {
		t.Fatalf("%d nodes, %d arcs", ds.NumNodes(), g.NNZ())
	}
	if !isSymmetric(g) {
		t.Error("dblp-2010 is symmetric; the loaded graph is not")
	}
}

func TestLoadWave(t *testing.T) {
	p := filepath.Join(testdataset.Dataset(t, "wave"), "wave.graph.bz2")
	ds, err := Load(p, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g := ds.Graph
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	if ds.Name != "wave" || ds.NumNodes() != 156317 || g.NNZ() != 2*1059331 || g.Val != nil {
		t.Fatalf("%s: %d nodes, %d entries", ds.Name, ds.NumNodes(), g.NNZ())
	}
	if !isSymmetric(g) {
		t.Error("a METIS graph is symmetric; the loaded one is not")
	}
}

func TestDetectFormat(t *testing.T) {
	dir := t.TempDir()
	ogb := makeOGB(t, toyOGB())
	for _, c := range []struct {
		path, want string
	}{
		{ogb, "ogb"},
		{writeFile(t, dir, "bin.sgb", "SGCNBIN\x00junk"), "bin"},
		{writeFile(t, dir, "g.graph.gz", "3 2\n2\n1 3\n2\n"), "metis"},
		{writeFile(t, dir, "g.metis", "2 1\n2\n1\n"), "metis"},
		{writeFile(t, dir, "sniff", "% mesh\n3 2\n2\n1 3\n2\n"), "metis"},
		{writeFile(t, dir, "sniff-fmt.gz", "3 2 1\n2 4\n1 4 3 5\n2 5\n"), "metis"},
		{writeFile(t, dir, "iso", "3 1\n2\n1\n\n"), "metis"},
		{writeFile(t, dir, "pairs.txt", "3 2\n2 1\n1 3\n"), "edgelist"},
		{writeFile(t, dir, "hash.txt", "# c\n3 2\n2\n1 3\n"), "edgelist"},
		{writeFile(t, dir, "csv.txt", "3,2\n2,1\n1,3,5\n"), "edgelist"},
		{writeFile(t, dir, "weighted.txt", "0 1 0.5\n1 2 1\n"), "edgelist"},
	} {
		got, err := DetectFormat(c.path)
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", filepath.Base(c.path), got, err, c.want)
		}
	}
	_, err := DetectFormat(dir)
	wantParseError(t, err, dir, 0, "not an OGB dataset")
}

func TestLoadFormatFlag(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "g.txt", "1 2\n2 1\n")
	_, err := Load(p, LoadOptions{Format: "xml"})
	if err == nil || err.Error() != `graph.LoadOptions.Format: "xml": unknown format (want auto, ogb, npz, edgelist, metis, bin)` {
		t.Errorf("got %v", err)
	}
	// Forcing METIS on a two-column file reads "1 2" as its header.
	_, err = Load(p, LoadOptions{Format: "metis"})
	wantParseError(t, err, p, 2, "field 1: neighbour 2 outside [1,1]")
	if _, err := Load(p, LoadOptions{Format: "ogb"}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("forced ogb on a file: %v", err)
	}
	if _, err := Load(p, LoadOptions{Split: "public"}); err == nil || !strings.Contains(err.Error(), "only OGB directories have named splits") {
		t.Errorf("split on an edge list: %v", err)
	}
}

func TestLoadOverrides(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "g.txt", "0 1\n1 2\n")
	x := writeNpy(t, filepath.Join(dir, "x.npy"), "<f8", "(3, 2)", []float64{1, 2, 3, 4, 5, 6})
	y := writeNpy(t, filepath.Join(dir, "y.npy"), "<i8", "(3,)", []int64{4, -1, 0})
	ds, err := Load(p, LoadOptions{Features: x, Labels: y})
	if err != nil {
		t.Fatal(err)
	}
	if ds.FeatDim != 2 || !slices.Equal(xd(ds), []float32{1, 2, 3, 4, 5, 6}) || !slices.Equal(ds.Labels, []int32{4, -1, 0}) || ds.NumClasses != 5 {
		t.Errorf("X %v labels %v classes %d", xd(ds), ds.Labels, ds.NumClasses)
	}
	bad := writeNpy(t, filepath.Join(dir, "bad.npy"), "<f4", "(2, 2)", []float32{1, 2, 3, 4})
	_, err = Load(p, LoadOptions{Features: bad})
	if err == nil || err.Error() != "graph.LoadOptions.Features: "+bad+": features have shape [2 2], want (3, F)" {
		t.Errorf("got %v", err)
	}
	_, err = Load(p, LoadOptions{Labels: bad})
	if err == nil || err.Error() != "graph.LoadOptions.Labels: "+bad+": labels have shape [2 2], want (3,) or (3, 1)" {
		t.Errorf("got %v", err)
	}
	neg := writeNpy(t, filepath.Join(dir, "neg.npy"), "<i4", "(3,)", []int32{0, -3, 1})
	if _, err = Load(p, LoadOptions{Labels: neg}); err == nil || !strings.Contains(err.Error(), "label 1 is -3") {
		t.Errorf("got %v", err)
	}
	huge := writeNpy(t, filepath.Join(dir, "huge.npy"), "<i8", "(3,)", []int64{0, 1000000000, 1})
	if _, err = Load(p, LoadOptions{Labels: huge}); err == nil || !strings.Contains(err.Error(), "label 1 is 1000000000: at most 65536 classes") {
		t.Errorf("label 10^9: got %v", err)
	}
	// Overriding the labels of an OGB dataset must keep split nodes labelled.
	ogb := makeOGB(t, toyOGB())
	unl := writeNpy(t, filepath.Join(dir, "unl.npy"), "<i4", "(3,)", []int32{0, 0, -1})
	_, err = Load(ogb, LoadOptions{Labels: unl})
	if err == nil || !strings.Contains(err.Error(), "node 2 is in the split but has no label") {
		t.Errorf("got %v", err)
	}
}

// TestLoadBinaryDispatch: a file written by WriteBinary is detected and
// loaded through Load.
func TestLoadBinaryDispatch(t *testing.T) {
	src, err := LoadOGB(makeOGB(t, toyOGB()), "")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "toy.sgb")
	if err := WriteBinary(p, src); err != nil {
		t.Fatal(err)
	}
	ds, err := Load(p, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.NumNodes() != 3 || !slices.Equal(xd(ds), xd(src)) || !slices.Equal(ds.Train, src.Train) {
		t.Errorf("binary round trip: %+v", ds)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
}

func TestBaseName(t *testing.T) {
	for in, want := range map[string]string{
		"/d/wave.graph.bz2": "wave", "edges.txt.gz": "edges", "/data/cora/": "cora",
		"ogbn-arxiv": "ogbn-arxiv", "a.b.sgb": "a.b", ".hidden": ".hidden",
	} {
		if got := baseName(in); got != want {
			t.Errorf("baseName(%q) = %q, want %q", in, got, want)
		}
	}
}

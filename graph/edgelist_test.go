package graph

import (
	"slices"
	"strings"
	"testing"
)

func TestLoadEdgeListSmall(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "g.txt", "# a comment\n% another\n\n0 1\n0\t2\n3,0\r\n  2   1  \n")
	ds, err := LoadEdgeList(p)
	if err != nil {
		t.Fatal(err)
	}
	g := ds.Graph
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	if ds.Name != "g" || g.NumRows != 4 || g.NNZ() != 4 || g.Val != nil || ds.FeatDim != 0 || ds.Labels != nil {
		t.Fatalf("got %q %d nodes %d edges val=%v", ds.Name, g.NumRows, g.NNZ(), g.Val)
	}
	// Row v lists the sources of edges u→v.
	want := map[int][]int32{0: {3}, 1: {0, 2}, 2: {0}, 3: {}}
	for v, w := range want {
		if got := g.Idx[g.Ptr[v]:g.Ptr[v+1]]; !slices.Equal(got, w) {
			t.Errorf("row %d = %v, want %v", v, got, w)
		}
	}
}

func TestLoadEdgeListWeights(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "w.txt.gz", "0 1 0.5\n1 0 2\n2 0 1.25\n")
	ds, err := LoadEdgeList(p)
	if err != nil {
		t.Fatal(err)
	}
	g := ds.Graph
	if ds.Name != "w" || g.NumRows != 3 || !slices.Equal(g.Val, []float32{2, 1.25, 0.5}) || !slices.Equal(g.Idx, []int32{1, 2, 0}) {
		t.Fatalf("got idx %v val %v", g.Idx, g.Val)
	}
}

// TestEdgeListBadWeights: a weight that is not a finite, non-negative
// number is a one-line error naming the file and line.
func TestEdgeListBadWeights(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ text, want string }{
		{"0 1 0.5\n2 0 -1.25\n", "w.txt:2: field 3: edge weight \"-1.25\": weights must be non-negative"},
		{"0 1 nan\n", "w.txt:1: field 3: bad edge weight \"nan\""},
		{"0 1 1\n1 2 1e39\n", "w.txt:2: field 3: bad edge weight \"1e39\""},
		{"0 1 1\n1 2 x\n", "w.txt:2: field 3: bad edge weight \"x\""},
	} {
		p := writeFile(t, dir, "w.txt", c.text)
		_, err := LoadEdgeList(p)
		if err == nil || !strings.HasSuffix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line ending %q", c.text, err, c.want)
		}
	}
}

func TestEdgeListNodeCountComment(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		text string
		n    int
	}{
		{"# Nodes: 6 Edges: 1\n0 3\n", 6},
		{"# toy graph: 5 nodes, 1 arc\n0 3\n", 5},
		{"# Nodes: 1\n0 1\n", 2},      // smaller than max id + 1: ignored
		{"# 1000 nodes\n0 1\n", 2},    // more than twice max id + 1: ignored
		{"0 1\n# Nodes: 7\n1 0\n", 2}, // only comments before the first edge count
	} {
		p := writeFile(t, dir, "c.txt", c.text)
		ds, err := LoadEdgeList(p)
		if err != nil {
			t.Fatal(err)
		}
		if ds.NumNodes() != c.n {
			t.Errorf("%q: %d nodes, want %d", c.text, ds.NumNodes(), c.n)
		}
	}
}

func TestEdgeListErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, text string
		line       int64
		msg        string
	}{
		{"badnum.txt", "# c\n0 1\n1 x2\n", 3, `field 2: bad node id "x2"`},
		{"onecol.txt", "0 1\n\n7\n", 3, "expected 2 or 3 fields (src dst [weight]), found 1"},
		{"fourcol.txt", "0 1 1 1\n", 1, "found 4"},
		{"mixed.txt", "0 1 1.5\n1 2 2\n2 0\n", 3, "2 fields but line 1 has 3"},
		{"badw.txt", "0 1 1.5\n1 2 abc\n", 2, `field 3: bad edge weight "abc"`},
		{"neg.txt", "0 1\n-1 2\n", 2, "field 1: node id -1 outside [0,2147483646]"},
		{"huge.txt", "0 1\n1 2147483647\n", 2, "field 2: node id 2147483647 outside"},
		{"nan.txt.gz", "0 1 nan\n", 1, "bad edge weight"},
	} {
		p := writeFile(t, dir, c.name, c.text)
		_, err := LoadEdgeList(p)
		wantParseError(t, err, p, c.line, c.msg)
	}
	p := writeFile(t, dir, "empty.txt", "# nothing\n")
	_, err := LoadEdgeList(p)
	wantParseError(t, err, p, 0, "no edges")
}

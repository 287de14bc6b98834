package graph

import (
	"slices"
	"testing"
)

func TestLoadMetisFormats(t *testing.T) {
	dir := t.TempDir()
	// Triangle 1-2-3 plus isolated vertex 4 (empty line).
	for _, c := range []struct {
		name, text string
		val        []float32
	}{
		{"plain.graph", "% comment\n4 3\n2 3\n1 3\n% inside\n1 2\n\n", nil},
		{"f0.graph", "4 3 0\n2 3\n1 3\n1 2\n\n", nil},
		{"ew.graph.gz", "4 3 1\n2 5 3 6\n1 5 3 7\n1 6 2 7\n\n", []float32{5, 6, 5, 7, 6, 7}},
		{"vw.metis", "4 3 10\n1 2 3\n1 1 3\n2 1 2\n4\n", nil},
		{"vwew.graph", "4 3 11\n1 2 5 3 6\n1 1 5 3 7\n2 1 6 2 7\n4\n", []float32{5, 6, 5, 7, 6, 7}},
		{"ncon.graph", "4 3 10 2\n1 0 2 3\n1 9 1 3\n2 2 1 2\n4 4\n", nil},
		{"vsize.graph", "4 3 111 2\n9 1 0 2 5 3 6\n9 1 9 1 5 3 7\n9 2 2 1 6 2 7\n9 4 4", []float32{5, 6, 5, 7, 6, 7}},
	} {
		p := writeFile(t, dir, c.name, c.text)
		ds, err := LoadMetis(p)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		g := ds.Graph
		if err := g.Validate(); err != nil {
			t.Fatal(err)
		}
		if g.NumRows != 4 || !slices.Equal(g.Ptr, []int64{0, 2, 4, 6, 6}) || !slices.Equal(g.Idx, []int32{1, 2, 0, 2, 0, 1}) {
			t.Errorf("%s: ptr %v idx %v", c.name, g.Ptr, g.Idx)
		}
		if !slices.Equal(g.Val, c.val) || (c.val == nil) != (g.Val == nil) {
			t.Errorf("%s: val %v, want %v", c.name, g.Val, c.val)
		}
	}
}

func TestMetisErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, text string
		line       int64
		msg        string
	}{
		{"hdr1.graph", "% c\n3 x\n", 2, `bad METIS header: edge count "x"`},
		{"hdr2.graph", "3\n", 1, "bad METIS header: expected \"n m [fmt [ncon]]\", found 1 fields"},
		{"hdr3.graph", "3 2 2\n", 1, `bad METIS header: fmt "2"`},
		{"hdr4.graph", "3 2 1 2\n", 1, "ncon=2 given but fmt \"1\" has no vertex weights"},
		{"hdr5.graph", "0 0\n", 1, "vertex count"},
		{"count.graph", "% c\n%c\n3 3\n2\n1 3\n2\n", 3, "header says m=3 edges (6 adjacency entries) but the vertex lines list 4 entries"},
		{"range.graph", "3 2\n2\n1 4\n2\n", 3, "field 2: neighbour 4 outside [1,3]"},
		{"zero.graph", "3 2\n0\n", 2, "field 1: neighbour 0 outside [1,3]"},
		{"bad.graph", "3 2\n2\n1 3x\n2\n", 3, `field 2: bad neighbour "3x"`},
		{"short.graph", "3 2\n2\n1 3\n", 3, "file ends after 2 of the 3 vertex lines"},
		{"extra.graph", "2 1\n2\n1\n\n1\n", 5, "data after the last vertex"},
		{"noew.graph", "2 1 1\n2 4\n1\n", 3, "field 2: neighbour 1 has no edge weight"},
		{"badew.graph", "2 1 1\n2 -4\n1 4\n", 2, `field 2: bad edge weight "-4"`},
		{"novw.graph", "2 1 10 2\n1\n", 2, "missing vertex size/weight"},
		// Asymmetric adjacency (with the right entry count): the line of the listing vertex.
		{"asym1.graph", "3 2\n2 3\n1\n2\n", 2, "vertex 1 lists neighbour 3, but vertex 3 does not list 1"},
		{"asym2.graph", "%c\n3 2\n2\n%c\n1 3\n1\n", 6, "vertex 3 lists neighbour 1, but vertex 1 does not list 3"},
		{"asym3.graph", "3 2\n2 2\n1\n3\n", 2, "vertex 1 lists neighbour 2, but vertex 2 does not list 1"},
	} {
		p := writeFile(t, dir, c.name, c.text)
		_, err := LoadMetis(p)
		wantParseError(t, err, p, c.line, c.msg)
	}
	p := writeFile(t, dir, "nohdr.graph", "% only a comment\n")
	_, err := LoadMetis(p)
	wantParseError(t, err, p, 0, "no METIS header")
}

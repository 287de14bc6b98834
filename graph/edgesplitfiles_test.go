package graph

import (
	"archive/zip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ring6 is a 6-node undirected ring (both directions stored).
func ring6() *Dataset {
	g := &CSR{NumRows: 6, NumCols: 6, Ptr: make([]int64, 7)}
	for v := range 6 {
		g.Idx = append(g.Idx, int32((v+5)%6), int32((v+1)%6))
		slices.Sort(g.Idx[2*v:])
		g.Ptr[v+1] = int64(len(g.Idx))
	}
	return &Dataset{Graph: g}
}

// OGB's get_edge_split() layouts as .npz (edge + edge_neg; source_node,
// target_node + target_node_neg), .npy pairs with NAME_neg.npy, and csv:
// the pairs in the files' order, the held-out positives gone from the
// graph in both directions.
func TestReadEdgeSplitFiles(t *testing.T) {
	dir := t.TempDir()
	npzOf(t, filepath.Join(dir, "train.npz"), zip.Deflate,
		[2]string{"edge.npy", npyMember("<i8", "(3, 2)", []int64{0, 1, 1, 2, 3, 4})},
		[2]string{"weight.npy", npyMember("<f4", "(3,)", []float32{1, 1, 1})})
	npzOf(t, filepath.Join(dir, "valid.npz"), zip.Store,
		[2]string{"source_node.npy", npyMember("<i8", "(2,)", []int64{2, 4})},
		[2]string{"target_node.npy", npyMember("<i8", "(2,)", []int64{3, 5})},
		[2]string{"target_node_neg.npy", npyMember("<i4", "(2, 3)", []int32{0, 1, 5, 1, 2, 3})})
	npzOf(t, filepath.Join(dir, "test.npz"), zip.Store,
		[2]string{"edge.npy", npyMember("<i8", "(1, 2)", []int64{0, 5})},
		[2]string{"edge_neg.npy", npyMember("<i8", "(2, 2)", []int64{0, 3, 1, 4})})
	ds := ring6()
	es, err := ReadEdgeSplitFiles(ds, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(es.Train, [][2]int32{{0, 1}, {1, 2}, {3, 4}}) || !slices.Equal(es.Valid, [][2]int32{{2, 3}, {4, 5}}) ||
		!slices.Equal(es.Test, [][2]int32{{0, 5}}) {
		t.Fatalf("positives %v %v %v", es.Train, es.Valid, es.Test)
	}
	if es.NegK[0] != 3 || !slices.Equal(es.TargetNeg[0], []int32{0, 1, 5, 1, 2, 3}) || es.Neg[0] != nil ||
		!slices.Equal(es.Neg[1], [][2]int32{{0, 3}, {1, 4}}) || es.TargetNeg[1] != nil {
		t.Fatalf("negatives %v %v %v %v", es.Neg, es.TargetNeg, es.NegK, es)
	}
	// Left: 0-1, 1-2, 3-4 (2-3, 4-5, 5-0 held out).
	if !slices.Equal(ds.Graph.Idx, []int32{1, 0, 2, 1, 4, 3}) || !slices.Equal(ds.Graph.Ptr, []int64{0, 1, 3, 4, 5, 6, 6}) {
		t.Fatalf("graph %v %v", ds.Graph.Ptr, ds.Graph.Idx)
	}

	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "train.npy"), npyBytes(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }",
		[]byte("\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00")), 0o644); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "val.csv", "1,2\n\n2 3\n")
	writeFile(t, dir, "val_neg.csv", "0,3\n")
	writeFile(t, dir, "test.csv", "4,5\r\n")
	ds = ring6()
	if es, err = ReadEdgeSplitFiles(ds, dir); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(es.Train, [][2]int32{{0, 1}, {3, 4}}) || !slices.Equal(es.Valid, [][2]int32{{1, 2}, {2, 3}}) ||
		!slices.Equal(es.Neg[0], [][2]int32{{0, 3}}) || es.Neg[1] != nil || !slices.Equal(es.Test, [][2]int32{{4, 5}}) {
		t.Fatalf("npy/csv: %+v", es)
	}
}

// Bad split files: one line naming the file and the entry.
func TestReadEdgeSplitFilesErrors(t *testing.T) {
	pairs := func(vals ...int64) string {
		return npyMember("<i8", "("+strconv.Itoa(len(vals)/2)+", 2)", vals)
	}
	ok := [2]string{"edge.npy", pairs(0, 1)}
	for _, tc := range []struct {
		name  string
		files map[string][2]string // file → one npz member (or raw text for other files)
		want  string
	}{
		{"unknown id", map[string][2]string{"valid.npz": {"edge.npy", pairs(0, 1, 2, 9)}}, "valid.npz:edge.npy: row 1, column 1: node id 9 outside [0,6)"},
		{"negative id", map[string][2]string{"test.npz": {"edge.npy", pairs(-1, 1)}}, "test.npz:edge.npy: row 0, column 0: node id -1 outside [0,6)"},
		{"shape", map[string][2]string{"valid.npz": {"edge.npy", npyMember("<i8", "(2, 3)", []int64{0, 1, 2, 3, 4, 5})}}, "valid.npz:edge.npy: shape [2 3], want (E, 2) node ids"},
		{"float ids", map[string][2]string{"valid.npz": {"edge.npy", npyMember("<f4", "(1, 2)", []float32{0, 1})}}, "valid.npz:edge.npy: dtype <f4: want integer node ids"},
		{"pickle", map[string][2]string{"valid.npz": {"edge.npy", string(npyBytes(1, "{'descr': '|O', 'fortran_order': False, 'shape': (1, 2), }", []byte("\x80\x04junk")))}}, "valid.npz:edge.npy: dtype |O holds Python objects (a pickle)"},
		{"unknown key", map[string][2]string{"valid.npz": {"edge_attr.npy", pairs(0, 1)}}, `valid.npz: array "edge_attr" is not one of OGB's edge split keys`},
		{"per-source rows", map[string][2]string{"test.npz": {"target_node_neg.npy", npyMember("<i8", "(2, 2)", []int64{0, 1, 2, 3})}}, "test.npz:target_node_neg.npy: 2 rows of 2 negatives, want one row per positive (1)"},
		{"train negatives", map[string][2]string{"train.npz": {"edge_neg.npy", pairs(0, 3)}}, "train.npz: the training part has fixed negatives"},
		{"csv id", map[string][2]string{"valid.csv": {"", "0,1\n2,x\n"}}, "valid.csv:2: bad node id \"x\""},
		{"csv three", map[string][2]string{"valid.csv": {"", "0,1,2\n"}}, "valid.csv:1: more than two node ids"},
		{"csv range", map[string][2]string{"test_neg.csv": {"", "0,6\n"}, "test.csv": {"", "0,2\n"}}, "test_neg.csv:1: node id 6 outside [0,6)"},
		{"two files", map[string][2]string{"val.csv": {"", "0,1\n"}}, "both hold the valid edges: remove one"},
		{"pt only", map[string][2]string{"train.npz": {"-", ""}, "train.pt": {"", "pickle"}}, "train.pt is a PyTorch pickle, never loaded"},
		{"npz and neg", map[string][2]string{"valid_neg.npy": {"", "x"}}, "valid.npz holds its negatives"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string][2]string{"train.npz": ok, "valid.npz": ok, "test.npz": ok}
			if tc.name == "csv range" {
				delete(files, "test.npz")
			}
			if strings.HasPrefix(tc.name, "csv") && tc.name != "csv range" {
				delete(files, "valid.npz")
			}
			for k, v := range tc.files {
				files[k] = v
			}
			for name, m := range files {
				switch {
				case m[0] == "-":
					continue
				case strings.HasSuffix(name, ".npz"):
					if name == "train.npz" && m[0] == "edge_neg.npy" {
						npzOf(t, filepath.Join(dir, name), zip.Store, ok, m)
						continue
					}
					if m[0] == "target_node_neg.npy" {
						npzOf(t, filepath.Join(dir, name), zip.Store, ok, m)
						continue
					}
					npzOf(t, filepath.Join(dir, name), zip.Store, m)
				default:
					writeFile(t, dir, name, m[1])
				}
			}
			_, err := ReadEdgeSplitFiles(ring6(), dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line containing %q", err, tc.want)
			}
		})
	}
}

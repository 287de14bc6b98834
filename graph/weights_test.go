package graph

import (
	"archive/zip"
	"math"
	"path/filepath"
	"slices"
	"testing"
)

// TestWeightsEveryFormat: edge weights reach CSR.Val from an edge list, a
// METIS file with edge weights (fmt 1), an npz edge_weight array and OGB's
// raw/edge_weight.csv; each lands on its edge (row v lists u→v).
func TestWeightsEveryFormat(t *testing.T) {
	dir := t.TempDir()
	// Edges 0→1 (0.5), 1→2 (2), 2→0 (4) in every format but METIS.
	wantIdx, wantVal := []int32{2, 0, 1}, []float32{4, 0.5, 2}
	el := writeFile(t, dir, "w.txt", "0 1 0.5\n1 2 2\n2 0 4\n")
	ogb := map[string]string{"raw/edge.csv": "0,1\n1,2\n2,0\n", "raw/edge_weight.csv.gz": "0.5\n2\n4\n", "raw/num-node-list.csv": "3\n"}
	npz := npzOf(t, filepath.Join(dir, "w.npz"), zip.Store,
		[2]string{"edge_index.npy", npyMember("<i8", "(2, 3)", []int64{0, 1, 2, 1, 2, 0})},
		[2]string{"edge_weight.npy", npyMember("<f8", "(3,)", []float64{0.5, 2, 4})})
	for _, p := range []string{el, makeOGB(t, ogb), npz} {
		ds, err := Load(p, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ds.Graph.Idx, wantIdx) || !slices.Equal(ds.Graph.Val, wantVal) {
			t.Errorf("%s: idx %v val %v, want %v %v", p, ds.Graph.Idx, ds.Graph.Val, wantIdx, wantVal)
		}
	}
	// METIS: a symmetric triangle with weights 3 (1–2), 5 (2–3), 7 (1–3).
	mp := writeFile(t, dir, "w.graph", "3 3 1\n2 3 3 7\n1 3 3 5\n1 7 2 5\n")
	ds, err := Load(mp, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ds.Graph.Idx, []int32{1, 2, 0, 2, 0, 1}) || !slices.Equal(ds.Graph.Val, []float32{3, 7, 3, 5, 7, 5}) {
		t.Errorf("METIS: idx %v val %v", ds.Graph.Idx, ds.Graph.Val)
	}
}

// TestBadWeights: a negative, non-finite or missing weight is a one-line
// error naming the file and line (or array element).
func TestBadWeights(t *testing.T) {
	dir := t.TempDir()
	base := map[string]string{"raw/edge.csv": "0,1\n1,2\n2,0\n", "raw/num-node-list.csv": "3\n"}
	for _, c := range []struct {
		weights string
		line    int64
		want    string
	}{
		{"1\n-2\n1\n", 2, `edge weight "-2": weights must be non-negative`},
		{"1\n2\ninf\n", 3, `bad edge weight "inf"`},
		{"1\n2\n", 0, "2 weights for 3 edges"},
		{"1\n2\n3\n4\n", 0, "4 weights for 3 edges"},
	} {
		files := map[string]string{"raw/edge_weight.csv": c.weights}
		for k, v := range base {
			files[k] = v
		}
		d := makeOGB(t, files)
		_, err := Load(d, LoadOptions{})
		wantParseError(t, err, filepath.Join(d, "raw", "edge_weight.csv"), c.line, c.want)
	}
	for _, c := range []struct {
		w    float64
		want string
	}{{-1, "element 1 is -1: weights must be non-negative"}, {math.NaN(), "element 1 is NaN: weights must be finite"}} {
		p := npzOf(t, filepath.Join(dir, "bad.npz"), zip.Store,
			[2]string{"edge_index.npy", npyMember("<i8", "(2, 2)", []int64{0, 1, 1, 0})},
			[2]string{"edge_weight.npy", npyMember("<f8", "(2,)", []float64{1, c.w})})
		_, err := Load(p, LoadOptions{})
		wantParseError(t, err, p+":edge_weight.npy", 0, c.want)
	}
}

// TestWeightsConvertRoundTrip: the .sgb and both npz writers keep the
// weights.
func TestWeightsConvertRoundTrip(t *testing.T) {
	dir := t.TempDir()
	ds, err := Load(writeFile(t, dir, "w.txt", "0 1 0.5\n1 2 2\n2 0 4\n"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sgb, npz, ogb := filepath.Join(dir, "w.sgb"), filepath.Join(dir, "w.npz"), filepath.Join(dir, "ogb")
	if err := WriteBinary(sgb, ds); err != nil {
		t.Fatal(err)
	}
	for _, o := range []struct {
		path string
		ogb  bool
	}{{npz, false}, {ogb, true}} {
		if err := WriteNpzDataset(o.path, ds, o.ogb, false); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{sgb, npz, ogb} {
		got, err := Load(p, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Graph.Idx, ds.Graph.Idx) || !slices.Equal(got.Graph.Val, ds.Graph.Val) {
			t.Errorf("%s: idx %v val %v, want %v %v", p, got.Graph.Idx, got.Graph.Val, ds.Graph.Idx, ds.Graph.Val)
		}
		got.Release()
	}
}

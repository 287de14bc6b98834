package graph

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/internal/testdataset"
)

// sameDataset fails unless a and b hold the same graph, features, labels
// and split.
func sameDataset(t *testing.T, what string, a, b *Dataset) {
	t.Helper()
	switch {
	case a.NumNodes() != b.NumNodes() || !slices.Equal(a.Graph.Ptr, b.Graph.Ptr) || !slices.Equal(a.Graph.Idx, b.Graph.Idx):
		t.Fatalf("%s: graphs differ (%d vs %d nodes, %d vs %d edges)", what, a.NumNodes(), b.NumNodes(), a.Graph.NNZ(), b.Graph.NNZ())
	case a.FeatDim != b.FeatDim || !slices.Equal(xd(a), xd(b)):
		t.Fatalf("%s: features differ (dim %d vs %d)", what, a.FeatDim, b.FeatDim)
	case !slices.Equal(a.Labels, b.Labels) || a.NumClasses != b.NumClasses:
		t.Fatalf("%s: labels differ", what)
	case !slices.Equal(a.Train, b.Train) || !slices.Equal(a.Valid, b.Valid) || !slices.Equal(a.Test, b.Test):
		t.Fatalf("%s: splits differ (%d/%d/%d vs %d/%d/%d)", what, len(a.Train), len(a.Valid), len(a.Test), len(b.Train), len(b.Valid), len(b.Test))
	}
}

func TestNpzLayoutsMatchCSV(t *testing.T) {
	ref, err := Load(testdataset.Dataset(t, "cora"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name          string
		ogb, compress bool
	}{{"ogb-stored", true, false}, {"ogb-deflated", true, true}, {"pyg.npz", false, false}, {"pyg-z.npz", false, true}} {
		p := filepath.Join(dir, c.name)
		if err := WriteNpzDataset(p, ref, c.ogb, c.compress); err != nil {
			t.Fatal(err)
		}
		if f, err := DetectFormat(p); err != nil || f != map[bool]string{true: "ogb", false: "npz"}[c.ogb] {
			t.Fatalf("%s: detected %q, %v", c.name, f, err)
		}
		ds, err := Load(p, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ds.Name = ref.Name
		sameDataset(t, c.name, ref, ds)
		if mapped := ds.release != nil; mapped == c.compress {
			t.Errorf("%s: features mapped = %v", c.name, mapped)
		}
		if err := ds.Release(); err != nil {
			t.Fatal(err)
		}
	}
}

// npzOf writes members (name → .npy bytes) into a zip at path, each
// stored or deflated.
func npzOf(t *testing.T, path string, method uint16, members ...[2]string) string {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, m := range members {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: m[0], Method: method})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(m[1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// npyMember encodes a .npy with descr and shape around little-endian vals.
func npyMember(descr, shape string, vals any) string {
	var data bytes.Buffer
	binary.Write(&data, binary.LittleEndian, vals)
	return string(npyBytes(1, "{'descr': '"+descr+"', 'fortran_order': False, 'shape': "+shape+", }", data.Bytes()))
}

func TestNpzFloat16AndPairs(t *testing.T) {
	dir := t.TempDir()
	half := []uint16{0x3c00, 0xc000, 0x3800, 0x0001, 0x7bff, 0x0000} // 1, -2, 0.5, 2^-24, 65504, 0
	for _, method := range []uint16{zip.Store, zip.Deflate} {
		p := npzOf(t, filepath.Join(dir, "h.npz"), method,
			[2]string{"edge_index.npy", npyMember("<i4", "(3, 2)", []int32{0, 1, 1, 2, 2, 0})},
			[2]string{"x.npy", npyMember("<f2", "(3, 2)", half)},
			[2]string{"y.npy", npyMember("<f8", "(3, 1)", []float64{1, math.NaN(), 0})},
			[2]string{"train_idx.npy", npyMember("<i8", "(1,)", []int64{0})},
			[2]string{"val_mask.npy", npyMember("|b1", "(3,)", []uint8{0, 0, 0})},
			[2]string{"test_index.npy", npyMember("<u4", "(1,)", []uint32{2})},
			[2]string{"edge_feat.npy", "not parsed"})
		ds, err := Load(p, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := []float32{1, -2, 0.5, float32(math.Ldexp(1, -24)), 65504, 0}
		if !slices.Equal(xd(ds), want) || !slices.Equal(ds.Labels, []int32{1, -1, 0}) || !slices.Equal(ds.Graph.Idx, []int32{2, 0, 1}) {
			t.Errorf("method %d: x %v labels %v idx %v", method, xd(ds), ds.Labels, ds.Graph.Idx)
		}
		if !slices.Equal(ds.Train, []int32{0}) || len(ds.Valid) != 0 || !slices.Equal(ds.Test, []int32{2}) {
			t.Errorf("method %d: split %v %v %v", method, ds.Train, ds.Valid, ds.Test)
		}
		ds.Release()
	}
}

func TestNpzErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "d.npz")
	edges := [2]string{"edge_index.npy", npyMember("<i8", "(2, 2)", []int64{0, 1, 1, 3})}
	x3 := [2]string{"x.npy", npyMember("<f4", "(3, 1)", []float32{1, 2, 3})}
	y3 := [2]string{"y.npy", npyMember("<i8", "(3,)", []int64{0, 1, 0})}
	masks := func(tr, va, te string) [][2]string {
		return [][2]string{{"train_mask.npy", tr}, {"val_mask.npy", va}, {"test_mask.npy", te}}
	}
	m := func(b ...uint8) string { return npyMember("|b1", fmt.Sprintf("(%d,)", len(b)), b) }
	for _, c := range []struct {
		name    string
		members [][2]string
		file    string
		want    string
	}{
		{"id out of range", [][2]string{edges, x3}, p + ":edge_index.npy", "element [1, 1]: node id 3 outside [0,2]"},
		{"no edges", [][2]string{x3}, p, `no array "edge_index"`},
		{"empty edges, no count", [][2]string{{"edge_index.npy", npyMember("<i8", "(2, 0)", []int64{})}}, p, "edge_index has no edges and nothing gives the node count"},
		{"empty pairs, no count", [][2]string{{"edge_index.npy", npyMember("<i8", "(0, 2)", []int64{})}}, p, "edge_index has no edges and nothing gives the node count"},
		{"float ids", [][2]string{{"edge_index.npy", npyMember("<f4", "(2, 1)", []float32{0, 1})}}, p + ":edge_index.npy", "node ids must be integers"},
		{"bad shape", [][2]string{{"edge_index.npy", npyMember("<i8", "(3, 3)", make([]int64, 9))}}, p + ":edge_index.npy", "want (2, E) or (E, 2)"},
		{"rows", append([][2]string{{"edge_index.npy", npyMember("<i8", "(2, 1)", []int64{0, 1})}, x3}, [2]string{"y.npy", npyMember("<i8", "(2,)", []int64{0, 1})}), p + ":y.npy", "has 2 rows but the graph has 3 nodes"},
		{"nan feature", [][2]string{{"edge_index.npy", npyMember("<i8", "(2, 1)", []int64{0, 1})}, {"x.npy", npyMember("<f4", "(2, 1)", []float32{1, float32(math.NaN())})}}, p + ":x.npy", "feature [1, 0] is NaN"},
		{"short data", [][2]string{{"edge_index.npy", npyMember("<i8", "(2, 2)", []int64{0, 1})}}, p + ":edge_index.npy", "npy data is 16 bytes but shape [2 2] of <i8 needs 32"},
		{"bad header", [][2]string{{"edge_index.npy", "garbage"}}, p + ":edge_index.npy", "not a .npy file"},
		{"mask length", append([][2]string{{"edge_index.npy", npyMember("<i8", "(2, 1)", []int64{0, 1})}, x3, y3}, masks(m(1, 0), m(0, 1, 0), m(0, 0, 1))...), p + ":train_mask.npy", "mask of 2 entries for 3 nodes"},
		{"overlap", append([][2]string{{"edge_index.npy", npyMember("<i8", "(2, 1)", []int64{0, 1})}, x3, y3}, masks(m(1, 1, 0), m(0, 1, 0), m(0, 0, 1))...), p + ":val_mask.npy", "element 1: node 1 is also in the train split"},
		{"idx range", append([][2]string{{"edge_index.npy", npyMember("<i8", "(2, 1)", []int64{0, 1})}, x3, y3}, masks(npyMember("<i8", "(1,)", []int64{7}), m(0, 1, 0), m(0, 0, 1))...), p + ":train_mask.npy", "element 0: node id 7 outside [0,3)"},
	} {
		os.Remove(p)
		npzOf(t, p, zip.Store, c.members...)
		_, err := Load(p, LoadOptions{})
		wantParseError(t, err, c.file, 0, c.want)
	}
	// The feature width is refused from x's header, before its data is
	// inflated: none, or wider than any model takes.
	e1 := [2]string{"edge_index.npy", npyMember("<i8", "(2, 1)", []int64{0, 0})}
	for _, c := range []struct {
		cols int
		want string
	}{{0, "the feature array has 0 columns"}, {MaxFeatDim + 1, "the feature array has 16777217 columns, at most 16777216"}} {
		os.Remove(p)
		npzOf(t, p, zip.Deflate, e1, [2]string{"x.npy", npyMember("<f4", fmt.Sprintf("(1, %d)", c.cols), make([]float32, c.cols))})
		_, err := Load(p, LoadOptions{})
		wantParseError(t, err, p+":x.npy", 0, c.want)
	}
	// A labelled file without split arrays asks for a split.
	npzOf(t, p, zip.Deflate, [2]string{"edge_index.npy", npyMember("<i8", "(2, 1)", []int64{0, 1})}, x3, y3)
	if _, err := Load(p, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "graph.LoadOptions.Split") || !strings.Contains(err.Error(), "no train_mask/train_idx") {
		t.Errorf("missing split: %v", err)
	}
	ds, err := Load(p, LoadOptions{Split: "random:0.4,0.3:7"})
	if err != nil || len(ds.Train)+len(ds.Valid)+len(ds.Test) != 3 {
		t.Errorf("random split of 3 nodes: %v %v", ds, err)
	}
	// Not a zip.
	os.WriteFile(p, []byte("PK\x03\x04 not really"), 0o644)
	_, err = Load(p, LoadOptions{})
	wantParseError(t, err, p, 0, "not a readable .npz (zip) archive")
}

func TestNpzOGBLabelArchive(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	os.MkdirAll(filepath.Join(dir, "raw"), 0o755)
	npzOf(t, filepath.Join(dir, "raw", "data.npz"), zip.Store,
		[2]string{"edge_index.npy", npyMember("<i8", "(2, 2)", []int64{0, 1, 1, 2})},
		[2]string{"num_nodes.npy", npyMember("<i8", "()", []int64{3})})
	lp := npzOf(t, filepath.Join(dir, "raw", "node-label.npz"), zip.Deflate, [2]string{"y.npy", npyMember("<i8", "(3,)", []int64{0, 1, 0})})
	_, err := Load(dir, LoadOptions{})
	wantParseError(t, err, lp, 0, `no array "node_label" (it holds y)`)
	npzOf(t, lp, zip.Deflate, [2]string{"node_label.npy", npyMember("<f8", "(3, 1)", []float64{0, math.NaN(), 2})})
	ds, err := Load(dir, LoadOptions{Split: "random:0.5,0.5"})
	if err != nil || ds.NumNodes() != 3 || !slices.Equal(ds.Labels, []int32{0, -1, 2}) || len(ds.Train)+len(ds.Valid) != 2 {
		t.Fatalf("%v %v", ds, err)
	}
}

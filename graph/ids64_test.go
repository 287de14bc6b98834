package graph

import (
	"archive/zip"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/internal/mix"
)

// Node ids the range readers take and the serial loaders refuse.
const (
	id40  = int64(1) << 40
	idMax = int64(MaxRangeNodeID) // 2^63-2, whose node count 2^63-1 still fits
)

// wholeRange opens path as one reader's share (all of it).
func wholeRange(t *testing.T, path string) *TextRange {
	t.Helper()
	tr, err := OpenTextRange(path, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// wantDistHint checks a serial loader's error for an id beyond int32: one
// line naming file:line that says where such graphs are read.
func wantDistHint(t *testing.T, err error, file string, line int64, substr string) {
	t.Helper()
	wantParseError(t, err, file, line, substr)
	if !strings.Contains(err.Error(), "distributed partitioner (mpirun -np P supergcn partition ...)") {
		t.Fatalf("error %q does not say where graphs this large are read", err)
	}
}

func TestEdgeListIDs64(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "big.edges", "# ids past int32\n0 1099511627776\n9223372036854775806 5\n")
	ch, err := wholeRange(t, p).ReadEdgeList(1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ch.Src, []int64{0, idMax}) || !slices.Equal(ch.Dst, []int64{id40, 5}) || ch.MaxID != idMax {
		t.Fatalf("src %v dst %v max %d", ch.Src, ch.Dst, ch.MaxID)
	}
	_, err = LoadEdgeList(p)
	wantDistHint(t, err, p, 2, "field 2: node id 1099511627776 outside [0,2147483646]")

	// 2^63-1 would make a node count of 2^63: refused by the range reader too.
	q := writeFile(t, dir, "max.edges", "0 1\n1 9223372036854775807\n")
	_, err = wholeRange(t, q).ReadEdgeList(1)
	wantParseError(t, err, q, 2, "field 2: node id 9223372036854775807 outside [0,9223372036854775806]")
}

func TestOGBCSVIDs64(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "edge.csv", "1099511627776,0\n3,9223372036854775806\n")
	src, dst, err := wholeRange(t, p).ReadEdgeCSV(1, -1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(src, []int64{id40, 3}) || !slices.Equal(dst, []int64{0, idMax}) {
		t.Fatalf("src %v dst %v", src, dst)
	}
	_, _, err = wholeRange(t, p).ReadEdgeCSV(1, id40+1)
	wantParseError(t, err, p, 2, "field 2: node id 9223372036854775806 outside [0,1099511627776]")
	_, _, err = readEdgeCSV(p, -1, -1)
	wantDistHint(t, err, p, 1, "field 1: node id 1099511627776 outside [0,2147483646]")

	ids := writeFile(t, dir, "train.csv", "1099511627776\n7\n")
	got, err := wholeRange(t, ids).ReadNodeIDs(1, id40+1)
	if err != nil || !slices.Equal(got, []int64{id40, 7}) {
		t.Fatalf("ReadNodeIDs: %v, %v", got, err)
	}

	files := toyOGB()
	files["raw/num-node-list.csv"] = "1099511627777\n"
	d := makeOGB(t, files)
	count := filepath.Join(d, "raw", "num-node-list.csv")
	if n, err := ReadCount(count); err != nil || int64(n) != id40+1 {
		t.Fatalf("ReadCount: %d, %v", n, err)
	}
	_, err = LoadOGB(d, "")
	wantDistHint(t, err, count, 1, "1099511627777 nodes: more nodes than the int32 node ids")
}

func TestMetisIDs64(t *testing.T) {
	dir := t.TempDir()
	// 2^40+1 vertices (only the first two lines are read by the share
	// reader), vertex 1 adjacent to vertex 2^40+1.
	p := writeFile(t, dir, "big.graph", "% huge\n1099511627777 1\n1099511627777\n1\n")
	h, err := ReadMetisHeader(p)
	if err != nil || h.N != id40+1 {
		t.Fatalf("header: %+v, %v", h, err)
	}
	ch, err := wholeRange(t, p).ReadMetis(1, h)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ch.Idx, []int64{id40, 0}) || !slices.Equal(ch.Ptr, []int64{0, 1, 2}) {
		t.Fatalf("idx %v ptr %v", ch.Idx, ch.Ptr)
	}
	_, err = LoadMetis(p)
	wantDistHint(t, err, p, 2, "vertex count 1099511627777: more nodes than the int32 node ids")
	if f, err := CheckLoadOptions(p, LoadOptions{}); err != nil || f != "metis" {
		t.Fatalf("format %q, %v: a METIS header with 2^40+1 vertices is still METIS", f, err)
	}
}

func TestNpzIDs64(t *testing.T) {
	dir := t.TempDir()
	p := npzOf(t, filepath.Join(dir, "big.npz"), zip.Store,
		[2]string{"edge_index.npy", npyMember("<i8", "(2, 2)", []int64{0, idMax, id40, 1})},
		[2]string{"num_nodes.npy", npyMember("<i8", "()", []int64{math.MaxInt64})})
	s, err := OpenNpzRange(p)
	if err != nil {
		t.Fatal(err)
	}
	src, dst, err := s.EdgeRange64(0, s.Edges)
	s.Close()
	if err != nil || !slices.Equal(src, []int64{0, idMax}) || !slices.Equal(dst, []int64{id40, 1}) || int64(s.Nodes) != math.MaxInt64 {
		t.Fatalf("src %v dst %v nodes %d: %v", src, dst, s.Nodes, err)
	}
	_, err = OpenNpz(p)
	wantDistHint(t, err, p+":num_nodes.npy", 0, "9223372036854775807 nodes: more nodes than the int32 node ids")

	// Without num_nodes the ids bound the node count.
	q := npzOf(t, filepath.Join(dir, "nocount.npz"), zip.Store,
		[2]string{"edge_index.npy", npyMember("<i8", "(2, 1)", []int64{id40, 0})})
	s, err = OpenNpzRange(q)
	if err != nil {
		t.Fatal(err)
	}
	src, _, err = s.EdgeRange64(0, 1)
	s.Close()
	if err != nil || !slices.Equal(src, []int64{id40}) {
		t.Fatalf("src %v: %v", src, err)
	}
	if s, err = OpenNpz(q); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.EdgeRange(0, 1)
	s.Close()
	wantDistHint(t, err, q+":edge_index.npy", 0, "element [0, 0]: node id 1099511627776 outside [0,2147483646]")

	split := writeNpy(t, filepath.Join(dir, "train.npy"), "<i8", "(2,)", []int64{id40, 3})
	a, err := OpenSplitArray(split, int(id40+1))
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.IDs64(0, a.Len)
	a.Close()
	if err != nil || !slices.Equal(got, []int64{id40, 3}) {
		t.Fatalf("IDs64: %v, %v", got, err)
	}
}

// The .sgb format stores int32 node ids: a header with more nodes is
// refused, saying so.
func TestBinaryNodeLimit(t *testing.T) {
	path, good := binWriteBytes(t)
	b := slices.Clone(good)
	le := binary.LittleEndian
	le.PutUint64(b[24:], 3_000_000_000)
	end := binFixedSize + binEntrySize*binNumSection
	le.PutUint32(b[end:], container.Checksum(b[:end]))
	msg := binLoadErr(t, path, b)
	if !strings.Contains(msg, "3000000000 nodes: the .sgb format stores int32 node ids") {
		t.Fatalf("error %q", msg)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenBinaryRange(path); err == nil || err.Error() != msg {
		t.Fatalf("range reader: %v, want %q", err, msg)
	}
}

// A random split's key of a node below 2^31 is what it was as an int32
// (splits stay the same), and distinct above.
func TestRandomSplitKey64(t *testing.T) {
	r := &RandomSplit{Seed: 11}
	for _, v := range []int32{0, 1, 12345, math.MaxInt32} {
		old := mix.Mix64(uint64(uint32(v)) ^ mix.Mix64(r.Seed^0x9e3779b97f4a7c15))
		if r.Key(int64(v)) != old {
			t.Fatalf("key of %d changed", v)
		}
	}
	if r.Key(id40) == r.Key(0) || r.Key(id40) == r.Key(id40+1) {
		t.Fatal("keys above 2^32 collide")
	}
}

package partition

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/internal/testdataset"
)

func writeRandom(t *testing.T, ds *graph.Dataset, parts int) (string, []int32) {
	t.Helper()
	owner := Random(ds.NumNodes(), parts, 9)
	dir := filepath.Join(t.TempDir(), "parts")
	mustNoErr(t, Write(dir, ds, owner, parts, MetaInfo{Method: "random", Weights: "none", Seed: 9}))
	return dir, owner
}

// TestWriteLoadRoundTrip: Load at ranks = parts, parts/2, parts/4, 1 equals
// Split with owner/k, exactly for sorted rows and as row sets otherwise.
func TestWriteLoadRoundTrip(t *testing.T) {
	for _, sorted := range []bool{true, false} {
		ds := randomDataset(400, 6, 4, 11, sorted)
		const parts = 8
		dir, owner := writeRandom(t, ds, parts)
		for _, ranks := range []int{8, 4, 2, 1} {
			k := int32(parts / ranks)
			for r := 0; r < ranks; r++ {
				got, err := Load(dir, r, ranks)
				mustNoErr(t, err)
				want := Split(ds, divide(owner, k), r, ranks)
				if err := shardEqual(got, want, !sorted); err != nil {
					t.Fatalf("sorted=%v ranks=%d rank=%d: %v", sorted, ranks, r, err)
				}
			}
		}
	}
}

// TestWriteLoadNoLabelsNoFeatures: structure-only datasets round-trip too.
func TestWriteLoadNoLabelsNoFeatures(t *testing.T) {
	ds := randomDataset(120, 3, 0, 2, true)
	ds.Labels, ds.NumClasses, ds.Train, ds.Valid, ds.Test = nil, 0, nil, nil, nil
	dir, owner := writeRandom(t, ds, 4)
	m, err := ReadMeta(dir)
	mustNoErr(t, err)
	if m.HasLabels || m.FeatDim != 0 || m.NumNodes != 120 || m.Parts != 4 || m.Method != "random" {
		t.Fatalf("meta %+v", m)
	}
	for r := 0; r < 2; r++ {
		got, err := Load(dir, r, 2)
		mustNoErr(t, err)
		if got.Labels != nil || graph.DenseData(got.Features) != nil {
			t.Fatal("labels/features appeared")
		}
		mustNoErr(t, shardEqual(got, Split(ds, divide(owner, 2), r, 2), false))
	}
}

// TestMetaStats: meta.json carries the statistics of ComputeStats and file checksums.
func TestMetaStats(t *testing.T) {
	ds := randomDataset(300, 4, 2, 5, true)
	dir, owner := writeRandom(t, ds, 4)
	m, err := ReadMeta(dir)
	mustNoErr(t, err)
	st, err := ComputeStats(ds.Graph, owner, 4, ds.SplitMask())
	mustNoErr(t, err)
	if m.EdgeCut != st.EdgeCut || m.NodeImbalance != st.NodeImbalance || m.NumEdges != ds.Graph.NNZ() ||
		m.NumTrain != int64(len(ds.Train)) || m.Dataset != ds.Name {
		t.Fatalf("meta %+v vs stats %+v", m, st)
	}
	for p, ps := range m.Stats.Parts {
		fi, err := os.Stat(filepath.Join(dir, ps.File))
		mustNoErr(t, err)
		if fi.Size() != ps.Bytes || ps.CRC32C == 0 || ps.Nodes != st.Parts[p].Nodes || ps.HaloRows != st.Parts[p].HaloRows {
			t.Fatalf("part %d: %+v (file %d bytes)", p, ps, fi.Size())
		}
	}
	ents, err := os.ReadDir(filepath.Dir(dir))
	mustNoErr(t, err)
	if len(ents) != 1 {
		t.Fatalf("leftovers beside the partition: %v", ents)
	}
}

// TestLoadIndivisible: parts % ranks != 0 is refused before any part is read.
func TestLoadIndivisible(t *testing.T) {
	ds := randomDataset(100, 3, 2, 1, true)
	dir, _ := writeRandom(t, ds, 8)
	for p := 0; p < 8; p++ {
		mustNoErr(t, os.Remove(filepath.Join(dir, PartFile(p))))
	}
	_, err := Load(dir, 0, 3)
	if err == nil {
		t.Fatal("8 parts on 3 ranks accepted")
	}
	for _, s := range []string{dir, "8 parts", "3 ranks"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
	if _, err := Load(dir, 3, 2); err == nil {
		t.Error("rank 3 of 2 accepted")
	}
}

// TestLoadCorrupt: a flipped byte anywhere or a truncation is an error that
// names the file (and the section, where one is hit).
func TestLoadCorrupt(t *testing.T) {
	ds := randomDataset(200, 5, 3, 4, true)
	dir, _ := writeRandom(t, ds, 2)
	path := filepath.Join(dir, PartFile(1))
	orig, err := os.ReadFile(path)
	mustNoErr(t, err)
	restore := func() { mustNoErr(t, os.WriteFile(path, orig, 0o644)) }
	// Offsets: header, the global-id section payload, the middle and the last byte.
	for _, c := range []struct {
		off     int
		section string
	}{{20, "header"}, {partHeaderSize + 16 + 3, "global ids"}, {len(orig) / 2, ""}, {len(orig) - 1, "feature values"}} {
		b := append([]byte(nil), orig...)
		b[c.off] ^= 0x10
		mustNoErr(t, os.WriteFile(path, b, 0o644))
		_, err := Load(dir, 1, 2)
		if err == nil {
			t.Fatalf("flip at %d accepted", c.off)
		}
		if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.section) {
			t.Errorf("flip at %d: error %q does not name %s / section %q", c.off, err, path, c.section)
		}
		if _, err := Load(dir, 0, 2); err != nil {
			t.Errorf("rank 0 should not read part 1: %v", err)
		}
	}
	for _, n := range []int{0, 50, len(orig) - 3} {
		mustNoErr(t, os.WriteFile(path, orig[:n], 0o644))
		if _, err := Load(dir, 0, 1); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("truncation to %d: error %v does not name %s", n, err, path)
		}
	}
	// Truncated and meta.json adjusted to the new size: the section reader reports it.
	m, err := ReadMeta(dir)
	mustNoErr(t, err)
	m.Stats.Parts[1].Bytes = int64(len(orig) - 3)
	mustNoErr(t, os.WriteFile(path, orig[:len(orig)-3], 0o644))
	if _, err := readPart(dir, m, 1); err == nil || !strings.Contains(err.Error(), "feature values") || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("truncated last section: %v", err)
	}
	restore()
	_, err = Load(dir, 1, 2)
	mustNoErr(t, err)
}

// TestWriteReplace: a partition directory is replaced, anything else is not touched.
func TestWriteReplace(t *testing.T) {
	ds := randomDataset(60, 3, 1, 3, true)
	dir, _ := writeRandom(t, ds, 4)
	owner := Random(60, 2, 1)
	mustNoErr(t, Write(dir, ds, owner, 2, MetaInfo{Method: "random"}))
	m, err := ReadMeta(dir)
	mustNoErr(t, err)
	if m.Parts != 2 {
		t.Fatalf("not replaced: %d parts", m.Parts)
	}
	if _, err := os.Stat(filepath.Join(dir, PartFile(3))); err == nil {
		t.Fatal("old part file survived")
	}
	other := filepath.Join(t.TempDir(), "data")
	mustNoErr(t, os.MkdirAll(other, 0o755))
	mustNoErr(t, os.WriteFile(filepath.Join(other, "keep.txt"), []byte("x"), 0o644))
	if err := Write(other, ds, owner, 2, MetaInfo{}); err == nil {
		t.Fatal("wrote over a non-partition directory")
	}
	if err := Write(filepath.Join(t.TempDir(), "p"), ds, owner[:10], 2, MetaInfo{}); err == nil {
		t.Fatal("short owner accepted")
	}
}

// On a full disk Write fails, leaves no DIR.tmp-* behind and keeps the
// previous partition directory loadable.
func TestWriteFullDisk(t *testing.T) {
	disk := testdataset.SmallDisk(t, 256<<10)
	dir := filepath.Join(disk, "parts")
	small := randomDataset(50, 3, 2, 1, true)
	mustNoErr(t, Write(dir, small, Random(small.NumNodes(), 2, 1), 2, MetaInfo{}))
	big := randomDataset(3000, 4, 64, 2, true) // 768 KB of features
	err := Write(dir, big, Random(big.NumNodes(), 2, 1), 2, MetaInfo{})
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("Write on a full disk: err = %v", err)
	}
	ents, _ := os.ReadDir(disk)
	if len(ents) != 1 || ents[0].Name() != "parts" {
		t.Fatalf("left behind on the disk: %v", ents)
	}
	sh, err := Load(dir, 0, 1)
	if err != nil || len(sh.Global) != small.NumNodes() {
		t.Fatalf("the previous directory was not kept: %v", err)
	}
}

// LoadBytes bounds what Load holds: at least the shard's own slices.
func TestLoadBytesCoversShard(t *testing.T) {
	ds := randomDataset(200, 4, 8, 3, true)
	dir, _ := writeRandom(t, ds, 4)
	m, err := ReadMeta(dir)
	mustNoErr(t, err)
	for _, ranks := range []int{1, 2, 4} {
		for rank := range ranks {
			sh, err := Load(dir, rank, ranks)
			mustNoErr(t, err)
			held := int64(8*len(sh.Global) + 4*len(graph.DenseData(sh.Features)) + 4*len(sh.Labels) + len(sh.Split) + 8*len(sh.Local.Ptr) +
				4*len(sh.Local.Idx) + 8*len(sh.Remote.Ptr) + 12*len(sh.Remote.Src))
			if est := LoadBytes(m, rank, ranks); est < held {
				t.Fatalf("rank %d of %d: estimate %d bytes, the shard holds %d", rank, ranks, est, held)
			}
		}
	}
	if LoadBytes(m, 0, 3) != 0 {
		t.Fatal("an estimate for 3 ranks of 4 parts")
	}
}

// TestLoadClassesMismatch: a part header claiming other classes than
// meta.json (checksums forged to match) is an error naming the file.
func TestLoadClassesMismatch(t *testing.T) {
	ds := randomDataset(200, 5, 3, 4, true)
	dir, _ := writeRandom(t, ds, 2)
	path := filepath.Join(dir, PartFile(1))
	b, err := os.ReadFile(path)
	mustNoErr(t, err)
	binary.LittleEndian.PutUint64(b[56:], 100)
	binary.LittleEndian.PutUint32(b[80:], container.Checksum(b[:80]))
	mustNoErr(t, os.WriteFile(path, b, 0o644))
	m, err := ReadMeta(dir)
	mustNoErr(t, err)
	m.Stats.Parts[1].CRC32C = container.Checksum(b)
	if _, err := readPart(dir, m, 1); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "100 classes") {
		t.Fatalf("a header with 100 classes: %v", err)
	}
}

// TestWriteLoadWeighted: edge weights survive Write and Load (the local and
// cut edges' weights, merged parts included) and Reorder; an unweighted
// dataset stays unweighted.
func TestWriteLoadWeighted(t *testing.T) {
	for _, sorted := range []bool{true, false} {
		ds := withWeights(randomDataset(300, 5, 3, 21, sorted), 5)
		const parts = 4
		dir, owner := writeRandom(t, ds, parts)
		m, err := ReadMeta(dir)
		mustNoErr(t, err)
		if !m.Weighted || m.FormatVersion != FormatVersion {
			t.Fatalf("meta weighted %v version %d", m.Weighted, m.FormatVersion)
		}
		for _, ranks := range []int{4, 2, 1} {
			for r := 0; r < ranks; r++ {
				got, err := Load(dir, r, ranks)
				mustNoErr(t, err)
				want := Split(ds, divide(owner, int32(parts/ranks)), r, ranks)
				if !want.Weighted() || len(want.Remote.Val) != len(want.Remote.Src) {
					t.Fatal("Split dropped the weights")
				}
				if err := shardEqual(got, want, !sorted); err != nil {
					t.Fatalf("sorted=%v ranks=%d rank=%d: %v", sorted, ranks, r, err)
				}
			}
		}
	}
	ds := withWeights(randomDataset(200, 4, 2, 3, true), 1)
	s := Split(ds, Random(200, 2, 1), 0, 2)
	perm, err := LocalOrder(s, "degree")
	mustNoErr(t, err)
	before := cloneShard(s)
	mustNoErr(t, s.Reorder(perm))
	for i, v := range perm {
		a, b := s.Local.Ptr[i], before.Local.Ptr[v]
		for k := range s.Local.Ptr[i+1] - a {
			if s.Local.Val[a+k] != before.Local.Val[b+k] {
				t.Fatalf("row %d: local weights not carried by Reorder", i)
			}
		}
		if !slices.Equal(s.Remote.Val[s.Remote.Ptr[i]:s.Remote.Ptr[i+1]], before.Remote.Val[before.Remote.Ptr[v]:before.Remote.Ptr[v+1]]) {
			t.Fatalf("row %d: remote weights not carried by Reorder", i)
		}
	}
}

// TestLoadVersion1: directories of format version 1 (no weight sections)
// and 2 (no sparse feature sections) are still read, as unweighted and
// dense.
func TestLoadVersion1(t *testing.T) {
	for _, version := range []int{2, 1} {
		loadOldVersion(t, version)
	}
}

func loadOldVersion(t *testing.T, version int) {
	ds := randomDataset(150, 4, 2, 8, true)
	dir, owner := writeRandom(t, ds, 2)
	m, err := ReadMeta(dir)
	mustNoErr(t, err)
	const emptySection = 20 // tag, zero, length, CRC
	for p := range 2 {
		path := filepath.Join(dir, PartFile(p))
		b, err := os.ReadFile(path)
		mustNoErr(t, err)
		b = b[:len(b)-(3+2*(2-version))*emptySection]
		binary.LittleEndian.PutUint32(b[8:], uint32(version))
		binary.LittleEndian.PutUint32(b[80:], container.Checksum(b[:80]))
		mustNoErr(t, os.WriteFile(path, b, 0o644))
		m.Stats.Parts[p].Bytes, m.Stats.Parts[p].CRC32C = int64(len(b)), container.Checksum(b)
	}
	m.FormatVersion = version
	mustNoErr(t, WriteMeta(dir, m))
	for r := range 2 {
		got, err := Load(dir, r, 2)
		mustNoErr(t, err)
		mustNoErr(t, shardEqual(got, Split(ds, owner, r, 2), false))
	}
	m.Weighted, m.SparseFeatures = version < 2, version == 2
	mustNoErr(t, WriteMeta(dir, m))
	if _, err := Load(dir, 0, 2); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("version %d", version)) {
		t.Fatalf("weighted version-1 or sparse version-2 meta: %v", err)
	}
}

// TestSparseFeatureParts: sparse features are written as CSR rows and read
// back as Split cuts them, one part per rank or two merged; LoadBytes counts
// their non-zeros, not their columns.
func TestSparseFeatureParts(t *testing.T) {
	ds := randomDataset(300, 4, 40, 3, true)
	for i := range graph.DenseData(ds.Features) {
		if i%7 != 0 {
			graph.DenseData(ds.Features)[i] = 0
		}
	}
	ds.Features = graph.SparseX(graph.SparseFeaturesOf(graph.DenseData(ds.Features), ds.NumNodes(), ds.FeatDim))
	dir, owner := writeRandom(t, ds, 4)
	m, err := ReadMeta(dir)
	mustNoErr(t, err)
	if !m.SparseFeatures || m.FormatVersion != 3 {
		t.Fatalf("meta: sparse %v, version %d", m.SparseFeatures, m.FormatVersion)
	}
	for _, ranks := range []int{4, 2} {
		for r := range ranks {
			got, err := Load(dir, r, ranks)
			mustNoErr(t, err)
			if ranks == 4 {
				mustNoErr(t, shardEqual(got, Split(ds, owner, r, 4), false))
			}
			if graph.SparseMatrix(got.Features) == nil || graph.DenseData(got.Features) != nil || graph.SparseMatrix(got.Features).NumRows != len(got.Global) {
				t.Fatalf("rank %d of %d: no sparse features", r, ranks)
			}
			for i, g := range got.Global {
				row := graph.SparseMatrix(ds.Features).Ptr[g+1] - graph.SparseMatrix(ds.Features).Ptr[g]
				if graph.SparseMatrix(got.Features).Ptr[i+1]-graph.SparseMatrix(got.Features).Ptr[i] != row {
					t.Fatalf("rank %d of %d: row of node %d has %d entries, want %d", r, ranks, g, graph.SparseMatrix(got.Features).Ptr[i+1]-graph.SparseMatrix(got.Features).Ptr[i], row)
				}
			}
		}
	}
	sparse := LoadBytes(m, 0, 4)
	m.SparseFeatures = false
	if sparse >= LoadBytes(m, 0, 4) {
		t.Fatalf("LoadBytes of sparse features %d is not below the dense estimate %d", sparse, LoadBytes(m, 0, 4))
	}
}

// TestWriteBadWeight: Write refuses a negative or non-finite weight
// before writing anything.
func TestWriteBadWeight(t *testing.T) {
	for _, bad := range []float32{float32(math.Inf(1)), -0.5} {
		ds := withWeights(randomDataset(100, 4, 0, 4, true), 2)
		ds.Graph.Val[3] = bad
		dir := filepath.Join(t.TempDir(), "parts")
		err := Write(dir, ds, make([]int32, 100), 1, MetaInfo{Method: "random"})
		if err == nil || !strings.Contains(err.Error(), "edge weight 3") {
			t.Fatalf("weight %v: %v", bad, err)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Fatalf("weight %v: %s written", bad, dir)
		}
	}
}

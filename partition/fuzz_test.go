package partition

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/graph"

	"github.com/supergcn/supergcn/internal/container"
)

// fuzzSeedDir writes a small valid partition directory for the seeds.
func fuzzSeedDir(f *testing.F) string {
	dir := filepath.Join(f.TempDir(), "p")
	ds := randomDataset(40, 3, 4, 1, true)
	if err := Write(dir, ds, Random(ds.NumNodes(), 2, 1), 2, MetaInfo{}); err != nil {
		f.Fatal(err)
	}
	return dir
}

// FuzzMeta reads meta.json: an error naming the file, or a Meta whose
// parts and sizes are usable.
func FuzzMeta(f *testing.F) {
	b, err := os.ReadFile(filepath.Join(fuzzSeedDir(f), MetaFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"format_version":1,"parts":1,"num_nodes":-1,"per_part":[{"part":0,"file":"part-00000.bin"}]}`))
	f.Add([]byte(`{"format_version":1,"parts":1,"num_classes":1000000000,"per_part":[{"part":0,"file":"part-00000.bin"}]}`))
	f.Add([]byte(`{"format_version":1,"parts":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, MetaFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := ReadMeta(dir)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		if m.Parts < 1 || len(m.Stats.Parts) != m.Parts || m.NumNodes < 0 || m.FeatDim < 0 || m.NumClasses < 0 || m.NumClasses > graph.MaxClasses {
			t.Fatalf("accepted meta %+v", m)
		}
		// Load with each rank count must fail cleanly (the parts are absent).
		if _, err := Load(dir, 0, 1); err == nil && m.Parts == 1 {
			t.Fatal("loaded a part that does not exist")
		}
	})
}

// FuzzPartFile reads one part file. The meta.json beside it is derived
// from the file (its header counts, size and checksum), so that mutations
// get past the cross-checks into the sections and the shard checks; the
// section checksums the target leaves as they are.
func FuzzPartFile(f *testing.F) {
	dir := fuzzSeedDir(f)
	for p := range 2 {
		b, err := os.ReadFile(filepath.Join(dir, PartFile(p)))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(checkPartFile)
}

// checkPartFile is FuzzPartFile's body.
func checkPartFile(t *testing.T, data []byte) {
	if len(data) < partHeaderSize {
		return
	}
	h := bytes.Clone(data[:partHeaderSize])
	binary.LittleEndian.PutUint32(h[80:], container.Checksum(h[:80]))
	data = append(h, data[partHeaderSize:]...)
	var v [8]int64
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(data[16+8*i:]))
	}
	part, parts := v[0], v[1]
	if parts < 1 || parts > 8 || part < 0 || part >= parts {
		return
	}
	m := &Meta{FormatVersion: FormatVersion, Parts: int(parts), NumNodes: v[2], FeatDim: int(v[4]),
		HasLabels: binary.LittleEndian.Uint32(data[12:])&flagHasLabels != 0}
	for p := range int(parts) {
		m.Stats.Parts = append(m.Stats.Parts, PartStat{Part: p, File: PartFile(p)})
	}
	m.Stats.Parts[part] = PartStat{Part: int(part), File: PartFile(int(part)), Nodes: v[3], LocalEdges: v[6], CutEdges: v[7],
		Bytes: int64(len(data)), CRC32C: container.Checksum(data)}
	mb, err := json.Marshal(m)
	if err != nil {
		return
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, MetaFile), mb, 0o644)
	os.WriteFile(filepath.Join(dir, PartFile(int(part))), data, 0o644)
	m2, err := ReadMeta(dir)
	if err != nil {
		return
	}
	sh, err := readPart(dir, m2, int(part))
	if err != nil {
		if strings.Contains(err.Error(), "\n") {
			t.Fatalf("error is not one line: %q", err)
		}
		return
	}
	if err := checkShard(sh); err != nil {
		t.Fatalf("readPart returned a shard that fails its checks: %v", err)
	}
}

package graph

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseSplit(t *testing.T) {
	for _, c := range []struct {
		in   string
		want RandomSplit
	}{
		{"random:0.6,0.2", RandomSplit{0.6, 0.2, 0.2, 0}},
		{"random:0.5,0.25,0.1:42", RandomSplit{0.5, 0.25, 0.1, 42}},
		{"random:1,0", RandomSplit{1, 0, 0, 0}},
	} {
		name, r, err := ParseSplit(c.in)
		if err != nil || name != "" || r == nil || r.Seed != c.want.Seed || r.Train != c.want.Train || r.Valid != c.want.Valid ||
			r.Test < c.want.Test-1e-12 || r.Test > c.want.Test+1e-12 {
			t.Errorf("%s: %q %+v %v", c.in, name, r, err)
		}
	}
	if name, r, err := ParseSplit("public"); name != "public" || r != nil || err != nil {
		t.Errorf("public: %q %v %v", name, r, err)
	}
	for in, want := range map[string]string{
		"random":               "want random:TRAIN,VALID",
		"random:0.6":           "1 fractions",
		"random:0.6,0.2,0.1,1": "4 fractions",
		"random:1.5,0":         "fraction 1 (1.5) is not a number in [0,1]",
		"random:0.5,-0.1":      "fraction 2 (-0.1)",
		"random:0.7,0.2,0.2":   "sum to 1.1",
		"random:0.6,x":         "fraction 2 (x)",
		"random:0.6,0.2:-1":    `seed "-1"`,
	} {
		_, _, err := ParseSplit(in)
		if err == nil || !strings.HasPrefix(err.Error(), "graph.LoadOptions.Split: ") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}

func TestRandomSplitExactAndSeeded(t *testing.T) {
	labels := make([]int32, 1000)
	for v := range labels {
		if v%7 == 3 {
			labels[v] = -1
		}
	}
	l := 0
	for _, y := range labels {
		if y >= 0 {
			l++
		}
	}
	split := func(spec string) *Dataset {
		ds := &Dataset{Name: "t", Graph: &CSR{NumRows: len(labels)}, Labels: labels}
		_, r, err := ParseSplit(spec)
		if err == nil {
			err = randomSplit(ds, r, spec)
		}
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	a, b, c := split("random:0.5,0.2:3"), split("random:0.5,0.2:3"), split("random:0.5,0.2:4")
	if len(a.Train) != l/2 || len(a.Valid) != l/5 || len(a.Train)+len(a.Valid)+len(a.Test) != l {
		t.Errorf("sizes %d/%d/%d of %d labelled", len(a.Train), len(a.Valid), len(a.Test), l)
	}
	if !slices.Equal(a.Train, b.Train) || !slices.Equal(a.Test, b.Test) || slices.Equal(a.Train, c.Train) {
		t.Error("split not a function of the seed")
	}
	m := a.SplitMask()
	for v, y := range labels {
		if (y < 0) != (m[v] == 0) || (m[v]&(m[v]-1)) != 0 {
			t.Fatalf("node %d (label %d) has split bits %b", v, y, m[v])
		}
	}
	// A part left out: 0.1/0.1/0.1 keeps 30 % of the labelled nodes.
	d := split("random:0.1,0.1,0.1")
	if n := len(d.Train) + len(d.Valid) + len(d.Test); n != 3*(l/10) {
		t.Errorf("0.1,0.1,0.1: %d nodes", n)
	}
	if err := randomSplit(&Dataset{Name: "s", Graph: &CSR{NumRows: 3}}, &RandomSplit{Train: 1}, "random:1,0"); err == nil || !strings.Contains(err.Error(), "no labels") {
		t.Errorf("unlabelled: %v", err)
	}
}

func TestSplitFiles(t *testing.T) {
	dir := makeOGB(t, toyOGB())
	sd := filepath.Join(t.TempDir(), "s")
	os.MkdirAll(sd, 0o755)
	writeNpy(t, filepath.Join(sd, "train.npy"), "|b1", "(3,)", []uint8{1, 0, 0})
	writeNpy(t, filepath.Join(sd, "val.npy"), "<i4", "(0,)", []int32{})
	writeFile(t, sd, "test.csv.gz", "2\n")
	ds, err := Load(dir, LoadOptions{SplitFiles: sd})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ds.Train, []int32{0}) || len(ds.Valid) != 0 || !slices.Equal(ds.Test, []int32{2}) {
		t.Errorf("split %v %v %v", ds.Train, ds.Valid, ds.Test)
	}
	// The same files for an edge list (no labels: any node may be listed).
	el := writeFile(t, t.TempDir(), "g.txt", "0 1\n1 2\n")
	if ds, err = Load(el, LoadOptions{SplitFiles: sd}); err != nil || !slices.Equal(ds.Test, []int32{2}) {
		t.Errorf("edge list: %v %v", ds, err)
	}
	for _, c := range []struct {
		file, content string
		want          string
	}{
		{"test.npy", "", "node 1 has no label"},
		{"val.npy", "", "node 0 is also in the train split"},
		{"train.npy", "", "mask of 2 entries for 3 nodes"},
		{"test.csv.gz", "5\n", "node id 5 outside [0,3)"},
	} {
		os.Remove(filepath.Join(sd, "test.npy"))
		writeFile(t, sd, "test.csv.gz", "2\n")
		writeNpy(t, filepath.Join(sd, "val.npy"), "<i4", "(0,)", []int32{})
		writeNpy(t, filepath.Join(sd, "train.npy"), "|b1", "(3,)", []uint8{1, 0, 0})
		switch c.want {
		case "node 1 has no label":
			os.Remove(filepath.Join(sd, "test.csv.gz"))
			writeNpy(t, filepath.Join(sd, "test.npy"), "<i8", "(1,)", []int64{1})
		case "node 0 is also in the train split":
			writeNpy(t, filepath.Join(sd, "val.npy"), "<i8", "(1,)", []int64{0})
		case "mask of 2 entries for 3 nodes":
			writeNpy(t, filepath.Join(sd, "train.npy"), "|b1", "(2,)", []uint8{1, 0})
		default:
			writeFile(t, sd, c.file, c.content)
		}
		_, err := Load(dir, LoadOptions{SplitFiles: sd})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), sd) {
			t.Errorf("%s: %v, want %q", c.file, err, c.want)
		}
	}
	// Two files for one part: which holds the split is ambiguous.
	for _, c := range []struct{ file, want string }{
		{"valid.csv", filepath.Join(sd, "valid.csv") + " and " + filepath.Join(sd, "val.npy") + " both hold the valid split"},
		{"train.csv", filepath.Join(sd, "train.npy") + " and " + filepath.Join(sd, "train.csv") + " both hold the train split"},
	} {
		writeFile(t, sd, c.file, "0\n")
		_, err := Load(dir, LoadOptions{SplitFiles: sd})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s beside: %v, want %q", c.file, err, c.want)
		}
		os.Remove(filepath.Join(sd, c.file))
	}
	os.Remove(filepath.Join(sd, "train.npy"))
	if _, err := Load(dir, LoadOptions{SplitFiles: sd}); err == nil || !strings.Contains(err.Error(), "no train.npy") {
		t.Errorf("missing train: %v", err)
	}
	if _, err := Load(dir, LoadOptions{SplitFiles: sd, Split: "random:0.5,0.5"}); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Errorf("both: %v", err)
	}
}

func TestSplitNameRefusedOffOGB(t *testing.T) {
	ds := &Dataset{Graph: FromCOO(2, 2, []int32{0}, []int32{1}, nil)}
	bin := filepath.Join(t.TempDir(), "g.sgb")
	if err := WriteBinary(bin, ds); err != nil {
		t.Fatal(err)
	}
	el := writeFile(t, t.TempDir(), "g.txt", "0 1\n")
	for _, p := range []string{bin, el} {
		if _, err := Load(p, LoadOptions{Split: "public"}); err == nil || !strings.Contains(err.Error(), "only OGB directories have named splits") {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := Load(makeOGB(t, toyOGB()), LoadOptions{Split: "nosuch"}); err == nil || !strings.Contains(err.Error(), `"nosuch": no such split`) {
		t.Errorf("ogb: %v", err)
	}
}

// zip64Of writes one stored member as a Zip64 archive does when it holds
// more than 4 GiB: 32-bit sizes and offsets all ones, the real values in
// Zip64 extra fields and end records.
func zip64Of(t *testing.T, path, name string, data []byte) {
	t.Helper()
	var b bytes.Buffer
	le := func(v ...any) {
		for _, x := range v {
			binary.Write(&b, binary.LittleEndian, x)
		}
	}
	crc, size := crc32.ChecksumIEEE(data), uint64(len(data))
	le(uint32(0x04034b50), uint16(45), uint16(0), uint16(0), uint32(0), crc, ^uint32(0), ^uint32(0), uint16(len(name)), uint16(20))
	b.WriteString(name)
	le(uint16(1), uint16(16), size, size)
	b.Write(data)
	cd := uint64(b.Len())
	le(uint32(0x02014b50), uint16(45), uint16(45), uint16(0), uint16(0), uint32(0), crc, ^uint32(0), ^uint32(0),
		uint16(len(name)), uint16(28), uint16(0), uint16(0), uint16(0), uint32(0), ^uint32(0))
	b.WriteString(name)
	le(uint16(1), uint16(24), size, size, uint64(0))
	cdSize, eocd64 := uint64(b.Len())-cd, uint64(b.Len())
	le(uint32(0x06064b50), uint64(44), uint16(45), uint16(45), uint32(0), uint32(0), uint64(1), uint64(1), cdSize, cd)
	le(uint32(0x07064b50), uint32(0), eocd64, uint32(1))
	le(uint32(0x06054b50), uint16(0), uint16(0), uint16(0xffff), uint16(0xffff), ^uint32(0), ^uint32(0), uint16(0))
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestNpzZip64(t *testing.T) {
	p := filepath.Join(t.TempDir(), "z.npz")
	zip64Of(t, p, "edge_index.npy", []byte(npyMember("<i8", "(2, 3)", []int64{0, 1, 2, 1, 2, 0})))
	ds, err := Load(p, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.NumNodes() != 3 || !slices.Equal(ds.Graph.Idx, []int32{2, 0, 1}) {
		t.Errorf("graph %+v", ds.Graph)
	}
}

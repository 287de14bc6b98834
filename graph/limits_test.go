package graph

import (
	"path/filepath"
	"runtime/debug"
	"testing"
)

// A node id or count that implies more nodes than memory can hold is an
// error naming the line, not an allocation that kills the process (run
// under a 1 GiB Go memory limit, as under a batch system's limit).
func TestNodeCountBeyondMemory(t *testing.T) {
	old := debug.SetMemoryLimit(1 << 30)
	defer debug.SetMemoryLimit(old)
	dir := t.TempDir()
	p := writeFile(t, dir, "big.edges", "0 1\n1 999999999\n")
	_, err := LoadEdgeList(p)
	wantParseError(t, err, p, 2, "node id 999999999 implies 1000000000 nodes")

	p = writeFile(t, dir, "big.graph", "% huge\n2147483647 1\n")
	_, err = LoadMetis(p)
	wantParseError(t, err, p, 2, "the header's vertex count implies 2147483647 nodes")

	files := toyOGB()
	files["raw/num-node-list.csv"] = "2000000000\n"
	d := makeOGB(t, files)
	_, err = LoadOGB(d, "")
	wantParseError(t, err, filepath.Join(d, "raw", "num-node-list.csv"), 1, "the node count implies 2000000000 nodes")

	files = toyOGB()
	delete(files, "raw/num-node-list.csv")
	files["raw/edge.csv"] = "0,1\n1,2\n2,1999999999\n"
	d = makeOGB(t, files)
	_, err = LoadOGB(d, "")
	wantParseError(t, err, filepath.Join(d, "raw", "edge.csv"), 3, "field 2: node id 1999999999 implies")
}

// A count read from another file (num-edge-list.csv saying 2^31) sizes the
// slices only as far as the file being read can hold lines.
func TestLineHintBoundedByFile(t *testing.T) {
	p := writeFile(t, t.TempDir(), "e.csv", "0,1\n1,2\n2,0\n")
	lr, err := openLines(p)
	if err != nil {
		t.Fatal(err)
	}
	defer lr.Close()
	lr.hint = 1 << 31
	if est := lr.estimateLines(); est > 7 {
		t.Fatalf("estimateLines %d for a 12-byte file", est)
	}
	gz := &lineReader{size: -1, hint: 1 << 31}
	if est := gz.estimateLines(); est > maxPrealloc {
		t.Fatalf("estimateLines %d for a compressed file", est)
	}
}

package testdataset

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"testing"
)

// ForgeArcCount rewrites the binary dataset (.sgb) at path so that its
// header states arcs arcs: the index section and every later one are laid
// out for that count (checksum renewed), and the file becomes the header
// alone, extended sparsely to the size the layout implies. It skips the
// test where the file system cannot hold such a sparse file.
func ForgeArcCount(t testing.TB, path string, arcs uint64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const nsec, fixed, entry = 9, 96, 24 // graph/binfmt.go's header layout
	le := binary.LittleEndian
	le.PutUint64(b[32:], arcs)
	le.PutUint64(b[fixed+entry+16:], arcs*4) // idx section length
	end := uint64(0)
	for i := 0; i < nsec; i++ {
		e := b[fixed+entry*i:]
		if i > 0 {
			le.PutUint64(e[8:], (end+63)&^63)
		}
		end = le.Uint64(e[8:]) + le.Uint64(e[16:])
	}
	le.PutUint32(b[fixed+entry*nsec:], crc32.Checksum(b[:fixed+entry*nsec], crc32.MakeTable(crc32.Castagnoli)))
	if err := os.WriteFile(path, b[:fixed+entry*nsec+4], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, int64(end)); err != nil {
		t.Skipf("cannot make a %d-byte sparse file here: %v", end, err)
	}
}

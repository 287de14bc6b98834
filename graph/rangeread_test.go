package graph

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// readAllRanges reads path as p range readers would (each its node range
// and its share of the splits) and verifies the checksums together.
func readAllRanges(path string, p int) error {
	var all []int64
	var first *BinaryRange
	for rank := 0; rank < p; rank++ {
		r, err := OpenBinaryRange(path)
		if err != nil {
			return err
		}
		defer r.Close()
		if first == nil {
			first = r
		}
		lo, hi := r.Nodes*int64(rank)/int64(p), r.Nodes*int64(rank+1)/int64(p)
		if _, _, err := r.Rows(lo, hi); err != nil {
			return err
		}
		if _, err := r.Features(lo, hi); err != nil {
			return err
		}
		if _, err := r.Labels(lo, hi); err != nil {
			return err
		}
		for k, total := range []int64{r.NTrain, r.NValid, r.NTest} {
			if _, err := r.SplitIDs(k, total*int64(rank)/int64(p), total*int64(rank+1)/int64(p)); err != nil {
				return err
			}
		}
		all = append(all, r.ReadSpans()...)
	}
	return first.VerifySpans(all)
}

// TestBinaryRangeChecksums: readers that each read a share of a binary
// dataset together verify every section they read; a flipped bit in any
// of them is a checksum mismatch at every reader count.
func TestBinaryRangeChecksums(t *testing.T) {
	path, good := binWriteBytes(t)
	for p := 1; p <= 7; p++ {
		if err := readAllRanges(path, p); err != nil {
			t.Fatalf("intact file, %d readers: %v", p, err)
		}
	}
	le := binary.LittleEndian
	for i := 0; i < binNumSection; i++ {
		if i == secVal { // edge weights are not read by range readers
			continue
		}
		e := good[binFixedSize+binEntrySize*i:]
		off, n := le.Uint64(e[8:]), le.Uint64(e[16:])
		for _, at := range []uint64{off, off + n/2, off + n - 1} {
			b := slices.Clone(good)
			b[at] ^= 0x01
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			for p := 1; p <= 4; p++ {
				err := readAllRanges(path, p)
				if err == nil || !strings.HasPrefix(err.Error(), path+": section ") {
					t.Errorf("bit flipped at byte %d (section %s), %d readers: %v", at, binSectionName(i), p, err)
				}
			}
		}
	}
}

// TestOGBTwoFormsOfATable: raw/edge.csv beside raw/edge.csv.gz (or two
// forms of a split file) is an error naming both, not a silent choice.
func TestOGBTwoFormsOfATable(t *testing.T) {
	for _, extra := range []string{"raw/edge.csv.gz", "split/public/train.csv.bz2"} {
		dir := t.TempDir()
		files := map[string]string{
			"raw/edge.csv": "0,1\n1,2\n", "raw/num-node-list.csv": "3\n", "raw/node-label.csv": "0\n1\n0\n",
			"split/public/train.csv": "0\n", "split/public/valid.csv": "1\n", "split/public/test.csv": "2\n",
			extra: "x",
		}
		for name, content := range files {
			p := filepath.Join(dir, name)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Load(dir, LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), filepath.Base(extra)) || !strings.Contains(err.Error(), "two forms of one table") {
			t.Errorf("%s beside its .csv: %v", extra, err)
		}
	}
}

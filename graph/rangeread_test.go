package graph

import (
	"encoding/binary"
	"os"
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

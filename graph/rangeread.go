package graph

// Range readers: one reader of many (an MPI rank) reads only its share of an
// input. Text files are split by byte range, each share starting at the
// first line that begins at or after its start offset; binary arrays (.sgb
// sections, .npy) are read by row range with pread, never whole. The
// partition/dist package drives them across ranks. Node ids are int64, up
// to MaxRangeNodeID, except in a .sgb file, whose format stores int32 ids.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/supergcn/supergcn/internal/container"
)

// TextRange is the share of a text file that reader `part` of `parts`
// parses: the whole lines that begin in [Start, End). A compressed file
// cannot be entered in the middle: reader 0 gets all of it (Compressed set,
// Lines unknown and 0) and the others an empty share.
type TextRange struct {
	Path       string
	Start, End int64
	Lines      int64 // lines in the share (a last line without "\n" counts)
	Compressed bool  // a .gz/.bz2 input read whole by reader 0
	// Progress, when set, is called with the bytes of the share (or of the
	// compressed file) read so far, every few MB.
	Progress func(bytes int64)
}

// countingReader reports the bytes read through it every 4 MB.
type countingReader struct {
	r        io.Reader
	n, last  int64
	progress func(int64)
}

func (c *countingReader) Read(b []byte) (int, error) {
	k, err := c.r.Read(b)
	c.n += int64(k)
	if c.n-c.last >= 4<<20 || (err != nil && c.n != c.last) {
		c.last = c.n
		c.progress(c.n)
	}
	return k, err
}

// OpenTextRange finds the share of path that reader part of parts reads and
// counts its lines.
func OpenTextRange(path string, part, parts int) (*TextRange, error) {
	f, st, err := openStat(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var magic [3]byte
	k, _ := f.ReadAt(magic[:], 0)
	size := st.Size()
	t := &TextRange{Path: path}
	if strings.HasSuffix(path, ".gz") || strings.HasSuffix(path, ".bz2") ||
		bytes.HasPrefix(magic[:k], []byte{0x1f, 0x8b}) || bytes.HasPrefix(magic[:k], []byte("BZh")) {
		t.Compressed = part == 0
		if t.Compressed {
			t.End = size
		}
		return t, nil
	}
	if t.Start, err = lineStart(f, size*int64(part)/int64(parts), size); err != nil {
		return nil, err
	}
	if t.End, err = lineStart(f, size*int64(part+1)/int64(parts), size); err != nil {
		return nil, err
	}
	if part+1 == parts {
		t.End = size
	}
	t.End = max(t.End, t.Start)
	if t.Lines, err = countLines(f, t.Start, t.End); err != nil {
		return nil, err
	}
	return t, nil
}

// lineStart returns the offset of the first line that begins at or after off.
func lineStart(f *os.File, off, size int64) (int64, error) {
	if off <= 0 {
		return 0, nil
	}
	if off >= size {
		return size, nil
	}
	buf := make([]byte, 64<<10)
	for pos := off - 1; pos < size; {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), size-pos)], pos)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return pos + int64(i) + 1, nil
		}
		if err != nil && err != io.EOF {
			return 0, err
		}
		pos += int64(n)
		if n == 0 {
			break
		}
	}
	return size, nil
}

// countLines counts the lines of [start, end) as lineReader returns them.
func countLines(f *os.File, start, end int64) (int64, error) {
	buf := make([]byte, 1<<20)
	var n int64
	last := byte('\n')
	for pos := start; pos < end; {
		k, err := f.ReadAt(buf[:min(int64(len(buf)), end-pos)], pos)
		n += int64(bytes.Count(buf[:k], []byte{'\n'}))
		if k > 0 {
			last = buf[k-1]
		}
		pos += int64(k)
		if err != nil && err != io.EOF {
			return 0, err
		}
		if k == 0 {
			return 0, io.ErrUnexpectedEOF
		}
	}
	if last != '\n' {
		n++
	}
	return n, nil
}

// reader returns a lineReader over the share whose first line is numbered
// firstLine (1-based, global to the file).
func (t *TextRange) reader(firstLine int64) (*lineReader, error) {
	f, _, err := container.OpenInput(t.Path)
	if err != nil {
		return nil, err
	}
	var r io.Reader = io.NewSectionReader(f, t.Start, t.End-t.Start)
	if t.Progress != nil {
		r = &countingReader{r: r, progress: t.Progress}
	}
	if t.Compressed {
		lr, err := newCompressedLines(t.Path, f, r)
		if err != nil {
			f.Close()
		}
		return lr, err
	}
	return &lineReader{name: t.Path, r: bufio.NewReaderSize(r, rawBufSize), closers: []io.Closer{f},
		size: t.End - t.Start, bufSize: lineBufSize, line: firstLine - 1}, nil
}

// EdgeChunk is what one share of an edge list holds.
type EdgeChunk struct {
	Src, Dst  []int64
	Val       []float32 // the edges' weights (third field), nil when none
	Weighted  bool      // the edges carry a third (weight) field
	Cols      int       // fields per edge line (2 or 3; 0 when the share has no edge)
	FirstLine int64     // line of the share's first edge (0 when none)
	MaxID     int64     // largest node id (-1 when none)
	Hint      int64     // node count stated in a comment before the share's first edge, -1 if none
}

// ReadEdgeList parses the share as an edge list (the syntax of
// LoadEdgeList); firstLine numbers its first line in errors. Weights are
// parsed (a bad one is an error) into Val.
func (t *TextRange) ReadEdgeList(firstLine int64) (*EdgeChunk, error) {
	lr, err := t.reader(firstLine)
	if err != nil {
		return nil, err
	}
	defer lr.Close()
	b, err := scanEdgeList(lr, rangeIDs)
	if err != nil {
		return nil, err
	}
	return &EdgeChunk{Src: b.src.i64, Dst: b.dst.i64, Val: b.val, Weighted: b.cols == 3, Cols: b.cols, FirstLine: b.firstLine,
		MaxID: b.maxID, Hint: b.hint}, nil
}

// ReadEdgeCSV parses the share as OGB "src,dst" lines with ids in [0, n)
// (n < 0: any id up to MaxRangeNodeID).
func (t *TextRange) ReadEdgeCSV(firstLine int64, n int64) (src, dst []int64, err error) {
	lr, err := t.reader(firstLine)
	if err != nil {
		return nil, nil, err
	}
	defer lr.Close()
	s, d, err := parseEdgeCSVIDs(lr, n, rangeIDs)
	return s.i64, d.i64, err
}

// ReadLabels parses the share as one label a line (OGB node-label.csv).
func (t *TextRange) ReadLabels(firstLine int64) ([]int32, error) {
	lr, err := t.reader(firstLine)
	if err != nil {
		return nil, err
	}
	defer lr.Close()
	return parseLabels(lr)
}

// ReadFloatRows parses the share as rows of comma-separated floats (OGB
// node-feat.csv); dim is the row length found (0 for an empty share).
func (t *TextRange) ReadFloatRows(firstLine int64) (x []float32, dim int, err error) {
	lr, err := t.reader(firstLine)
	if err != nil {
		return nil, 0, err
	}
	defer lr.Close()
	return parseFloatTable(lr)
}

// ReadEdgeWeights parses the share as one edge weight a line (OGB
// edge_weight.csv).
func (t *TextRange) ReadEdgeWeights(firstLine int64) ([]float32, error) {
	lr, err := t.reader(firstLine)
	if err != nil {
		return nil, err
	}
	defer lr.Close()
	return parseEdgeWeights(lr)
}

// ReadNodeIDs parses the share as one node id a line in [0, n) (an OGB
// split file).
func (t *TextRange) ReadNodeIDs(firstLine int64, n int64) ([]int64, error) {
	lr, err := t.reader(firstLine)
	if err != nil {
		return nil, err
	}
	defer lr.Close()
	var ids []int64
	err = lr.eachInt(func(f []byte, x int64, ok bool) error {
		if !ok || x < 0 || x >= n {
			return errorf(lr.name, lr.line, "bad node id %s (want an integer in [0,%d))", quote(f), n)
		}
		ids = append(ids, x)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// ReadCount reads the single count of an OGB num-node-list.csv (up to
// math.MaxInt64).
func ReadCount(path string) (int, error) { return readCount(path) }

// FindOGBData returns raw/<base>.npy (when npy), .csv, .csv.gz or .csv.bz2
// under the OGB directory's raw/, whichever exists first; "" if none.
func FindOGBData(raw, base string, npy bool) string { return findData(raw, base, npy) }

// BinaryRange reads row ranges of a binary dataset (.sgb) with pread: the
// header is checked (magic, version, header CRC, section layout) on open,
// the structure of every slice read as it is read. Each reader checksums the bytes it reads (ReadSpans); VerifySpans
// combines the CRCs of all readers into each section's and compares it
// with the stored one, so no reader reads more than its share.
type BinaryRange struct {
	Path                  string
	Name                  string
	Nodes, NNZ            int64
	FeatDim, NumClasses   int
	HasLabels, Weighted   bool
	NTrain, NValid, NTest int64
	// SparseFeatures: the features are stored as CSR rows (flag 8), read
	// with SparseFeatureRows.
	SparseFeatures bool
	f              *os.File
	h              *binHeader
	spans          [binNumSection][]span // each piece of a section this reader read, in reading order
	scattered      bool                  // a section was read in more than spanSlots pieces
}

// span is the byte range [off, off+n) of a section that one reader read,
// with its CRC32-C.
type span struct {
	off, n int64
	crc    uint32
}

// OpenBinaryRange opens path and checks its header.
func OpenBinaryRange(path string) (*BinaryRange, error) {
	f, st, err := container.OpenInput(path)
	if err != nil {
		return nil, err
	}
	b := make([]byte, binHeaderSize())
	n, _ := f.ReadAt(b, 0)
	h, err := binDecodeHeader(path, b[:n], st.Size())
	if err != nil {
		f.Close()
		return nil, err
	}
	r := &BinaryRange{Path: path, Nodes: h.nodes, NNZ: h.nnz, FeatDim: int(h.featDim), NumClasses: int(h.classes),
		HasLabels: h.flags&binFlagLabels != 0, Weighted: h.flags&binFlagWeights != 0,
		NTrain: h.nTrain, NValid: h.nValid, NTest: h.nTest, f: f, h: h}
	if h.flags&binFlagFeatures == 0 {
		r.FeatDim = 0
	}
	r.SparseFeatures = h.flags&binFlagSparse != 0
	name := make([]byte, h.nameLen)
	if err := r.pread(secName, name, 0); err != nil {
		f.Close()
		return nil, err
	}
	r.cover(secName, name, 0)
	r.Name = string(name)
	return r, nil
}

// cover adds the bytes b, read from byte off of section sec, to what this
// reader read: they extend the last piece read of the section when they
// follow it, else start a new piece.
func (r *BinaryRange) cover(sec int, b []byte, off int64) {
	if len(b) == 0 {
		return
	}
	sp := r.spans[sec]
	if k := len(sp) - 1; k >= 0 && off == sp[k].off+sp[k].n {
		sp[k].crc = container.UpdateChecksum(sp[k].crc, b)
		sp[k].n += int64(len(b))
		return
	}
	if len(sp) == spanSlots {
		r.scattered = true
		return
	}
	r.spans[sec] = append(sp, span{off: off, n: int64(len(b)), crc: container.Checksum(b)})
}

// spanFields is the number of int64 values per piece in ReadSpans, and
// spanSlots the pieces of a section a reader may read (sparse features
// are read as their header, offsets, ids and values).
const (
	spanFields = 3
	spanSlots  = 4
)

// ReadSpans returns, for every section, the byte ranges this reader read
// and their CRC32-C as spanSlots (offset, length, crc) triples (length 0:
// none): the message each reader sends to the others for VerifySpans.
func (r *BinaryRange) ReadSpans() []int64 {
	out := make([]int64, 0, spanFields*spanSlots*binNumSection)
	for _, sps := range r.spans {
		for k := range spanSlots {
			var sp span
			if k < len(sps) {
				sp = sps[k]
			}
			if r.scattered {
				sp.n = -1
			}
			out = append(out, sp.off, sp.n, int64(sp.crc))
		}
	}
	return out
}

// VerifySpans checks the stored checksum of every section that the readers
// together read whole: all holds the ReadSpans of every reader, one after
// the other. A section no reader touched is not checked; one read only in
// part is an error (it cannot be verified).
func (r *BinaryRange) VerifySpans(all []int64) error {
	per := spanFields * spanSlots * binNumSection
	if len(all)%per != 0 {
		return binError(r.Path, "checksum spans: %d values, want a multiple of %d", len(all), per)
	}
	for sec := range binNumSection {
		var got []span
		for k := 0; k < len(all); k += per {
			for j := range spanSlots {
				e := all[k+spanFields*(spanSlots*sec+j):]
				if e[1] < 0 {
					return binError(r.Path, "section %s: read in scattered pieces, its checksum cannot be verified", binSectionName(sec))
				}
				if e[1] > 0 {
					got = append(got, span{off: e[0], n: e[1], crc: uint32(e[2])})
				}
			}
		}
		if err := r.verifySection(sec, got); err != nil {
			return err
		}
	}
	return nil
}

// verifySection combines the readers' spans of section sec (identical
// duplicates count once) and compares the result with the stored CRC.
func (r *BinaryRange) verifySection(sec int, spans []span) error {
	if len(spans) == 0 {
		return nil
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].off < spans[j].off })
	name, s := binSectionName(sec), r.h.sections[sec]
	var crc uint32
	var end int64
	for i, sp := range spans {
		if i > 0 && sp.off == spans[i-1].off && sp.n == spans[i-1].n && sp.crc == spans[i-1].crc {
			continue
		}
		if sp.off != end {
			return binError(r.Path, "section %s: readers read bytes from %d, not from %d: its checksum cannot be verified", name, sp.off, end)
		}
		crc = container.CombineChecksum(crc, sp.crc, sp.n)
		end += sp.n
	}
	if uint64(end) != s.length {
		return binError(r.Path, "section %s: readers read %d of its %d bytes: its checksum cannot be verified", name, end, s.length)
	}
	if crc != s.crc {
		return binError(r.Path, "section %s: checksum mismatch (stored %08x, computed %08x)", name, s.crc, crc)
	}
	return nil
}

// Close closes the file.
func (r *BinaryRange) Close() error { return r.f.Close() }

// pread reads len(b) bytes of section sec from byte off of the section.
func (r *BinaryRange) pread(sec int, b []byte, off int64) error {
	s := r.h.sections[sec]
	if off < 0 || uint64(off)+uint64(len(b)) > s.length {
		return binError(r.Path, "section %s: read of %d bytes at %d beyond its %d", binSectionName(sec), len(b), off, s.length)
	}
	if _, err := r.f.ReadAt(b, int64(s.offset)+off); err != nil {
		return binError(r.Path, "section %s: %v", binSectionName(sec), err)
	}
	return nil
}

// readLE reads count little-endian values of T from element index at of
// sec; the first covered of them count as this reader's share of the
// section's checksum.
func readLE[T container.Fixed](r *BinaryRange, sec int, at, count, covered int64) ([]T, error) {
	var zero [1]T
	size := int64(len(container.AsBytes(zero[:])))
	out := make([]T, count)
	b := container.AsBytes(out)
	if err := r.pread(sec, b, at*size); err != nil {
		return nil, err
	}
	r.cover(sec, b[:covered*size], at*size)
	if !container.HostLE {
		container.SwapBytes(b, int(size))
	}
	return out, nil
}

// Rows returns the in-neighbour lists of nodes [lo, hi): ptr (hi-lo+1
// offsets from 0) and idx, structure checked.
func (r *BinaryRange) Rows(lo, hi int64) (ptr []int64, idx []int32, err error) {
	if lo < 0 || hi < lo || hi > r.Nodes {
		return nil, nil, binError(r.Path, "rows [%d,%d) outside [0,%d)", lo, hi, r.Nodes)
	}
	covered := hi - lo // the next reader's first offset is its own
	if hi == r.Nodes {
		covered++
	}
	if ptr, err = readLE[int64](r, secPtr, lo, hi-lo+1, covered); err != nil {
		return nil, nil, err
	}
	base := ptr[0]
	if (lo == 0 && base != 0) || ptr[hi-lo] > r.NNZ {
		return nil, nil, binError(r.Path, "section ptr: offsets of rows [%d,%d) outside [0,%d]", lo, hi, r.NNZ)
	}
	for i := range ptr {
		if i > 0 && ptr[i] < ptr[i-1] {
			return nil, nil, binError(r.Path, "section ptr: offsets decrease at row %d", lo+int64(i)-1)
		}
		ptr[i] -= base
	}
	if idx, err = readLE[int32](r, secIdx, base, ptr[hi-lo], ptr[hi-lo]); err != nil {
		return nil, nil, err
	}
	for k, u := range idx {
		if u < 0 || int64(u) >= r.Nodes {
			return nil, nil, binError(r.Path, "section idx: entry %d has column %d outside [0,%d)", base+int64(k), u, r.Nodes)
		}
	}
	return ptr, idx, nil
}

// Weights returns the weights of the entries of rows [lo, hi) (nil when
// the file has none), checked finite and non-negative; ptr is what Rows
// returned for the same rows.
func (r *BinaryRange) Weights(lo, hi int64, ptr []int64) ([]float32, error) {
	if !r.Weighted {
		return nil, nil
	}
	base, err := readLE[int64](r, secPtr, lo, 1, 0)
	if err != nil {
		return nil, err
	}
	n := ptr[len(ptr)-1]
	w, err := readLE[float32](r, secVal, base[0], n, n)
	if err != nil {
		return nil, err
	}
	if err := CheckWeights(w); err != nil {
		return nil, binError(r.Path, "section %s: rows [%d,%d): %v", binSectionName(secVal), lo, hi, err)
	}
	return w, nil
}

// Features returns the feature rows [lo, hi) (nil when the file has none).
func (r *BinaryRange) Features(lo, hi int64) ([]float32, error) {
	d := int64(r.FeatDim)
	if d == 0 {
		return nil, nil
	}
	if r.SparseFeatures {
		return nil, binError(r.Path, "section x: the features are sparse (SparseFeatureRows)")
	}
	x, err := readLE[float32](r, secX, lo*d, (hi-lo)*d, (hi-lo)*d)
	if err != nil {
		return nil, err
	}
	for i, v := range x {
		if v-v != 0 {
			return nil, binError(r.Path, "section x: feature [%d,%d] is %v", lo+int64(i)/d, int64(i)%d, v)
		}
	}
	return x, nil
}

// SparseFeatureRows returns the sparse feature rows [lo, hi) (flag 8): the
// section's header when lo is 0, the rows' offsets, then their column ids
// and values, each read in place; checked canonical and finite. The
// readers of all row ranges together cover the section (VerifySpans).
func (r *BinaryRange) SparseFeatureRows(lo, hi int64) (*CSR, error) {
	if !r.SparseFeatures {
		return nil, binError(r.Path, "section x: features are not sparse")
	}
	if lo < 0 || hi < lo || hi > r.Nodes {
		return nil, binError(r.Path, "rows [%d,%d) outside [0,%d)", lo, hi, r.Nodes)
	}
	head, err := readLE[int64](r, secX, 0, 1, int64(boolInt(lo == 0)))
	if err != nil {
		return nil, err
	}
	nnz, length := head[0], r.h.sections[secX].length
	if nnz < 0 || nnz > int64(length)/8 || binSparseLength(r.Nodes, nnz) != length {
		return nil, binError(r.Path, "section %s: %d bytes do not hold %d sparse rows of %d entries", binSectionName(secX), length, r.Nodes, nnz)
	}
	covered := hi - lo
	if hi == r.Nodes {
		covered++
	}
	ptr, err := readLE[int64](r, secX, 1+lo, hi-lo+1, covered)
	if err != nil {
		return nil, err
	}
	base, end := ptr[0], ptr[hi-lo]
	if (lo == 0 && base != 0) || (hi == r.Nodes && end != nnz) || base < 0 || end > nnz {
		return nil, binError(r.Path, "section %s: offsets of rows [%d,%d) outside [0,%d]", binSectionName(secX), lo, hi, nnz)
	}
	for i := range ptr {
		if i > 0 && ptr[i] < ptr[i-1] {
			return nil, binError(r.Path, "section %s: offsets decrease at row %d", binSectionName(secX), lo+int64(i)-1)
		}
		ptr[i] -= base
	}
	idxAt := (8 + 8*(r.Nodes+1)) / 4 // in int32 elements
	pad := int64(0)
	if hi == r.Nodes {
		pad = nnz % 2 // the last reader covers the padding after the ids
	}
	idx, err := readLE[int32](r, secX, idxAt+base, end-base+pad, end-base+pad)
	if err != nil {
		return nil, err
	}
	val, err := readLE[float32](r, secX, idxAt+(nnz+1)&^1+base, end-base, end-base)
	if err != nil {
		return nil, err
	}
	x := &CSR{NumRows: int(hi - lo), NumCols: r.FeatDim, Ptr: ptr, Idx: idx[:end-base], Val: val}
	if err := checkSparseFrom(x, int(lo)); err != nil {
		return nil, binError(r.Path, "section %s: sparse features: %v", binSectionName(secX), err)
	}
	return x, nil
}

// boolInt is 1 for true, 0 for false.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Labels returns the labels of nodes [lo, hi) (nil when the file has none).
func (r *BinaryRange) Labels(lo, hi int64) ([]int32, error) {
	if !r.HasLabels {
		return nil, nil
	}
	y, err := readLE[int32](r, secLabels, lo, hi-lo, hi-lo)
	if err != nil {
		return nil, err
	}
	for i, v := range y {
		if v < -1 || (r.NumClasses > 0 && v >= int32(r.NumClasses)) {
			return nil, binError(r.Path, "section labels: node %d has label %d outside [-1,%d)", lo+int64(i), v, r.NumClasses)
		}
	}
	return y, nil
}

// SplitIDs returns entries [lo, hi) of split list which (0 train, 1 valid,
// 2 test), checked to lie in [0, Nodes) and ascend.
func (r *BinaryRange) SplitIDs(which int, lo, hi int64) ([]int32, error) {
	ids, err := readLE[int32](r, secTrain+which, lo, hi-lo, hi-lo)
	if err != nil {
		return nil, err
	}
	for k, v := range ids {
		if v < 0 || int64(v) >= r.Nodes || (k > 0 && v <= ids[k-1]) {
			return nil, binError(r.Path, "section %s: entry %d (node %d) out of range or not ascending",
				binSectionName(secTrain+which), lo+int64(k), v)
		}
	}
	return ids, nil
}

// NpyRange reads row ranges of a 2-D (or 1-D) .npy array with pread.
type NpyRange struct {
	Path  string
	Shape []int
	a     *npzArray
}

// OpenNpyRange opens path and checks its header and size.
func OpenNpyRange(path string) (*NpyRange, error) {
	a, err := openNpyArray(path)
	if err != nil {
		return nil, err
	}
	return &NpyRange{Path: path, Shape: a.Shape, a: a}, nil
}

// Close closes the file.
func (a *NpyRange) Close() error { return a.a.Close() }

// rows reads rows [lo, hi) as an NpyArray.
func (a *NpyRange) rows(lo, hi int) (*NpyArray, error) {
	if len(a.Shape) == 0 || lo < 0 || hi < lo || hi > a.Shape[0] {
		return nil, errorf(a.Path, 0, "rows [%d,%d) outside shape %v", lo, hi, a.Shape)
	}
	row := a.a.rowLen()
	arr, err := a.a.elems(int64(lo)*row, int64(hi)*row)
	if err != nil {
		return nil, err
	}
	arr.Shape = append([]int{hi - lo}, a.Shape[1:]...)
	return arr, nil
}

// FeatureRows returns rows [lo, hi) of an N×F array as float32, checked
// finite; F is a.Shape[1].
func (a *NpyRange) FeatureRows(lo, hi int) ([]float32, error) {
	if len(a.Shape) != 2 {
		return nil, errorf(a.Path, 0, "features have shape %v, want (N, F)", a.Shape)
	}
	arr, err := a.rows(lo, hi)
	if err != nil {
		return nil, err
	}
	x, err := arr.Float32()
	if err != nil {
		return nil, errorf(a.Path, 0, "%v", err)
	}
	for i, v := range x {
		if v-v != 0 {
			return nil, errorf(a.Path, 0, "feature [%d,%d] is %v", lo+i/a.Shape[1], i%a.Shape[1], v)
		}
	}
	return x, nil
}

// LabelRows returns labels [lo, hi) of an (N,) or (N, 1) array, with the
// conversions of the whole-file loader (NaN = unlabelled).
func (a *NpyRange) LabelRows(lo, hi int) ([]int32, error) {
	if !(len(a.Shape) == 1 || (len(a.Shape) == 2 && a.Shape[1] == 1)) {
		return nil, errorf(a.Path, 0, "labels have shape %v, want (N,) or (N, 1)", a.Shape)
	}
	arr, err := a.rows(lo, hi)
	if err != nil {
		return nil, err
	}
	return npyLabels(a.Path, arr, lo)
}

// String describes the range for progress lines.
func (t *TextRange) String() string {
	return fmt.Sprintf("%s[%d,%d)", t.Path, t.Start, t.End)
}

// DatasetName is the name Load gives the dataset at path: its base name
// without a compression suffix and one further extension.
func DatasetName(path string) string { return baseName(path) }

// MetisHeader is the header of a METIS graph file, for range reading.
type MetisHeader struct {
	N, M     int64
	Line     int64 // line of the header
	Weighted bool  // fmt has edge weights
	h        metisHeader
}

// ReadMetisHeader reads the header of the METIS graph file at path (the
// first line that is neither a comment nor blank), reading only up to it.
// The vertex count may reach MaxRangeNodeID+1: the readers each hold a
// share of the vertices, which partition/dist bounds.
func ReadMetisHeader(path string) (*MetisHeader, error) {
	lr, err := openLines(path)
	if err != nil {
		return nil, err
	}
	defer lr.Close()
	h, err := readMetisHeader(lr, rangeIDs)
	if err != nil {
		return nil, err
	}
	return &MetisHeader{N: h.n, M: h.m, Line: h.line, Weighted: h.ewgt, h: h}, nil
}

// MetisChunk holds the vertex lines of one share of a METIS file, in file
// order: row k lists the 0-based neighbours of the share's k-th vertex line
// and, when the file has edge weights, their weights in Val (vertex sizes
// and weights are checked and dropped).
type MetisChunk struct {
	Ptr   []int64
	Idx   []int64
	Val   []float32
	blank []bool // the line was blank
	lines vertexLines
	path  string
}

// Rows is the number of vertex lines in the share.
func (m *MetisChunk) Rows() int64 { return int64(len(m.Ptr) - 1) }

// Line returns the file line of row k.
func (m *MetisChunk) Line(k int64) int64 { return m.lines.of(k) }

// DataAfter returns the first error for rows k, k+1, ... that are not blank
// (they lie after the header's last vertex), or nil.
func (m *MetisChunk) DataAfter(k int64, h *MetisHeader) error {
	for ; k < m.Rows(); k++ {
		if !m.blank[k] {
			return errorf(m.path, m.Line(k), "data after the last vertex (the header on line %d says n=%d)", h.Line, h.N)
		}
	}
	return nil
}

// ReadMetis parses the vertex lines of the share (lines after the header
// that are not '%' comments; a blank line is a vertex without neighbours);
// firstLine numbers the share's first line.
func (t *TextRange) ReadMetis(firstLine int64, h *MetisHeader) (*MetisChunk, error) {
	lr, err := t.reader(firstLine)
	if err != nil {
		return nil, err
	}
	defer lr.Close()
	m := &MetisChunk{path: t.Path, Ptr: []int64{0}}
	idx := newIDList(true, 0)
	if h.Weighted {
		m.Val = []float32{}
	}
	for {
		line, ok := nextNonComment(lr)
		if !ok {
			break
		}
		if lr.line <= h.Line {
			continue
		}
		if err := parseMetisVertex(&idx, &m.Val, &h.h, lr.name, lr.line, line); err != nil {
			return nil, err
		}
		m.lines.add(m.Rows(), lr.line)
		m.blank = append(m.blank, isBlank(line))
		m.Ptr = append(m.Ptr, int64(idx.len()))
	}
	if err := lr.Err(); err != nil {
		return nil, err
	}
	m.Idx = idx.i64
	return m, nil
}

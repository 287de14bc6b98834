package graph

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/internal/par"
)

// Binary dataset format ("SGCNBIN", version 1), little-endian throughout:
//
//	offset  size  field
//	0       8     magic "SGCNBIN\x00"
//	8       4     format version (uint32, 1)
//	12      4     header size in bytes, table and header CRC included (uint32)
//	16      8     flags (uint64): 1 = edge weights, 2 = labels, 4 = features, 8 = sparse features
//	24      8     nodes (int64)
//	32      8     nnz, stored adjacency entries (int64)
//	40      8     feature dimension (int64)
//	48      8     classes (int64)
//	56      24    train, valid, test sizes (3 × int64)
//	80      8     name length in bytes (int64)
//	88      4     number of sections (uint32, 9 in version 1)
//	92      4     reserved, zero
//	96      24·S  section table: id uint32, CRC32-C uint32, offset uint64, length uint64 (bytes)
//	96+24·S 4     CRC32-C of bytes [0, 96+24·S)
//
// The sections follow in the order ptr ([]int64, nodes+1), idx ([]int32, nnz),
// val ([]float32, nnz or empty), x ([]float32, nodes·featdim), labels
// ([]int32, nodes or empty), train, valid, test ([]int32) and name (bytes),
// each starting at a multiple of 64 bytes (zero padding in between), so a
// mapped file can be viewed as typed slices without copying. Every section
// carries the CRC32-C (Castagnoli) of its bytes; padding is not covered.
//
// With flag 8 (sparse features, feat_csr.go) the x section holds them
// as CSR rows: nnz (int64), ptr ([]int64, nodes+1), idx ([]int32, nnz), zero
// padding to a multiple of 8 bytes, val ([]float32, nnz).
const (
	binMagic      = "SGCNBIN\x00"
	binVersion    = 1
	binFixedSize  = 96
	binEntrySize  = 24
	binNumSection = 9
	binAlign      = 64

	binFlagWeights  = 1
	binFlagLabels   = 2
	binFlagFeatures = 4
	binFlagSparse   = 8
)

// binSectionName names section i (file order; its id is i+1).
func binSectionName(i int) string {
	return [binNumSection]string{"ptr", "idx", "val", "x", "labels", "train", "valid", "test", "name"}[i]
}

const (
	secPtr = iota
	secIdx
	secVal
	secX
	secLabels
	secTrain
	secValid
	secTest
	secName
)

// binFormat is the magic and version of the format (internal/container).
var binFormat = container.Format{Magic: binMagic, Version: binVersion}

// binHeader is the decoded fixed header and section table.
type binHeader struct {
	version               uint32
	headerSize            uint32
	flags                 uint64
	nodes, nnz, featDim   int64
	classes               int64
	nTrain, nValid, nTest int64
	nameLen               int64
	sections              [binNumSection]binSection
}

// binSection is one row of the section table.
type binSection struct {
	crc    uint32
	offset uint64
	length uint64
}

func binHeaderSize() int { return binFixedSize + binEntrySize*binNumSection + 4 }

func binAlignUp(x uint64) uint64 { return (x + binAlign - 1) &^ (binAlign - 1) }

// encode writes the header, table and header CRC into a fresh buffer.
func (h *binHeader) encode() []byte {
	b := make([]byte, binHeaderSize())
	le := binary.LittleEndian
	binFormat.PutPrefix(b)
	le.PutUint32(b[12:], h.headerSize)
	le.PutUint64(b[16:], h.flags)
	for i, v := range []int64{h.nodes, h.nnz, h.featDim, h.classes, h.nTrain, h.nValid, h.nTest, h.nameLen} {
		le.PutUint64(b[24+8*i:], uint64(v))
	}
	le.PutUint32(b[88:], binNumSection)
	for i, s := range h.sections {
		e := b[binFixedSize+binEntrySize*i:]
		le.PutUint32(e, uint32(i+1))
		le.PutUint32(e[4:], s.crc)
		le.PutUint64(e[8:], s.offset)
		le.PutUint64(e[16:], s.length)
	}
	end := binFixedSize + binEntrySize*binNumSection
	le.PutUint32(b[end:], container.Checksum(b[:end]))
	return b
}

// binError is the one-line error of the binary reader and writer.
func binError(path, format string, args ...any) error {
	return &ParseError{File: path, Msg: fmt.Sprintf(format, args...)}
}

// binDecodeHeader checks magic, version, header CRC and section table of the
// file image b (at least the header; size is the whole file's size).
func binDecodeHeader(path string, b []byte, size int64) (*binHeader, error) {
	le := binary.LittleEndian
	version, err := binFormat.CheckPrefix(b)
	var ve *container.VersionError
	switch {
	case errors.Is(err, container.ErrBadMagic):
		return nil, binError(path, "not a supergcn binary dataset (bad magic)")
	case errors.As(err, &ve):
		return nil, binError(path, "unsupported format version %d (this build reads version %d)", ve.Got, binVersion)
	case err != nil || len(b) < 16:
		return nil, binError(path, "truncated: %d bytes, header needs %d", size, binHeaderSize())
	}
	h := &binHeader{version: version, headerSize: le.Uint32(b[12:])}
	if h.headerSize != uint32(binHeaderSize()) {
		return nil, binError(path, "header: size %d, want %d for version %d", h.headerSize, binHeaderSize(), binVersion)
	}
	if int64(len(b)) < int64(h.headerSize) {
		return nil, binError(path, "truncated: %d bytes, header needs %d", size, h.headerSize)
	}
	end := binFixedSize + binEntrySize*binNumSection
	if got, want := container.Checksum(b[:end]), le.Uint32(b[end:]); got != want {
		return nil, binError(path, "header: checksum mismatch (stored %08x, computed %08x)", want, got)
	}
	h.flags = le.Uint64(b[16:])
	fields := []*int64{&h.nodes, &h.nnz, &h.featDim, &h.classes, &h.nTrain, &h.nValid, &h.nTest, &h.nameLen}
	for i, p := range fields {
		*p = int64(le.Uint64(b[24+8*i:]))
	}
	if n := le.Uint32(b[88:]); n != binNumSection {
		return nil, binError(path, "header: %d sections, want %d", n, binNumSection)
	}
	for i := range h.sections {
		e := b[binFixedSize+binEntrySize*i:]
		if id := le.Uint32(e); id != uint32(i+1) {
			return nil, binError(path, "header: section %d has id %d", i+1, id)
		}
		h.sections[i] = binSection{crc: le.Uint32(e[4:]), offset: le.Uint64(e[8:]), length: le.Uint64(e[16:])}
	}
	if err := h.check(path, size); err != nil {
		return nil, err
	}
	return h, nil
}

// wantLengths returns the byte length every section must have given the
// counts and flags of the header, or an error for impossible counts.
func (h *binHeader) wantLengths(path string) ([binNumSection]uint64, error) {
	var w [binNumSection]uint64
	if h.nodes >= math.MaxInt32 {
		return w, binError(path, "header: %d nodes: the .sgb format stores int32 node ids, so at most %d nodes", h.nodes, math.MaxInt32-1)
	}
	if h.nodes < 0 || h.nnz < 0 || h.featDim < 0 || h.classes < 0 ||
		h.nTrain < 0 || h.nValid < 0 || h.nTest < 0 || h.nameLen < 0 ||
		h.nTrain > h.nodes || h.nValid > h.nodes || h.nTest > h.nodes || h.classes > MaxClasses {
		return w, binError(path, "header: impossible counts (nodes %d, nnz %d, featdim %d, classes %d, splits %d/%d/%d)",
			h.nodes, h.nnz, h.featDim, h.classes, h.nTrain, h.nValid, h.nTest)
	}
	if h.flags&^(binFlagWeights|binFlagLabels|binFlagFeatures|binFlagSparse) != 0 || (h.flags&binFlagSparse != 0 && h.flags&binFlagFeatures == 0) {
		return w, binError(path, "header: unknown flags %#x", h.flags)
	}
	w[secPtr] = uint64(h.nodes+1) * 8
	w[secIdx] = uint64(h.nnz) * 4
	if h.flags&binFlagWeights != 0 {
		w[secVal] = uint64(h.nnz) * 4
	}
	if h.featDim > 0 && h.nodes > 0 && h.featDim > math.MaxInt64/4/h.nodes {
		return w, binError(path, "header: feature matrix %d×%d too large", h.nodes, h.featDim)
	}
	w[secX] = uint64(h.nodes*h.featDim) * 4
	if h.flags&binFlagSparse != 0 {
		w[secX] = binSparseUnknown // its nnz is in the section: binSparseLength checks it
	}
	if h.flags&binFlagLabels != 0 {
		w[secLabels] = uint64(h.nodes) * 4
	}
	w[secTrain], w[secValid], w[secTest] = uint64(h.nTrain)*4, uint64(h.nValid)*4, uint64(h.nTest)*4
	w[secName] = uint64(h.nameLen)
	return w, nil
}

// check verifies section lengths against the counts, alignment, order and
// that every section lies inside a file of size bytes.
func (h *binHeader) check(path string, size int64) error {
	want, err := h.wantLengths(path)
	if err != nil {
		return err
	}
	prevEnd := uint64(h.headerSize)
	for i, s := range h.sections {
		name := binSectionName(i)
		if want[i] == binSparseUnknown {
			want[i] = s.length
			if s.length < uint64(8*(h.nodes+2)) {
				return binError(path, "section %s: %d bytes cannot hold sparse features of %d rows", name, s.length, h.nodes)
			}
		}
		if s.length != want[i] {
			return binError(path, "section %s: length %d bytes, header counts need %d", name, s.length, want[i])
		}
		if s.offset%binAlign != 0 || s.offset < prevEnd {
			return binError(path, "section %s: bad offset %d", name, s.offset)
		}
		end := s.offset + s.length
		if end < s.offset || end > uint64(size) {
			return binError(path, "section %s: truncated file: section ends at byte %d, file has %d", name, end, size)
		}
		prevEnd = end
	}
	return nil
}

// isBinaryFile reports whether path is a regular file starting with the
// binary dataset magic.
func isBinaryFile(path string) bool {
	f, _, err := container.OpenInput(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [container.MagicSize]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return false
	}
	return binFormat.HasMagic(b[:])
}

// WriteBinary writes ds to path in the binary dataset format (see LoadBinary)
// through container.WriteFile: path+".tmp", fsynced and renamed over path
// when complete, so a crash or error never leaves a half-written path (or
// the .tmp) behind.
func WriteBinary(path string, ds *Dataset) error {
	h, err := binNewHeader(ds)
	if err != nil {
		return binError(path, "%v", err)
	}
	err = container.WriteFile(path, 0o644, func(f *os.File) error {
		if err := binWriteBody(f, h, ds); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	})
	return err
}

// binNewHeader checks ds for consistency and lays out the sections.
func binNewHeader(ds *Dataset) (*binHeader, error) {
	if ds == nil || ds.Graph == nil {
		return nil, fmt.Errorf("dataset has no graph")
	}
	g := ds.Graph
	n := g.NumRows
	switch {
	case g.NumCols != n:
		return nil, fmt.Errorf("adjacency is %d×%d, not square", n, g.NumCols)
	case len(g.Ptr) != n+1 || int64(len(g.Idx)) != g.NNZ():
		return nil, fmt.Errorf("inconsistent CSR (len Ptr %d, len Idx %d, nodes %d)", len(g.Ptr), len(g.Idx), n)
	case g.Val != nil && len(g.Val) != len(g.Idx):
		return nil, fmt.Errorf("len(Val)=%d, want %d", len(g.Val), len(g.Idx))
	case ds.FeatDim < 0:
		return nil, fmt.Errorf("featdim %d", ds.FeatDim)
	case ds.Features.CheckShape(n, ds.FeatDim) != nil:
		return nil, ds.Features.CheckShape(n, ds.FeatDim)
	case ds.Labels != nil && len(ds.Labels) != n:
		return nil, fmt.Errorf("len(Labels)=%d, want %d", len(ds.Labels), n)
	}
	h := &binHeader{
		version: binVersion, headerSize: uint32(binHeaderSize()),
		nodes: int64(n), nnz: int64(len(g.Idx)), featDim: int64(ds.FeatDim), classes: int64(ds.NumClasses),
		nTrain: int64(len(ds.Train)), nValid: int64(len(ds.Valid)), nTest: int64(len(ds.Test)),
		nameLen: int64(len(ds.Name)),
	}
	if g.Val != nil {
		h.flags |= binFlagWeights
	}
	if ds.Labels != nil {
		h.flags |= binFlagLabels
	}
	x := ds.Features.Layout()
	if ds.Features.Present() {
		h.flags |= binFlagFeatures
	}
	if x.Sparse() {
		h.flags |= binFlagSparse
	}
	want, err := h.wantLengths("")
	if err != nil {
		return nil, err
	}
	if x.Sparse() {
		want[secX] = binSparseLength(h.nodes, int64(len(x.Idx)))
	}
	off := binAlignUp(uint64(h.headerSize))
	for i := range h.sections {
		h.sections[i] = binSection{offset: off, length: want[i]}
		off = binAlignUp(off + want[i])
	}
	return h, nil
}

// binSectionBytes returns the little-endian bytes of section i of ds through
// emit, in one or more pieces (one, without copying, on little-endian hosts).
func binSectionBytes(ds *Dataset, i int, emit func([]byte) error) error {
	g := ds.Graph
	switch i {
	case secPtr:
		return container.EmitLE(g.Ptr, emit)
	case secIdx:
		return container.EmitLE(g.Idx, emit)
	case secVal:
		return container.EmitLE(g.Val, emit)
	case secX:
		if x := ds.Features.Layout(); x.Sparse() {
			return binSparseBytes(x, emit)
		}
		return container.EmitLE(ds.Features.Values(), emit)
	case secLabels:
		return container.EmitLE(ds.Labels, emit)
	case secTrain:
		return container.EmitLE(ds.Train, emit)
	case secValid:
		return container.EmitLE(ds.Valid, emit)
	case secTest:
		return container.EmitLE(ds.Test, emit)
	default:
		return emit([]byte(ds.Name))
	}
}

// binWriteBody writes the header and all sections to f, computing the
// section checksums on the way, then rewrites the header with them and
// leaves syncing to container.WriteFile.
func binWriteBody(f *os.File, h *binHeader, ds *Dataset) error {
	w := bufio.NewWriterSize(f, 1<<20)
	pos := uint64(0)
	pad := func(to uint64) error {
		var zero [binAlign]byte
		for pos < to {
			k := min(to-pos, binAlign)
			if _, err := w.Write(zero[:k]); err != nil {
				return err
			}
			pos += k
		}
		return nil
	}
	for i := range h.sections {
		if err := pad(h.sections[i].offset); err != nil {
			return err
		}
		crc := uint32(0)
		err := binSectionBytes(ds, i, func(b []byte) error {
			crc = container.UpdateChecksum(crc, b)
			_, err := w.Write(b)
			pos += uint64(len(b))
			return err
		})
		if err != nil {
			return err
		}
		h.sections[i].crc = crc
	}
	if err := w.Flush(); err != nil {
		return err
	}
	_, err := f.WriteAt(h.encode(), 0)
	return err
}

// BinaryOptions tunes LoadBinaryWith.
type BinaryOptions struct {
	// SkipChecksums skips the per-section CRC32-C verification (the header
	// checksum and all structural checks still run). Verification reads
	// every byte once; skipping it makes loading a mapped file nearly
	// instant, paging data in only as it is touched.
	SkipChecksums bool
}

// LoadBinary reads a dataset written by WriteBinary, verifying every
// checksum. See LoadBinaryWith.
func LoadBinary(path string) (*Dataset, error) {
	return LoadBinaryWith(path, BinaryOptions{})
}

// LoadBinaryWith reads a dataset written by WriteBinary.
//
// On Unix systems the file is memory-mapped privately (copy-on-write) and the
// Dataset's slices (Graph.Ptr, Graph.Idx, Graph.Val, X, Labels, Train, Valid,
// Test) point into the mapping without copying: loading costs the checksum
// pass only, and pages not touched stay on disk. Writes through the slices
// are allowed but stay private to the process; they never reach the file.
// The mapping lives until (*Dataset).Release is called (or the process
// exits); it is not tied to the garbage collector, because slices taken from
// the Dataset may outlive it. Where mmap is unavailable the file is read
// into memory instead, with the same result.
//
// Errors (bad magic, unsupported version, truncated file, checksum mismatch,
// inconsistent contents) are one-line *ParseError values naming the file
// and, where it applies, the section.
func LoadBinaryWith(path string, o BinaryOptions) (*Dataset, error) {
	img, err := binOpenImage(path)
	if err != nil {
		return nil, err
	}
	ds, err := binDecodeImage(path, img.data, int64(len(img.data)), o)
	if err != nil {
		img.close()
		return nil, err
	}
	if img.release != nil {
		ds.release = img.close
	}
	return ds, nil
}

// Release unmaps the file backing a Dataset loaded by LoadBinary and clears
// the Dataset's fields that pointed into it. Every slice taken from the
// Dataset before must no longer be used: touching one afterwards crashes
// the process. Release is a no-op returning nil for a Dataset that is not
// file-backed, and safe to call twice.
func (d *Dataset) Release() error {
	if d.release == nil {
		return nil
	}
	rel := d.release
	d.release = nil
	d.Graph, d.Features, d.Labels, d.Train, d.Valid, d.Test = nil, Features{}, nil, nil, nil, nil
	return rel()
}

// binImage is the whole file in memory: a private mapping (release non-nil)
// or a heap copy.
type binImage struct {
	data    []byte
	release func() error
}

func (m *binImage) close() error {
	if m.release == nil {
		return nil
	}
	r := m.release
	m.release = nil
	return r()
}

// openStat opens the regular file path for reading and stats it.
func openStat(path string) (*os.File, os.FileInfo, error) {
	return container.OpenInput(path)
}

// binReadImage reads the whole file into 8-byte aligned heap memory: the
// portable fallback of binOpenImage.
func binReadImage(path string) (*binImage, error) {
	f, st, err := openStat(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := st.Size()
	if size > math.MaxInt-8 {
		return nil, binError(path, "file of %d bytes too large for this platform", size)
	}
	data := container.AsBytes(make([]uint64, (size+7)/8))
	data = data[:size:size]
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, binError(path, "reading: %v", err)
	}
	return &binImage{data: data}, nil
}

// binDecodeImage verifies the file image b and builds the Dataset whose
// slices alias b (or decoded copies on big-endian hosts).
func binDecodeImage(path string, b []byte, size int64, o BinaryOptions) (*Dataset, error) {
	h, err := binDecodeHeader(path, b, size)
	if err != nil {
		return nil, err
	}
	sec := func(i int) []byte {
		s := h.sections[i]
		return b[s.offset : s.offset+s.length]
	}
	if !o.SkipChecksums {
		if err := binVerifySections(path, h, sec); err != nil {
			return nil, err
		}
	}
	for i := 0; i < secName; i++ {
		if !container.Aligned(sec(i), 8) {
			return nil, binError(path, "section %s: misaligned in memory", binSectionName(i))
		}
	}
	n := int(h.nodes)
	g := &CSR{NumRows: n, NumCols: n, Ptr: container.ViewLE[int64](sec(secPtr)), Idx: container.ViewLE[int32](sec(secIdx))}
	if h.flags&binFlagWeights != 0 {
		g.Val = container.ViewLE[float32](sec(secVal))
	}
	ds := &Dataset{
		Name: string(sec(secName)), Graph: g, FeatDim: int(h.featDim), NumClasses: int(h.classes),
		Train: container.ViewLE[int32](sec(secTrain)), Valid: container.ViewLE[int32](sec(secValid)), Test: container.ViewLE[int32](sec(secTest)),
	}
	switch {
	case h.flags&binFlagSparse != 0:
		x, err := binSparseView(path, sec(secX), n, int(h.featDim))
		if err != nil {
			return nil, err
		}
		ds.Features = SparseX(x)
	case h.flags&binFlagFeatures != 0:
		ds.Features = DenseX(container.ViewLE[float32](sec(secX)), n, int(h.featDim))
	}
	if h.flags&binFlagLabels != 0 {
		ds.Labels = container.ViewLE[int32](sec(secLabels))
	}
	if err := binCheckContents(path, ds); err != nil {
		return nil, err
	}
	return ds, nil
}

// binVerifySections checks every section's CRC32-C, sections in parallel.
func binVerifySections(path string, h *binHeader, sec func(int) []byte) error {
	var errs [binNumSection]error
	par.Blocks(binNumSection, 0, func(i int) {
		if got := container.Checksum(sec(i)); got != h.sections[i].crc {
			errs[i] = binError(path, "section %s: checksum mismatch (stored %08x, computed %08x)",
				binSectionName(i), h.sections[i].crc, got)
		}
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// binCheckContents validates what checksums cannot: a file written from an
// inconsistent Dataset, or one whose checksums were skipped.
func binCheckContents(path string, ds *Dataset) error {
	if err := ds.Graph.Validate(); err != nil {
		return binError(path, "section ptr/idx: %v", err)
	}
	if err := CheckWeights(ds.Graph.Val); err != nil {
		return binError(path, "section %s: %v", binSectionName(secVal), err)
	}
	n := int32(ds.NumNodes())
	for v, y := range ds.Labels {
		if y < -1 || (ds.NumClasses > 0 && y >= int32(ds.NumClasses)) {
			return binError(path, "section labels: node %d has label %d outside [-1,%d)", v, y, ds.NumClasses)
		}
	}
	for i, ids := range [][]int32{ds.Train, ds.Valid, ds.Test} {
		for k, v := range ids {
			if v < 0 || v >= n || (k > 0 && v <= ids[k-1]) {
				return binError(path, "section %s: entry %d (node %d) out of range or not ascending",
					binSectionName(secTrain+i), k, v)
			}
		}
	}
	parts := [][]int32{ds.Train, ds.Valid, ds.Test}
	for _, pair := range [][2]int{{0, 1}, {0, 2}, {1, 2}} {
		if v, ok := commonID(parts[pair[0]], parts[pair[1]]); ok {
			return binError(path, "sections %s and %s both hold node %d: the splits must be disjoint",
				binSectionName(secTrain+pair[0]), binSectionName(secTrain+pair[1]), v)
		}
	}
	if err := ds.Features.Check(); err != nil { // NaN or ±Inf, as the .npy loader refuses; a malformed CSR row
		return binError(path, "section %s: %v", binSectionName(secX), err)
	}
	return nil
}

// binSparseUnknown marks a section length the header cannot give (the
// sparse x section's, which depends on its nnz).
const binSparseUnknown = ^uint64(0)

// binSparseLength is the x section's length for sparse features of nodes
// rows and nnz entries.
func binSparseLength(nodes, nnz int64) uint64 {
	return uint64(8 + 8*(nodes+1) + (4*nnz+7)&^7 + 4*nnz)
}

// binSparseBytes emits the x section of sparse features x.
func binSparseBytes(x FeatureLayout, emit func([]byte) error) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(len(x.Idx)))
	if err := emit(b[:]); err != nil {
		return err
	}
	if err := container.EmitLE(x.Ptr, emit); err != nil {
		return err
	}
	if err := container.EmitLE(x.Idx, emit); err != nil {
		return err
	}
	if len(x.Idx)%2 != 0 {
		if err := emit(make([]byte, 4)); err != nil { // zero padding to 8 bytes
			return err
		}
	}
	return container.EmitLE(x.Val, emit)
}

// binSparseView views the x section b of sparse features (n rows, d
// columns) without copying, checking its length against its nnz.
func binSparseView(path string, b []byte, n, d int) (*CSR, error) {
	nnz := int64(binary.LittleEndian.Uint64(b))
	if nnz < 0 || nnz > int64(len(b))/8 || uint64(len(b)) != binSparseLength(int64(n), nnz) {
		return nil, binError(path, "section %s: %d bytes do not hold %d sparse rows of %d entries", binSectionName(secX), len(b), n, nnz)
	}
	ptrEnd := 8 + 8*(n+1)
	idxEnd := ptrEnd + int(4*nnz)
	valOff := ptrEnd + int((4*nnz+7)&^7)
	x := &CSR{NumRows: n, NumCols: d, Ptr: container.ViewLE[int64](b[8:ptrEnd]),
		Idx: container.ViewLE[int32](b[ptrEnd:idxEnd]), Val: container.ViewLE[float32](b[valOff:])}
	return x, nil
}

// commonID returns a node id present in both ascending lists.
func commonID(a, b []int32) (int32, bool) {
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			return a[i], true
		}
	}
	return 0, false
}

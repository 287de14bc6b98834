package partition

// On-disk partition directory.
//
//	DIR/meta.json          Meta: format version, dataset, method, sizes, per-part statistics and file checksums
//	DIR/part-00000.bin     one file per part, the Shard that Split returns for that part
//
// A part file is little-endian: a fixed 88-byte header, then nine sections
// in a fixed order. Header:
//
//	off  size  field
//	  0     8  magic "SGCNPART"
//	  8     4  format version (uint32, currently 1)
//	 12     4  flags (uint32; bit 0: the dataset has labels)
//	 16     8  part (int64)
//	 24     8  parts (int64)
//	 32     8  global node count (int64)
//	 40     8  owned nodes n (int64)
//	 48     8  feature dimension d (int64)
//	 56     8  number of classes (int64)
//	 64     8  local edges (int64)
//	 72     8  remote edges (int64)
//	 80     4  CRC32-C (Castagnoli) of bytes [0, 80)
//	 84     4  zero
//
// Each section is: tag (uint32), zero (uint32), payload length in bytes
// (uint64), payload, CRC32-C of the payload (uint32). Sections, by tag:
//
//	1 global ids     int64   × n     ascending
//	2 features       float32 × n·d   row-major
//	3 labels         int32   × n     (0 entries when the dataset has none)
//	4 split          uint8   × n     graph.InTrain|InValid|InTest bits
//	5 local ptr      int64   × n+1
//	6 local idx      int32   × local edges (local ids)
//	7 remote ptr     int64   × n+1
//	8 remote src     int64   × remote edges (global ids)
//	9 remote owner   int32   × remote edges (part owning the source)
//
// meta.json records each file's size and whole-file CRC32-C; Load checks
// both, every section CRC, and the structure of the decoded shard.

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"unsafe"

	"github.com/supergcn/supergcn/graph"
)

// FormatVersion is the version of the partition directory this package writes.
const FormatVersion = 1

// MetaFile is the name of the metadata file in a partition directory.
const MetaFile = "meta.json"

const (
	partMagic      = "SGCNPART"
	partHeaderSize = 88
	flagHasLabels  = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// section tags, in file order.
const (
	secGlobal = iota + 1
	secFeatures
	secLabels
	secSplit
	secLocalPtr
	secLocalIdx
	secRemotePtr
	secRemoteSrc
	secRemoteOwner
)

var sectionNames = [...]string{"", "global ids", "features", "labels", "split",
	"local ptr", "local idx", "remote ptr", "remote src", "remote owner"}

// PartFile is the file name of part p in a partition directory.
func PartFile(p int) string { return fmt.Sprintf("part-%05d.bin", p) }

// MetaInfo is what Write records about how the partition was made.
type MetaInfo struct {
	Method  string  // metis, parmetis, random, ...
	Weights string  // vertex weights used (Options.Weights)
	Seed    int     // partitioner seed
	Source  string  // input dataset path, for the record
	Seconds float64 // time the partitioner took
}

// Meta is the content of meta.json.
type Meta struct {
	FormatVersion    int     `json:"format_version"`
	Dataset          string  `json:"dataset"`
	Source           string  `json:"source,omitempty"`
	Parts            int     `json:"parts"`
	Method           string  `json:"method"`
	Weights          string  `json:"weights"`
	Seed             int     `json:"seed"`
	PartitionSeconds float64 `json:"partition_seconds"`
	NumNodes         int64   `json:"num_nodes"`
	NumEdges         int64   `json:"num_edges"`
	FeatDim          int     `json:"feat_dim"`
	NumClasses       int     `json:"num_classes"`
	HasLabels        bool    `json:"has_labels"`
	NumTrain         int64   `json:"num_train"`
	NumValid         int64   `json:"num_valid"`
	NumTest          int64   `json:"num_test"`
	Stats
}

// ReadMeta reads and checks DIR/meta.json.
func ReadMeta(dir string) (*Meta, error) {
	path := filepath.Join(dir, MetaFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("partition: %w", err)
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("partition: %s: %v", path, err)
	}
	switch {
	case m.FormatVersion != FormatVersion:
		return nil, fmt.Errorf("partition: %s: format version %d, this build reads %d", path, m.FormatVersion, FormatVersion)
	case m.Parts < 1:
		return nil, fmt.Errorf("partition: %s: %d parts", path, m.Parts)
	case len(m.Stats.Parts) != m.Parts:
		return nil, fmt.Errorf("partition: %s: %d per-part entries for %d parts", path, len(m.Stats.Parts), m.Parts)
	case m.NumNodes < 0 || m.NumNodes > math.MaxInt32 || m.FeatDim < 0 || m.FeatDim > maxFeatDim:
		return nil, fmt.Errorf("partition: %s: bad sizes (%d nodes, %d features)", path, m.NumNodes, m.FeatDim)
	case m.NumClasses < 0 || m.NumClasses > graph.MaxClasses:
		return nil, fmt.Errorf("partition: %s: num_classes %d is not in [0, %d]", path, m.NumClasses, graph.MaxClasses)
	}
	for p, ps := range m.Stats.Parts {
		if ps.Part != p || ps.File != PartFile(p) {
			return nil, fmt.Errorf("partition: %s: per-part entry %d names part %d, file %q", path, p, ps.Part, ps.File)
		}
	}
	return &m, nil
}

// Write stores the partition owner of ds (parts parts) as a partition
// directory: one part file per part and meta.json (see the package's file
// format comment). It writes into a fresh DIR.tmp-* beside dir and renames
// it into place, so on error nothing half-written remains. An existing dir
// is replaced only when it is empty or a partition directory (it has
// meta.json); anything else is an error, found before any work is done.
func Write(dir string, ds *graph.Dataset, owner []int32, parts int, info MetaInfo) (err error) {
	if err := checkDataset(ds); err != nil {
		return err
	}
	if err := ValidateOwner(owner, ds.NumNodes(), parts); err != nil {
		return err
	}
	if err := replaceable(dir); err != nil {
		return err
	}
	split := ds.SplitMask()
	st, err := ComputeStats(ds.Graph, owner, parts, split)
	if err != nil {
		return err
	}
	clean := filepath.Clean(dir)
	tmp, err := os.MkdirTemp(filepath.Dir(clean), filepath.Base(clean)+".tmp-")
	if err != nil {
		return fmt.Errorf("partition: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	sp := newSplitter(ds, owner, parts)
	for p := 0; p < parts; p++ {
		name := PartFile(p)
		size, sum, err := writePart(filepath.Join(tmp, name), sp.shard(p), ds.Labels != nil)
		if err != nil {
			return err
		}
		st.Parts[p].File, st.Parts[p].Bytes, st.Parts[p].CRC32C = name, size, sum
	}
	m := Meta{FormatVersion: FormatVersion, Dataset: ds.Name, Source: info.Source, Parts: parts,
		Method: info.Method, Weights: info.Weights, Seed: info.Seed, PartitionSeconds: info.Seconds,
		NumNodes: int64(ds.NumNodes()), NumEdges: ds.Graph.NNZ(), FeatDim: ds.FeatDim, NumClasses: ds.NumClasses,
		HasLabels: ds.Labels != nil, NumTrain: int64(len(ds.Train)), NumValid: int64(len(ds.Valid)),
		NumTest: int64(len(ds.Test)), Stats: *st}
	b, err := json.MarshalIndent(&m, "", "  ")
	if err != nil {
		return fmt.Errorf("partition: %w", err)
	}
	if err := writeFileSync(filepath.Join(tmp, MetaFile), append(b, '\n')); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("partition: %w", err)
	}
	return install(tmp, clean)
}

// checkDataset checks the parts of ds that Write relies on.
func checkDataset(ds *graph.Dataset) error {
	if ds == nil || ds.Graph == nil {
		return errors.New("partition: nil dataset")
	}
	if err := checkSquare(ds.Graph); err != nil {
		return err
	}
	n := ds.NumNodes()
	if ds.FeatDim < 0 || len(ds.X) != n*ds.FeatDim {
		return fmt.Errorf("partition: dataset has %d feature values for %d nodes × %d", len(ds.X), n, ds.FeatDim)
	}
	if ds.Labels != nil && len(ds.Labels) != n {
		return fmt.Errorf("partition: dataset has %d labels for %d nodes", len(ds.Labels), n)
	}
	for _, set := range [][]int32{ds.Train, ds.Valid, ds.Test} {
		for _, v := range set {
			if v < 0 || int(v) >= n {
				return fmt.Errorf("partition: split node %d outside [0,%d)", v, n)
			}
		}
	}
	return nil
}

// replaceable reports whether Write may put a partition at dir.
// CheckOutput reports whether Write may write dir (absent, empty, or a
// partition directory it will replace), so a command can refuse before it
// loads and partitions anything.
func CheckOutput(dir string) error { return replaceable(dir) }

func replaceable(dir string) error {
	st, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("partition: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("partition: %s exists and is not a directory", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, MetaFile)); err == nil {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("partition: %w", err)
	}
	if len(ents) > 0 {
		return fmt.Errorf("partition: %s exists, is not empty and holds no %s: not replacing it", dir, MetaFile)
	}
	return nil
}

// install renames the finished tmp directory to dir, replacing an old
// partition there (moved aside first and removed once the new one is in place).
func install(tmp, dir string) error {
	if err := replaceable(dir); err != nil {
		return err
	}
	old := ""
	if _, err := os.Stat(dir); err == nil {
		old = tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("partition: moving the old %s aside: %w", dir, err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			os.Rename(old, dir)
		}
		return fmt.Errorf("partition: %w", err)
	}
	if old != "" {
		os.RemoveAll(old)
	}
	return nil
}

func writeFileSync(path string, b []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("partition: %w", err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("partition: writing %s: %w", path, err)
	}
	return nil
}

// fixed are the element types of sections.
type fixed interface {
	~int64 | ~int32 | ~float32 | ~uint8
}

// littleEndian is true on little-endian hosts, where sections are written
// and read as raw memory.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// asBytes views s as its raw bytes.
func asBytes[T fixed](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z)))
}

// swapBytes reverses the bytes of each size-byte element of b in place.
func swapBytes(b []byte, size int) {
	for i := 0; i+size <= len(b); i += size {
		for l, r := i, i+size-1; l < r; l, r = l+1, r-1 {
			b[l], b[r] = b[r], b[l]
		}
	}
}

// partWriter writes a part file's sections and hashes everything it writes.
type partWriter struct {
	w    io.Writer // buffered file + whole-file CRC
	n    int64
	err  error
	path string
}

func (pw *partWriter) write(b []byte) {
	if pw.err != nil {
		return
	}
	var k int
	k, pw.err = pw.w.Write(b)
	pw.n += int64(k)
	if pw.err != nil {
		pw.err = fmt.Errorf("partition: writing %s: %w", pw.path, pw.err)
	}
}

func writeSection[T fixed](pw *partWriter, tag int, s []T) {
	b := asBytes(s)
	if !littleEndian && len(b) > 0 {
		b = append([]byte(nil), b...)
		swapBytes(b, len(b)/len(s))
	}
	var h [16]byte
	binary.LittleEndian.PutUint32(h[0:], uint32(tag))
	binary.LittleEndian.PutUint64(h[8:], uint64(len(b)))
	pw.write(h[:])
	pw.write(b)
	var c [4]byte
	binary.LittleEndian.PutUint32(c[:], crc32.Checksum(b, castagnoli))
	pw.write(c[:])
}

// writePart writes one shard as a part file and returns its size and CRC32-C.
func writePart(path string, sh *Shard, hasLabels bool) (int64, uint32, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, 0, fmt.Errorf("partition: %w", err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	sum := crc32.New(castagnoli)
	pw := &partWriter{w: io.MultiWriter(bw, sum), path: path}
	n := len(sh.Global)
	var flags uint32
	if hasLabels {
		flags |= flagHasLabels
	}
	var h [partHeaderSize]byte
	copy(h[0:8], partMagic)
	binary.LittleEndian.PutUint32(h[8:], FormatVersion)
	binary.LittleEndian.PutUint32(h[12:], flags)
	for i, x := range []int64{int64(sh.Rank), int64(sh.Ranks), sh.NumGlobalNodes, int64(n), int64(sh.FeatDim),
		int64(sh.NumClasses), sh.Local.NNZ(), int64(len(sh.Remote.Src))} {
		binary.LittleEndian.PutUint64(h[16+8*i:], uint64(x))
	}
	binary.LittleEndian.PutUint32(h[80:], crc32.Checksum(h[:80], castagnoli))
	pw.write(h[:])
	writeSection(pw, secGlobal, sh.Global)
	writeSection(pw, secFeatures, sh.X)
	writeSection(pw, secLabels, sh.Labels)
	writeSection(pw, secSplit, sh.Split)
	writeSection(pw, secLocalPtr, sh.Local.Ptr)
	writeSection(pw, secLocalIdx, sh.Local.Idx)
	writeSection(pw, secRemotePtr, sh.Remote.Ptr)
	writeSection(pw, secRemoteSrc, sh.Remote.Src)
	writeSection(pw, secRemoteOwner, sh.Remote.Owner)
	err = pw.err
	if err == nil {
		if err = bw.Flush(); err == nil {
			err = f.Sync()
		}
		if err != nil {
			err = fmt.Errorf("partition: writing %s: %w", path, err)
		}
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("partition: writing %s: %w", path, cerr)
	}
	return pw.n, sum.Sum32(), err
}

// partReader decodes one part file, naming the file and section in errors.
type partReader struct {
	r    io.Reader // buffered file, teed into sum
	sum  hash.Hash32
	path string
	left int64 // bytes of the file not yet read
}

func (pr *partReader) fail(section string, format string, a ...any) error {
	return fmt.Errorf("partition: %s: section %s: %s", pr.path, section, fmt.Sprintf(format, a...))
}

func (pr *partReader) readFull(section string, b []byte) error {
	k, err := io.ReadFull(pr.r, b)
	pr.left -= int64(k)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return pr.fail(section, "truncated file (%d of %d bytes read)", k, len(b))
	}
	if err != nil {
		return pr.fail(section, "%v", err)
	}
	return nil
}

func readSection[T fixed](pr *partReader, tag int, count int64) ([]T, error) {
	name := sectionNames[tag]
	var z T
	size := int64(unsafe.Sizeof(z))
	var h [16]byte
	if err := pr.readFull(name, h[:]); err != nil {
		return nil, err
	}
	gotTag, gotLen := binary.LittleEndian.Uint32(h[0:]), binary.LittleEndian.Uint64(h[8:])
	if gotTag != uint32(tag) || binary.LittleEndian.Uint32(h[4:]) != 0 {
		return nil, pr.fail(name, "bad section header (tag %d, want %d)", gotTag, tag)
	}
	if count < 0 || count > pr.left/size || gotLen != uint64(count*size) {
		return nil, pr.fail(name, "length %d bytes, want %d×%d (file has %d bytes left)", gotLen, count, size, pr.left)
	}
	s := make([]T, count)
	b := asBytes(s)
	if err := pr.readFull(name, b); err != nil {
		return nil, err
	}
	var c [4]byte
	if err := pr.readFull(name, c[:]); err != nil {
		return nil, err
	}
	if got, want := crc32.Checksum(b, castagnoli), binary.LittleEndian.Uint32(c[:]); got != want {
		return nil, pr.fail(name, "checksum mismatch (CRC32-C %08x, stored %08x): the file is damaged", got, want)
	}
	if !littleEndian {
		swapBytes(b, int(size))
	}
	return s, nil
}

// readPart reads and verifies part p of the directory described by m.
func readPart(dir string, m *Meta, p int) (*Shard, error) {
	ps := m.Stats.Parts[p]
	path := filepath.Join(dir, ps.File)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("partition: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("partition: %w", err)
	}
	sum := crc32.New(castagnoli)
	pr := &partReader{r: io.TeeReader(bufio.NewReaderSize(f, 1<<20), sum), sum: sum, path: path, left: fi.Size()}
	if fi.Size() != ps.Bytes {
		return nil, fmt.Errorf("partition: %s: %d bytes, %s says %d: the file is truncated or damaged", path, fi.Size(), MetaFile, ps.Bytes)
	}
	var h [partHeaderSize]byte
	if err := pr.readFull("header", h[:]); err != nil {
		return nil, err
	}
	if string(h[0:8]) != partMagic {
		return nil, pr.fail("header", "not a supergcn part file (bad magic)")
	}
	if got := binary.LittleEndian.Uint32(h[8:]); got != FormatVersion {
		return nil, pr.fail("header", "format version %d, this build reads %d", got, FormatVersion)
	}
	if got, want := crc32.Checksum(h[:80], castagnoli), binary.LittleEndian.Uint32(h[80:]); got != want {
		return nil, pr.fail("header", "checksum mismatch (CRC32-C %08x, stored %08x): the file is damaged", got, want)
	}
	flags := binary.LittleEndian.Uint32(h[12:])
	var v [8]int64
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(h[16+8*i:]))
	}
	part, parts, nglobal, n, d, classes, nloc, nrem := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
	if part != int64(p) || parts != int64(m.Parts) || nglobal != m.NumNodes || n != ps.Nodes ||
		d != int64(m.FeatDim) || nloc != ps.LocalEdges || nrem != ps.CutEdges || (flags&flagHasLabels != 0) != m.HasLabels {
		return nil, pr.fail("header", "does not match %s (part %d/%d, %d nodes, %d features, %d+%d edges)",
			MetaFile, part, parts, n, d, nloc, nrem)
	}
	sh := &Shard{Rank: p, Ranks: m.Parts, NumGlobalNodes: nglobal, FeatDim: int(d), NumClasses: int(classes)}
	nlab := int64(0)
	if m.HasLabels {
		nlab = n
	}
	if sh.Global, err = readSection[int64](pr, secGlobal, n); err != nil {
		return nil, err
	}
	if n > 0 && d > pr.left/4/n {
		return nil, pr.fail(sectionNames[secFeatures], "%d×%d features cannot fit in the file", n, d)
	}
	if sh.X, err = readSection[float32](pr, secFeatures, n*d); err != nil {
		return nil, err
	}
	if sh.Labels, err = readSection[int32](pr, secLabels, nlab); err != nil {
		return nil, err
	}
	if sh.Split, err = readSection[uint8](pr, secSplit, n); err != nil {
		return nil, err
	}
	sh.Local = &graph.CSR{NumRows: int(n), NumCols: int(n)}
	if sh.Local.Ptr, err = readSection[int64](pr, secLocalPtr, n+1); err != nil {
		return nil, err
	}
	if sh.Local.Idx, err = readSection[int32](pr, secLocalIdx, nloc); err != nil {
		return nil, err
	}
	if sh.Remote.Ptr, err = readSection[int64](pr, secRemotePtr, n+1); err != nil {
		return nil, err
	}
	if sh.Remote.Src, err = readSection[int64](pr, secRemoteSrc, nrem); err != nil {
		return nil, err
	}
	if sh.Remote.Owner, err = readSection[int32](pr, secRemoteOwner, nrem); err != nil {
		return nil, err
	}
	if pr.left != 0 {
		return nil, pr.fail("end", "%d trailing bytes after the last section", pr.left)
	}
	if got := sum.Sum32(); got != ps.CRC32C {
		return nil, fmt.Errorf("partition: %s: file checksum %08x, %s says %08x: the file is damaged", path, got, MetaFile, ps.CRC32C)
	}
	if d == 0 {
		sh.X = nil // as Split leaves it
	}
	if !m.HasLabels {
		sh.Labels = nil
	}
	if err := checkShard(sh); err != nil {
		return nil, fmt.Errorf("partition: %s: %w", path, err)
	}
	return sh, nil
}

// maxFeatDim bounds the feature dimension a partition directory may state.
const maxFeatDim = 1 << 24

// checkShard verifies the structural invariants of a decoded part, and
// that its data is usable: labels within the classes, finite features,
// each node in at most one of train, valid and test.
func checkShard(sh *Shard) error {
	n := len(sh.Global)
	if sh.NumClasses < 0 || sh.NumClasses > graph.MaxClasses {
		return fmt.Errorf("%d classes, not in [0, %d]", sh.NumClasses, graph.MaxClasses)
	}
	for v, y := range sh.Labels {
		if y < -1 || y >= int32(sh.NumClasses) {
			return fmt.Errorf("node %d (global %d) has label %d outside [-1,%d)", v, sh.Global[v], y, sh.NumClasses)
		}
	}
	for i, x := range sh.X {
		if x-x != 0 {
			return fmt.Errorf("feature [%d,%d] of node %d is %v", i/sh.FeatDim, i%sh.FeatDim, sh.Global[i/sh.FeatDim], x)
		}
	}
	for v, b := range sh.Split {
		if b&^(graph.InTrain|graph.InValid|graph.InTest) != 0 || b&(b-1) != 0 {
			return fmt.Errorf("node %d (global %d) has split bits %#x: a node is in at most one of train, valid and test", v, sh.Global[v], b)
		}
	}
	for i, g := range sh.Global {
		if g < 0 || g >= sh.NumGlobalNodes || (i > 0 && g <= sh.Global[i-1]) {
			return fmt.Errorf("global ids not ascending in [0,%d) at %d", sh.NumGlobalNodes, i)
		}
	}
	if err := sh.Local.Validate(); err != nil {
		return fmt.Errorf("local edges: %w", err)
	}
	r := sh.Remote
	if r.Ptr[0] != 0 || r.Ptr[n] != int64(len(r.Src)) {
		return errors.New("remote edges: bad row offsets")
	}
	for v := 0; v < n; v++ {
		if r.Ptr[v+1] < r.Ptr[v] {
			return fmt.Errorf("remote edges: offsets decrease at row %d", v)
		}
	}
	for k, u := range r.Src {
		if q := r.Owner[k]; u < 0 || u >= sh.NumGlobalNodes || q < 0 || int(q) >= sh.Ranks || int(q) == sh.Rank {
			return fmt.Errorf("remote edge %d: source %d of part %d is invalid here", k, u, q)
		}
	}
	return nil
}

// Load reads the shard of rank `rank` of `ranks` from the partition
// directory dir. The directory's P parts must split evenly over the ranks
// (P % ranks == 0, checked before anything else is read); the rank reads
// parts [rank·k, (rank+1)·k) with k = P/ranks, verifies every file (size,
// whole-file and per-section CRC32-C, structure) and merges them: owned
// nodes are the union (ascending global id), local edges are those of each
// part plus the remote edges whose source is in one of the rank's parts,
// and the other remote edges keep their source with Owner = part / k (a
// rank). The result equals Split(ds, owner/k, rank, ranks) for the dataset
// and owner array the directory was written from, row order included when
// the dataset's rows were sorted by source.
func Load(dir string, rank, ranks int) (*Shard, error) {
	m, err := ReadMeta(dir)
	if err != nil {
		return nil, err
	}
	if ranks < 1 || rank < 0 || rank >= ranks {
		return nil, fmt.Errorf("partition: %s: rank %d of %d ranks", dir, rank, ranks)
	}
	if m.Parts%ranks != 0 {
		return nil, fmt.Errorf("partition: %s has %d parts, which %d ranks cannot share evenly (parts %% ranks = %d): "+
			"repartition into a multiple of %d parts or run on a divisor of %d ranks", dir, m.Parts, ranks, m.Parts%ranks, ranks, m.Parts)
	}
	k := m.Parts / ranks
	shards := make([]*Shard, k)
	for i := range shards {
		if shards[i], err = readPart(dir, m, rank*k+i); err != nil {
			return nil, err
		}
	}
	if k == 1 {
		sh := shards[0]
		sh.Rank, sh.Ranks = rank, ranks
		return sh, nil
	}
	sh, err := merge(shards, rank, ranks, k)
	if err != nil {
		return nil, fmt.Errorf("partition: %s: %w", dir, err)
	}
	return sh, nil
}

// merge joins the k consecutive parts of one rank (see Load).
func merge(parts []*Shard, rank, ranks, k int) (*Shard, error) {
	first := int32(rank * k)
	total := 0
	for _, p := range parts {
		total += len(p.Global)
	}
	// pos[i][j]: merged local id of node j of part i (merged order = global order).
	pos := make([][]int32, len(parts))
	for i, p := range parts {
		pos[i] = make([]int32, len(p.Global))
	}
	ref := make([][2]int32, total) // merged id -> (part, index)
	head := make([]int, len(parts))
	for m := 0; m < total; m++ {
		best := -1
		for i, p := range parts {
			if head[i] < len(p.Global) && (best < 0 || p.Global[head[i]] < parts[best].Global[head[best]]) {
				best = i
			}
		}
		pos[best][head[best]] = int32(m)
		ref[m] = [2]int32{int32(best), int32(head[best])}
		head[best]++
	}
	p0 := parts[0]
	d := p0.FeatDim
	out := &Shard{Rank: rank, Ranks: ranks, NumGlobalNodes: p0.NumGlobalNodes, Global: make([]int64, total),
		FeatDim: d, NumClasses: p0.NumClasses, Split: make([]uint8, total)}
	if d > 0 {
		out.X = make([]float32, total*d)
	}
	if p0.Labels != nil {
		out.Labels = make([]int32, total)
	}
	var nloc, nrem int64
	for _, p := range parts {
		nloc += p.Local.NNZ()
		nrem += int64(len(p.Remote.Src))
	}
	loc := &graph.CSR{NumRows: total, NumCols: total, Ptr: make([]int64, total+1), Idx: make([]int32, 0, nloc+nrem)}
	rem := RemoteEdges{Ptr: make([]int64, total+1)}
	var fromLocal, fromRemote []int32
	for m, r := range ref {
		p, j := parts[r[0]], int(r[1])
		out.Global[m] = p.Global[j]
		if d > 0 {
			copy(out.X[m*d:(m+1)*d], p.X[j*d:(j+1)*d])
		}
		if out.Labels != nil {
			out.Labels[m] = p.Labels[j]
		}
		out.Split[m] = p.Split[j]
		fromLocal = fromLocal[:0]
		for _, u := range p.Local.Idx[p.Local.Ptr[j]:p.Local.Ptr[j+1]] {
			fromLocal = append(fromLocal, pos[r[0]][u])
		}
		fromRemote = fromRemote[:0]
		for e := p.Remote.Ptr[j]; e < p.Remote.Ptr[j+1]; e++ {
			src, q := p.Remote.Src[e], p.Remote.Owner[e]
			if q >= first && q < first+int32(k) {
				qi := q - first
				g := parts[qi].Global
				idx := sort.Search(len(g), func(i int) bool { return g[i] >= src })
				if idx == len(g) || g[idx] != src {
					return nil, fmt.Errorf("%s says node %d is in part %d, which does not hold it", PartFile(int(first)+int(r[0])), src, q)
				}
				fromRemote = append(fromRemote, pos[qi][idx])
				continue
			}
			rem.Src = append(rem.Src, src)
			rem.Owner = append(rem.Owner, q/int32(k))
		}
		// Both lists follow the source order of the original row: merging
		// them by merged id (= global order) keeps sorted rows sorted.
		a, b := fromLocal, fromRemote
		for len(a) > 0 || len(b) > 0 {
			if len(b) == 0 || (len(a) > 0 && a[0] <= b[0]) {
				loc.Idx, a = append(loc.Idx, a[0]), a[1:]
			} else {
				loc.Idx, b = append(loc.Idx, b[0]), b[1:]
			}
		}
		loc.Ptr[m+1] = int64(len(loc.Idx))
		rem.Ptr[m+1] = int64(len(rem.Src))
	}
	out.Local, out.Remote = loc, rem
	return out, nil
}

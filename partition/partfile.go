package partition

// Part files: the codec of one part of a partition directory (dir.go), the
// Shard that Split returns for that part. A part file is little-endian: a fixed 88-byte header, then fourteen
// sections in a fixed order (eleven in version 2 and nine in version 1, which are still read: dense features;
// an unweighted part). Header:
//
//	off  size  field
//	  0     8  magic "SGCNPART"
//	  8     4  format version (uint32, currently 2; 1 is read)
//	 12     4  flags (uint32; bit 0: the dataset has labels; bit 1: the graph has edge weights;
//	           bit 2: the features are sparse)
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
// Each section is an internal/container framed section: tag (uint32), zero
// (uint32), payload length in bytes (uint64), payload, CRC32-C of the
// payload (uint32). Sections, by tag:
//
//	1 global ids     int64   × n     ascending
//	2 features       float32 × n·d   row-major (0 entries when sparse)
//	3 labels         int32   × n     (0 entries when the dataset has none)
//	4 split          uint8   × n     graph.InTrain|InValid|InTest bits
//	5 local ptr      int64   × n+1
//	6 local idx      int32   × local edges (local ids)
//	7 remote ptr     int64   × n+1
//	8 remote src     int64   × remote edges (global ids)
//	9 remote owner   int32   × remote edges (part owning the source)
//	10 local weights  float32 × local edges  (0 entries when unweighted; from version 2)
//	11 remote weights float32 × remote edges (0 entries when unweighted; from version 2)
//	12 feature ptr    int64   × n+1  sparse features' row offsets (0 entries when dense; from version 3)
//	13 feature idx    int32   × nnz  their column ids, strictly increasing in a row
//	14 feature values float32 × nnz  their values
//
// Weights are finite and non-negative (checked when read).
//
// meta.json records each file's size and whole-file CRC32-C; readPart
// checks both, every section CRC, and the structure of the decoded shard.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/container"
)

// FormatVersion is the version of the partition directory this package
// writes; MinFormatVersion is the oldest it reads (version 1: no edge
// weights).
const (
	FormatVersion    = 3
	MinFormatVersion = 1
)

const (
	partMagic      = "SGCNPART"
	partHeaderSize = 88
	flagHasLabels  = 1
	flagWeighted   = 2
	flagSparse     = 4
)

// partFormat is the part file's magic and version (internal/container).
var partFormat = container.Format{Magic: partMagic, Version: FormatVersion, Min: MinFormatVersion}

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
	secLocalVal
	secRemoteVal
	secFeatPtr
	secFeatIdx
	secFeatVal
)

var sectionNames = [...]string{"", "global ids", "features", "labels", "split",
	"local ptr", "local idx", "remote ptr", "remote src", "remote owner", "local weights", "remote weights",
	"feature ptr", "feature idx", "feature values"}

// PartFile is the file name of part p in a partition directory.
func PartFile(p int) string { return fmt.Sprintf("part-%05d.bin", p) }

// writePart writes one shard as a part file (container.WriteFile: no .tmp
// left on error) and returns its size and CRC32-C.
func writePart(path string, sh *Shard, hasLabels bool) (size int64, sum uint32, err error) {
	err = container.WriteFile(path, 0o644, func(f *os.File) error {
		w := container.NewWriter(f)
		n := len(sh.Global)
		var flags uint32
		if hasLabels {
			flags |= flagHasLabels
		}
		if sh.Weighted() {
			flags |= flagWeighted
		}
		x, xs := sh.Features.Layout(), graph.FeatureLayout{} // dense rows in one section, CSR rows in three
		if x.Sparse() {
			flags |= flagSparse
			x, xs = graph.FeatureLayout{}, x
		}
		var h [partHeaderSize]byte
		partFormat.PutPrefix(h[:])
		binary.LittleEndian.PutUint32(h[12:], flags)
		for i, x := range []int64{int64(sh.Rank), int64(sh.Ranks), sh.NumGlobalNodes, int64(n), int64(sh.FeatDim),
			int64(sh.NumClasses), sh.Local.NNZ(), int64(len(sh.Remote.Src))} {
			binary.LittleEndian.PutUint64(h[16+8*i:], uint64(x))
		}
		binary.LittleEndian.PutUint32(h[80:], container.Checksum(h[:80]))
		w.Write(h[:])
		container.WriteSection(w, secGlobal, sh.Global)
		container.WriteSection(w, secFeatures, x.Val)
		container.WriteSection(w, secLabels, sh.Labels)
		container.WriteSection(w, secSplit, sh.Split)
		container.WriteSection(w, secLocalPtr, sh.Local.Ptr)
		container.WriteSection(w, secLocalIdx, sh.Local.Idx)
		container.WriteSection(w, secRemotePtr, sh.Remote.Ptr)
		container.WriteSection(w, secRemoteSrc, sh.Remote.Src)
		container.WriteSection(w, secRemoteOwner, sh.Remote.Owner)
		container.WriteSection(w, secLocalVal, sh.Local.Val)
		container.WriteSection(w, secRemoteVal, sh.Remote.Val)
		container.WriteSection(w, secFeatPtr, xs.Ptr)
		container.WriteSection(w, secFeatIdx, xs.Idx)
		container.WriteSection(w, secFeatVal, xs.Val)
		err := w.Flush()
		size, sum = w.Len(), w.Sum32()
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("partition: writing %s: %w", path, err)
	}
	return size, sum, nil
}

// readSection reads section tag of a part file holding count values.
func readSection[T container.Fixed](pr *container.Reader, tag int, count int64) ([]T, error) {
	return container.ReadSection[T](pr, uint32(tag), sectionNames[tag], count)
}

// readPart reads and verifies part p of the directory described by m.
func readPart(dir string, m *Meta, p int) (*Shard, error) {
	ps := m.Stats.Parts[p]
	path := filepath.Join(dir, ps.File)
	f, fi, err := container.OpenInput(path)
	if err != nil {
		return nil, fmt.Errorf("partition: %w", err)
	}
	defer f.Close()
	wrap := func(err error) error { return fmt.Errorf("partition: %s: %w", path, err) }
	if fi.Size() != ps.Bytes {
		return nil, fmt.Errorf("partition: %s: %d bytes, %s says %d: the file is truncated or damaged", path, fi.Size(), MetaFile, ps.Bytes)
	}
	pr := container.NewReader(f, fi.Size())
	h, err := readPartHeader(pr, m, p)
	if err != nil {
		return nil, wrap(err)
	}
	sh, err := readPartSections(pr, m, p, h)
	if err != nil {
		return nil, wrap(err)
	}
	if got := pr.Sum32(); got != ps.CRC32C {
		return nil, fmt.Errorf("partition: %s: file checksum %08x, %s says %08x: the file is damaged", path, got, MetaFile, ps.CRC32C)
	}
	if err := checkShard(sh); err != nil {
		return nil, wrap(err)
	}
	return sh, nil
}

// partHeader is what a part file's header says: its format version and
// counts.
type partHeader struct {
	version                            uint32
	sparse                             bool
	nglobal, n, d, classes, nloc, nrem int64
}

// readPartHeader reads and checks the header of part p against m.
func readPartHeader(pr *container.Reader, m *Meta, p int) (partHeader, error) {
	ps := m.Stats.Parts[p]
	fail := func(format string, a ...any) error {
		return &container.SectionError{Section: "header", Msg: fmt.Sprintf(format, a...)}
	}
	var h [partHeaderSize]byte
	if err := pr.ReadFull("header", h[:]); err != nil {
		return partHeader{}, err
	}
	version, err := partFormat.CheckPrefix(h[:])
	if errors.Is(err, container.ErrBadMagic) {
		return partHeader{}, fail("not a supergcn part file (bad magic)")
	} else if err != nil {
		return partHeader{}, fail("%v", err)
	}
	if got, want := container.Checksum(h[:80]), binary.LittleEndian.Uint32(h[80:]); got != want {
		return partHeader{}, fail("checksum mismatch (CRC32-C %08x, stored %08x): the file is damaged", got, want)
	}
	flags := binary.LittleEndian.Uint32(h[12:])
	var v [8]int64
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(h[16+8*i:]))
	}
	part, parts := v[0], v[1]
	ph := partHeader{version: version, sparse: flags&flagSparse != 0, nglobal: v[2], n: v[3], d: v[4], classes: v[5], nloc: v[6], nrem: v[7]}
	if part != int64(p) || parts != int64(m.Parts) || ph.nglobal != m.NumNodes || ph.n != ps.Nodes ||
		ph.d != int64(m.FeatDim) || ph.classes != int64(m.NumClasses) || ph.nloc != ps.LocalEdges || ph.nrem != ps.CutEdges ||
		(flags&flagHasLabels != 0) != m.HasLabels || (flags&flagWeighted != 0) != m.Weighted || ph.sparse != m.SparseFeatures || int(version) != m.FormatVersion {
		return partHeader{}, fail("does not match %s (version %d, part %d/%d, %d nodes, %d features, %d classes, %d+%d edges, weighted %v; %s: %d classes)",
			MetaFile, version, part, parts, ph.n, ph.d, ph.classes, ph.nloc, ph.nrem, flags&flagWeighted != 0, MetaFile, m.NumClasses)
	}
	return ph, nil
}

// readPartSections reads the sections of part p after its header h, up to
// the end of the file.
func readPartSections(pr *container.Reader, m *Meta, p int, h partHeader) (*Shard, error) {
	n, d := h.n, h.d
	sh := &Shard{Rank: p, Ranks: m.Parts, NumGlobalNodes: h.nglobal, FeatDim: int(d), NumClasses: int(h.classes)}
	nlab := int64(0)
	if m.HasLabels {
		nlab = n
	}
	var err error
	if sh.Global, err = readSection[int64](pr, secGlobal, n); err != nil {
		return nil, err
	}
	nx := n * d
	if h.sparse {
		nx = 0
	}
	if n > 0 && nx/n > pr.Left()/4/n {
		return nil, &container.SectionError{Section: sectionNames[secFeatures], Msg: fmt.Sprintf("%d×%d features cannot fit in the file", n, d)}
	}
	x, err := readSection[float32](pr, secFeatures, nx)
	if err != nil {
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
	if sh.Local.Idx, err = readSection[int32](pr, secLocalIdx, h.nloc); err != nil {
		return nil, err
	}
	if sh.Remote.Ptr, err = readSection[int64](pr, secRemotePtr, n+1); err != nil {
		return nil, err
	}
	if sh.Remote.Src, err = readSection[int64](pr, secRemoteSrc, h.nrem); err != nil {
		return nil, err
	}
	if sh.Remote.Owner, err = readSection[int32](pr, secRemoteOwner, h.nrem); err != nil {
		return nil, err
	}
	if h.version >= 2 {
		if err := readWeights(pr, sh, m.Weighted, h.nloc, h.nrem); err != nil {
			return nil, err
		}
	}
	if h.version >= 3 {
		if err := readSparseFeatures(pr, sh, h); err != nil {
			return nil, err
		}
	}
	if pr.Left() != 0 {
		return nil, &container.SectionError{Section: "end", Msg: fmt.Sprintf("%d trailing bytes after the last section", pr.Left())}
	}
	if d > 0 && !h.sparse {
		sh.Features = graph.DenseX(x, int(n), int(d))
	}
	if !m.HasLabels {
		sh.Labels = nil
	}
	return sh, nil
}

// readWeights reads the two weight sections (version 2): nloc and nrem
// values when weighted, none otherwise.
func readWeights(pr *container.Reader, sh *Shard, weighted bool, nloc, nrem int64) error {
	if !weighted {
		nloc, nrem = 0, 0
	}
	lv, err := readSection[float32](pr, secLocalVal, nloc)
	if err != nil {
		return err
	}
	rv, err := readSection[float32](pr, secRemoteVal, nrem)
	if err != nil {
		return err
	}
	if weighted {
		sh.Local.Val, sh.Remote.Val = lv, rv
	}
	return nil
}

// readSparseFeatures reads the three sparse feature sections (version 3):
// n+1 offsets and their entries when the part's features are sparse, none
// otherwise.
func readSparseFeatures(pr *container.Reader, sh *Shard, h partHeader) error {
	np := int64(0)
	if h.sparse {
		np = h.n + 1
	}
	ptr, err := readSection[int64](pr, secFeatPtr, np)
	if err != nil {
		return err
	}
	nnz := int64(0)
	if h.sparse {
		if nnz = ptr[h.n]; nnz < 0 || nnz > pr.Left()/8 {
			return &container.SectionError{Section: sectionNames[secFeatPtr], Msg: fmt.Sprintf("%d non-zeros cannot fit in the file", nnz)}
		}
	}
	idx, err := readSection[int32](pr, secFeatIdx, nnz)
	if err != nil {
		return err
	}
	val, err := readSection[float32](pr, secFeatVal, nnz)
	if err != nil {
		return err
	}
	if h.sparse {
		sh.Features = graph.SparseX(&graph.CSR{NumRows: int(h.n), NumCols: int(h.d), Ptr: ptr, Idx: idx, Val: val})
	}
	return nil
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
	if err := sh.Features.Check(); err != nil {
		if fe, ok := graph.AsFeatureError(err); ok && fe.Row < n {
			return fmt.Errorf("%s features of node %d: %v", sh.Features.Kind(), sh.Global[fe.Row], err)
		}
		return fmt.Errorf("%s features: %v", sh.Features.Kind(), err)
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
	if err := graph.CheckWeights(sh.Local.Val); err != nil {
		return fmt.Errorf("local edges: %w", err)
	}
	if err := graph.CheckWeights(r.Val); err != nil {
		return fmt.Errorf("remote edges: %w", err)
	}
	return nil
}

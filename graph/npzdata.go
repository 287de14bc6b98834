package graph

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/internal/field"
)

// npzBlock is the number of elements read at a time from an npz member.
const npzBlock = 1 << 20

// NpzSource is a dataset stored as NumPy arrays in .npz archives, open for
// reading by ranges of edges and nodes. Two layouts are recognised:
//
//	OGB (a directory): raw/data.npz with edge_index (2×E integers),
//	  num_nodes, node_feat (N×F floats, optional), edge_weight (E,
//	  optional); raw/node-label.npz with node_label (N or N×1; NaN =
//	  unlabelled, optional); the split under split/<name>/ as CSV files.
//	PyG (a .npz file): edge_index, x (features), y (labels), num_nodes
//	  (optional), edge_weight (optional), and the split as boolean masks
//	  train_mask, val_mask, test_mask or node id arrays train_idx, val_idx,
//	  test_idx (aliases: valid_*, *_index).
//
// edge_index may also be E×2. Other members (edge_feat, node_year, ...) are
// not read. Members stored uncompressed (np.savez) are read in place by
// offset; deflated ones (np.savez_compressed) are decompressed as read,
// front to back.
type NpzSource struct {
	Path    string // the directory or file
	Name    string
	OGB     bool  // the OGB directory layout (else a PyG-style file)
	Nodes   int   // -1 when no array states it (then max id + 1)
	Edges   int64 //
	FeatDim int   // 0 without features
	// SparseFeatures: x is stored as CSR arrays x_data, x_indices,
	// x_indptr, x_shape (read whole by SparseFeatureRows).
	SparseFeatures bool
	HasLabels      bool
	Weighted       bool      // the edges carry edge_weight
	Split          [3]string // PyG: the arrays holding train, valid, test ("" none)

	edges, feat, labels, weight *npzArray
	pairs                       bool // edge_index is E×2
	files                       []*npzFile
	ids                         idBounds // the node ids and counts admitted
}

// npzSplitNames are the array names a PyG-style file may hold each split
// part under, masks before index arrays.
var npzSplitNames = [3][]string{
	{"train_mask", "train_idx", "train_index"},
	{"val_mask", "valid_mask", "val_idx", "valid_idx", "val_index", "valid_index"},
	{"test_mask", "test_idx", "test_index"},
}

// OpenNpz opens the npz dataset at path: an OGB directory holding
// raw/data.npz, or a PyG-style .npz file, for a serial loader (int32 node
// ids, EdgeRange). Headers and sizes are checked here; no data is read.
func OpenNpz(path string) (*NpzSource, error) {
	return openNpzSource(path, serialIDs())
}

// OpenNpzRange is OpenNpz for the range readers: node counts up to
// MaxRangeNodeID+1, the edges read with EdgeRange64.
func OpenNpzRange(path string) (*NpzSource, error) {
	return openNpzSource(path, rangeIDs)
}

func openNpzSource(path string, ids idBounds) (*NpzSource, error) {
	s := &NpzSource{Path: path, Name: baseName(path), Nodes: -1, ids: ids}
	err := s.open()
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *NpzSource) open() error {
	st, err := os.Stat(s.Path)
	if err != nil {
		return err
	}
	s.OGB = st.IsDir()
	dataPath := s.Path
	if s.OGB {
		dataPath = filepath.Join(s.Path, "raw", "data.npz")
	}
	z, err := s.archive(dataPath)
	if err != nil {
		return err
	}
	feat, labels := "x", "y"
	if s.OGB {
		feat, labels = "node_feat", ""
	}
	if err := s.openEdges(z); err != nil {
		return err
	}
	if err := s.openNodeCount(z); err != nil {
		return err
	}
	if z.has(feat) {
		if s.feat, err = s.table(z, feat, false); err != nil {
			return err
		}
		s.FeatDim = int(s.feat.rowLen())
	} else if !s.OGB && z.has(feat+"_indptr") {
		rows, cols, err := z.sparseShape(feat+"_shape", s.Nodes)
		if err != nil {
			return err
		}
		s.Nodes, s.FeatDim, s.SparseFeatures = rows, cols, true
	}
	if s.OGB {
		lp := filepath.Join(s.Path, "raw", "node-label.npz")
		if _, err := os.Stat(lp); err == nil {
			if z, err = s.archive(lp); err != nil {
				return err
			}
			labels = "node_label"
		}
	}
	if labels != "" && (z.has(labels) || s.OGB) { // raw/node-label.npz must hold node_label
		if s.labels, err = s.table(z, labels, true); err != nil {
			return err
		}
		s.HasLabels = true
	}
	if !s.OGB {
		for k, names := range npzSplitNames {
			s.Split[k] = z.first(names...)
		}
	}
	if s.Nodes < 0 && s.Edges == 0 {
		return errorf(dataPath, 0, "edge_index has no edges and nothing gives the node count (num_nodes, node features or labels)")
	}
	return nil
}

// archive opens an .npz file and keeps it for Close.
func (s *NpzSource) archive(path string) (*npzFile, error) {
	z, err := openNpz(path)
	if err != nil {
		return nil, err
	}
	s.files = append(s.files, z)
	return z, nil
}

// openEdges opens edge_index (2×E or E×2 integers) and edge_weight.
func (s *NpzSource) openEdges(z *npzFile) error {
	a, err := z.open("edge_index")
	if err != nil {
		return err
	}
	s.edges = a
	switch {
	case a.h.kind == 'f' || a.h.kind == 'b':
		return errorf(a.name, 0, "dtype %s: node ids must be integers", a.h.descr)
	case len(a.Shape) == 2 && a.Shape[0] == 2:
		s.Edges = int64(a.Shape[1])
	case len(a.Shape) == 2 && a.Shape[1] == 2:
		s.Edges, s.pairs = int64(a.Shape[0]), true
	default:
		return errorf(a.name, 0, "shape %v, want (2, E) or (E, 2)", a.Shape)
	}
	if !z.has("edge_weight") {
		return nil
	}
	if s.weight, err = z.open("edge_weight"); err != nil {
		return err
	}
	s.Weighted = true
	if len(s.weight.Shape) != 1 || int64(s.weight.Shape[0]) != s.Edges {
		return errorf(s.weight.name, 0, "shape %v, want (%d,): one weight per edge", s.weight.Shape, s.Edges)
	}
	return nil
}

// openNodeCount reads num_nodes (a scalar or one-element integer array).
func (s *NpzSource) openNodeCount(z *npzFile) error {
	if !z.has("num_nodes") {
		return nil
	}
	a, err := z.open("num_nodes")
	if err != nil {
		return err
	}
	defer a.Close()
	if a.n != 1 || a.h.kind == 'b' {
		return errorf(a.name, 0, "shape %v of %s, want one integer", a.Shape, a.h.descr)
	}
	v, err := a.elems(0, 1)
	var n []int64
	if err == nil {
		if n, err = v.Int64(); err != nil {
			err = errorf(a.name, 0, "%v", err)
		}
	}
	switch {
	case err != nil:
		return err
	case n[0] < 0:
		return errorf(a.name, 0, "%d nodes: want a count from 0", n[0])
	case s.ids.tooLarge(n[0]) != "":
		return errorf(a.name, 0, "%d nodes: %s", n[0], s.ids.tooLarge(n[0]))
	case n[0] > s.ids.mem:
		return tooManyNodes(a.name, 0, "the node count", n[0])
	}
	s.Nodes = int(n[0])
	return nil
}

// table opens a per-node array (features N×F, or labels N / N×1) and checks
// its rows against the node count, which it sets when still unknown.
func (s *NpzSource) table(z *npzFile, name string, labels bool) (*npzArray, error) {
	a, err := z.open(name)
	if err != nil {
		return nil, err
	}
	ok := len(a.Shape) == 2 && a.h.kind != 'b'
	want := "(N, F) numbers"
	if labels {
		ok = len(a.Shape) == 1 || (len(a.Shape) == 2 && a.Shape[1] == 1)
		want = "(N,) or (N, 1)"
	}
	if !ok {
		a.Close()
		return nil, errorf(a.name, 0, "shape %v of %s, want %s", a.Shape, a.h.descr, want)
	}
	if !labels {
		if err := checkFeatWidth(a.name, a.rowLen()); err != nil {
			a.Close()
			return nil, err
		}
	}
	if err := s.ids.checkRows(a.name, a.Shape[0]); err != nil {
		a.Close()
		return nil, err
	}
	if s.Nodes < 0 {
		s.Nodes = a.Shape[0]
	} else if a.Shape[0] != s.Nodes {
		a.Close()
		return nil, errorf(a.name, 0, "has %d rows but the graph has %d nodes", a.Shape[0], s.Nodes)
	}
	return a, nil
}

// Close closes every archive.
func (s *NpzSource) Close() error {
	var first error
	for _, a := range []*npzArray{s.edges, s.feat, s.labels, s.weight} {
		if a != nil {
			a.Close()
		}
	}
	for _, z := range s.files {
		if err := z.Close(); first == nil {
			first = err
		}
	}
	return first
}

// Compressed reports whether the edges are stored deflated: they can only
// be read front to back, by one reader.
func (s *NpzSource) Compressed() bool { return !s.edges.stored }

// FeaturesCompressed reports whether the features are stored deflated.
func (s *NpzSource) FeaturesCompressed() bool { return s.feat != nil && !s.feat.stored }

// LabelsCompressed reports whether the labels are stored deflated.
func (s *NpzSource) LabelsCompressed() bool { return s.labels != nil && !s.labels.stored }

// EdgeRange returns edges [lo, hi) of a source opened by OpenNpz: their
// sources and destinations, with ids checked to lie in [0, Nodes) (or
// [0, 2^31-1) when Nodes is unknown). A compressed archive is read front
// to back: ranges must ascend.
func (s *NpzSource) EdgeRange(lo, hi int64) (src, dst []int32, err error) {
	a, b, err := s.edgeRange(lo, hi, false)
	return a.i32, b.i32, err
}

// EdgeRange64 is EdgeRange with int64 ids, up to MaxRangeNodeID when Nodes
// is unknown and the source was opened by OpenNpzRange.
func (s *NpzSource) EdgeRange64(lo, hi int64) (src, dst []int64, err error) {
	a, b, err := s.edgeRange(lo, hi, true)
	return a.i64, b.i64, err
}

func (s *NpzSource) edgeRange(lo, hi int64, wide bool) (src, dst idList, err error) {
	if s.pairs {
		ids := newIDList(wide, int(2*(hi-lo)))
		if err := s.readIDs(2*lo, 2*hi, &ids); err != nil {
			return idList{}, idList{}, err
		}
		src, dst = newIDList(wide, int(hi-lo)), newIDList(wide, int(hi-lo))
		for k := 0; k < ids.len(); k += 2 {
			if wide {
				src.add(ids.i64[k])
				dst.add(ids.i64[k+1])
			} else {
				src.add(int64(ids.i32[k]))
				dst.add(int64(ids.i32[k+1]))
			}
		}
		return src, dst, nil
	}
	src, dst = newIDList(wide, int(hi-lo)), newIDList(wide, int(hi-lo))
	if err := s.readIDs(lo, hi, &src); err != nil {
		return idList{}, idList{}, err
	}
	if err := s.readIDs(s.Edges+lo, s.Edges+hi, &dst); err != nil {
		return idList{}, idList{}, err
	}
	return src, dst, nil
}

// readIDs appends elements [from, to) of edge_index to out as node ids.
func (s *NpzSource) readIDs(from, to int64, out *idList) error {
	limit := s.ids.maxID
	if s.Nodes >= 0 {
		limit = int64(s.Nodes) - 1
	}
	if !out.wide {
		limit = min(limit, maxNodeID)
	}
	memLimit := s.ids.mem
	for b := from; b < to; b += npzBlock {
		arr, err := s.edges.elems(b, min(b+npzBlock, to))
		if err != nil {
			return err
		}
		v, err := arr.Int64()
		if err != nil {
			return errorf(s.edges.name, 0, "%v", err)
		}
		for k, x := range v {
			if x < 0 || x > limit || x >= memLimit {
				return s.badID(b+int64(k), x, limit, memLimit, out.wide)
			}
			out.add(x)
		}
	}
	return nil
}

// badID is the error for element e of edge_index holding id x.
func (s *NpzSource) badID(e, x, limit, memLimit int64, wide bool) error {
	row, col := e/s.Edges, e%s.Edges
	if s.pairs {
		row, col = e/2, e%2
	}
	where := fmt.Sprintf("element [%d, %d]", row, col)
	if x >= memLimit && x <= limit {
		return tooManyNodes(s.edges.name, 0, fmt.Sprintf("%s: node id %d", where, x), x+1)
	}
	return errorf(s.edges.name, 0, "%s: %s", where, idBounds{wide: wide}.outside(x, limit))
}

// Weights returns the weights of edges [lo, hi), checked finite and
// non-negative.
func (s *NpzSource) Weights(lo, hi int64) ([]float32, error) {
	arr, err := s.weight.elems(lo, hi)
	if err != nil {
		return nil, err
	}
	w, err := arr.Float32()
	if err != nil {
		return nil, errorf(s.weight.name, 0, "%v", err)
	}
	for k, v := range w {
		if msg := weightProblem(v); msg != "" {
			return nil, errorf(s.weight.name, 0, "element %d is %v: %s", lo+int64(k), v, msg)
		}
	}
	return w, nil
}

// FeatureRows returns feature rows [lo, hi) as float32 (float16, float64
// and integers converted), checked finite.
func (s *NpzSource) FeatureRows(lo, hi int) ([]float32, error) {
	d := int64(s.FeatDim)
	x := make([]float32, 0, int64(hi-lo)*d)
	rows := max(1, npzBlock/max(d, 1))
	for r := int64(lo); r < int64(hi); r += rows {
		arr, err := s.feat.elems(r*d, min(r+rows, int64(hi))*d)
		if err != nil {
			return nil, err
		}
		v, err := arr.Float32()
		if err != nil {
			return nil, errorf(s.feat.name, 0, "%v", err)
		}
		if err := s.checkFinite(v, r); err != nil {
			return nil, err
		}
		x = append(x, v...)
	}
	return x, nil
}

// checkFinite reports the first NaN or Inf of feature rows from row r.
func (s *NpzSource) checkFinite(x []float32, r int64) error {
	for i, v := range x {
		if v-v != 0 {
			return errorf(s.feat.name, 0, "feature [%d, %d] is %v", r+int64(i)/int64(s.FeatDim), i%s.FeatDim, v)
		}
	}
	return nil
}

// features returns every feature row: float32 rows stored uncompressed
// straight from the file's mapping (release unmaps them), others read.
func (s *NpzSource) features() (x []float32, release func() error, err error) {
	if x, release = s.feat.mappedF32(); x != nil {
		if err := s.checkFinite(x, 0); err != nil {
			release()
			return nil, nil, err
		}
		return x, release, nil
	}
	x, err = s.FeatureRows(0, s.Nodes)
	return x, nil, err
}

// LabelRows returns labels [lo, hi): integers >= -1, or integral floats
// with NaN for an unlabelled node (-1).
func (s *NpzSource) LabelRows(lo, hi int) ([]int32, error) {
	arr, err := s.labels.elems(int64(lo), int64(hi))
	if err != nil {
		return nil, err
	}
	return npyLabels(s.labels.name, arr, lo)
}

// SplitPart opens the PyG array of split part k (0 train, 1 valid, 2 test)
// of a graph of nodes nodes: a boolean mask, or an array of node ids.
func (s *NpzSource) SplitPart(k, nodes int) (*SplitArray, error) {
	a, err := s.files[0].open(s.Split[k])
	return newSplitArray(a, err, nodes)
}

// isNpzFile reports whether path is a zip archive named .npz.
func isNpzFile(path string) bool {
	if strings.HasSuffix(strings.ToLower(path), ".npz") {
		return true
	}
	f, _, err := container.OpenInput(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [4]byte
	n, _ := f.Read(b[:])
	return n == 4 && string(b[:]) == "PK\x03\x04"
}

// loadNpz reads the npz dataset at path (see NpzSource) whole; float32
// features stored uncompressed stay in the file's mapping until Release.
func loadNpz(path string, o LoadOptions) (ds *Dataset, err error) {
	s, err := OpenNpz(path)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	src, dst, err := s.EdgeRange(0, s.Edges)
	if err != nil {
		return nil, err
	}
	n := s.Nodes
	for k := range src {
		n = max(n, int(src[k])+1, int(dst[k])+1)
	}
	var w []float32
	if s.Weighted {
		if w, err = s.Weights(0, s.Edges); err != nil {
			return nil, err
		}
	}
	ds = &Dataset{Name: s.Name, Graph: FromCOO(n, n, src, dst, w)}
	defer func() {
		if err != nil {
			ds.Release()
			ds = nil
		}
	}()
	if s.SparseFeatures && o.Features == "" {
		var x *CSR
		if x, err = s.SparseFeatureRows(n); err != nil {
			return ds, err
		}
		ds.Features = SparseX(x)
		ds.FeatDim = s.FeatDim
	} else if s.FeatDim > 0 && o.Features == "" {
		var x []float32
		if x, ds.release, err = s.features(); err != nil {
			return ds, err
		}
		ds.Features = DenseX(x, n, s.FeatDim)
		ds.FeatDim = s.FeatDim
	}
	if s.HasLabels && o.Labels == "" {
		if ds.Labels, err = s.LabelRows(0, n); err != nil {
			return ds, err
		}
		ds.NumClasses = numClasses(ds.Labels)
	}
	switch {
	case !o.ownSplit():
	case s.OGB:
		err = loadOGBSplit(ds, path, o.Split)
	default:
		err = loadNpzSplit(ds, s, s.HasLabels || o.Labels != "")
	}
	return ds, err
}

// SparseFeatureRows reads the features stored as CSR arrays (x_data,
// x_indices, x_indptr, x_shape) for n nodes, checked as canonical.
func (s *NpzSource) SparseFeatureRows(n int) (*CSR, error) {
	return s.files[0].sparseMatrix("x_", "csr", n)
}

// loadNpzSplit reads the split arrays of a PyG-style file.
func loadNpzSplit(ds *Dataset, s *NpzSource, labelled bool) error {
	if ok, err := s.HasSplit(labelled); !ok {
		return err
	}
	seen := make([]uint8, ds.NumNodes())
	var parts [3][]int32
	for k := range 3 {
		a, err := s.SplitPart(k, ds.NumNodes())
		if err != nil {
			return err
		}
		parts[k], err = splitIDs(a, ds.Labels, seen, uint8(1)<<k)
		a.Close()
		if err != nil {
			return err
		}
	}
	ds.Train, ds.Valid, ds.Test = parts[0], parts[1], parts[2]
	return nil
}

// HasSplit reports whether a PyG-style file holds all three split arrays;
// when it does not, err says what is missing unless the file has none and
// is not labelled (a structure-only graph).
func (s *NpzSource) HasSplit(labelled bool) (ok bool, err error) {
	var missing []string
	for k, name := range s.Split {
		if name == "" {
			missing = append(missing, npzSplitNames[k][0]+"/"+strings.Replace(npzSplitNames[k][0], "mask", "idx", 1))
		}
	}
	switch {
	case len(missing) == 0:
		return true, nil
	case len(missing) == 3 && !labelled:
		return false, nil
	}
	return false, field.Errorf("graph.LoadOptions.Split", "%s has no %s array: choose a split with random:TRAIN,VALID[,TEST][:SEED] or graph.LoadOptions.SplitFiles",
		s.Path, strings.Join(missing, ", no "))
}

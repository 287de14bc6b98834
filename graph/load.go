package graph

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/internal/field"
)

// LoadOptions selects how Load reads a dataset.
type LoadOptions struct {
	Format string // "", "auto", "ogb", "npz", "edgelist", "metis" or "bin"
	// Split chooses the split: "" the dataset's own (an OGB directory's
	// "public" split directory, or its only one); NAME an OGB split
	// directory; random:TRAIN,VALID[,TEST][:SEED] a random split of the
	// labelled nodes (see ParseSplit), for any format.
	Split string
	// SplitFiles is a directory of train, valid and test files (.npy node
	// ids or boolean masks, or .csv[.gz] one id a line) replacing the
	// dataset's split, for any format.
	SplitFiles string
	Features   string // optional .npy (N×F dense) or scipy sparse .npz replacing the dataset's features
	Labels     string // optional .npy (N, or N×1) replacing the dataset's labels
	// NoLabels leaves the dataset's class labels out: an OGB directory's
	// raw/node-label is not read (a multi-column table a task reads as
	// its targets), other formats' labels are dropped.
	NoLabels bool
	// NodeFeatFromEdges ("" = off; mean, sum or max) appends to the node
	// features the reduction of the features of each node's edges, read
	// from an OGB directory's raw/edge-feat.csv[.gz] (EdgeFeatReductions).
	NodeFeatFromEdges string
}

// Formats lists the values LoadOptions.Format (the --format flag) accepts.
func Formats() []string { return []string{"auto", "ogb", "npz", "edgelist", "metis", "bin"} }

// Load reads the dataset at path in the format o.Format, detected when
// empty or "auto" (see DetectFormat), applies the .npy feature and label
// overrides, then the split o asks for. Edges are returned as stored (a
// directed graph stays directed; use Symmetrize for an undirected one).
// Name is the base name of path without compression and format extensions.
func Load(path string, o LoadOptions) (*Dataset, error) {
	format, err := CheckLoadOptions(path, o)
	if err != nil {
		return nil, err
	}
	ds, err := loadFormat(path, format, o)
	if err != nil {
		return nil, err
	}
	if ds.Name == "" || format != "bin" {
		ds.Name = baseName(path)
	}
	if o.NoLabels {
		ds.Labels, ds.NumClasses = nil, 0
	}
	err = applyOverrides(ds, o)
	if err == nil {
		err = applySplit(ds, o)
	}
	if err != nil {
		ds.Release()
		return nil, err
	}
	return ds, nil
}

// CheckLoadOptions returns the format of path (o.Format, or the detected
// one) after checking that o's split options suit it: a split NAME is for
// OGB directories only, and Split and SplitFiles exclude each other.
func CheckLoadOptions(path string, o LoadOptions) (string, error) {
	format := o.Format
	if format == "" || format == "auto" {
		var err error
		if format, err = DetectFormat(path); err != nil {
			return "", err
		}
	}
	if !slices.Contains(Formats(), format) {
		return "", field.Errorf("graph.LoadOptions.Format", "%q: unknown format (want %s)", o.Format, strings.Join(Formats(), ", "))
	}
	name, _, err := ParseSplit(o.Split)
	switch {
	case err != nil:
		return "", err
	case name != "" && format != "ogb":
		return "", field.Errorf("graph.LoadOptions.Split", "%q: only OGB directories have named splits, %s is a %s file "+
			"(choose random:TRAIN,VALID[,TEST][:SEED] or graph.LoadOptions.SplitFiles)", o.Split, path, format)
	case o.Split != "" && o.SplitFiles != "":
		return "", field.Errorf("graph.LoadOptions.SplitFiles", "%s: give the split either as files or as graph.LoadOptions.Split (%q), not both", o.SplitFiles, o.Split)
	case o.NodeFeatFromEdges != "" && format != "ogb":
		return "", errNotOGBEdgeFeat(format)
	}
	if err := checkEdgeFeatReduction(o.NodeFeatFromEdges); err != nil {
		return "", err
	}
	if o.SplitFiles != "" {
		if st, err := os.Stat(o.SplitFiles); err != nil || !st.IsDir() {
			return "", field.Errorf("graph.LoadOptions.SplitFiles", "%s is not a directory", o.SplitFiles)
		}
	}
	return format, nil
}

// ownSplit reports whether the dataset's own split is wanted (no random
// split, no split files).
func (o *LoadOptions) ownSplit() bool {
	return !strings.HasPrefix(o.Split, "random:") && o.SplitFiles == ""
}

// loadFormat reads path in format.
func loadFormat(path, format string, o LoadOptions) (*Dataset, error) {
	switch format {
	case "ogb":
		if st, serr := os.Stat(path); serr != nil || !st.IsDir() {
			return nil, field.Errorf("graph.LoadOptions.Format", "ogb: %s is not a directory", path)
		}
		if findData(filepath.Join(path, "raw"), "edge", false) == "" && isFile(filepath.Join(path, "raw", "data.npz")) {
			if o.NodeFeatFromEdges != "" {
				return nil, errNotOGBEdgeFeat("npz (raw/data.npz)")
			}
			return loadNpz(path, o)
		}
		return loadOGB(path, o)
	case "npz":
		return loadNpz(path, o)
	case "edgelist":
		return LoadEdgeList(path)
	case "metis":
		return LoadMetis(path)
	}
	return LoadBinary(path)
}

// isFile reports whether path exists and is not a directory.
func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

// DetectFormat returns the format of path: "ogb" for a directory holding
// raw/edge.csv[.gz|.bz2] or raw/data.npz; "bin" for a file starting with
// the binary dataset magic; "npz" for a zip archive or a .npz name;
// "metis" for a .graph or .metis name (optionally .gz/.bz2) or a file whose
// first lines look like a METIS header and adjacency lines (see
// looksLikeMetis); "edgelist" otherwise.
func DetectFormat(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if st.IsDir() {
		if findData(filepath.Join(path, "raw"), "edge", false) != "" || isFile(filepath.Join(path, "raw", "data.npz")) {
			return "ogb", nil
		}
		return "", errorf(path, 0, "directory is not an OGB dataset (no raw/edge.csv[.gz], no raw/data.npz)")
	}
	if err := container.CheckInput(path); err != nil {
		return "", err
	}
	if isBinaryFile(path) {
		return "bin", nil
	}
	if isNpzFile(path) {
		return "npz", nil
	}
	switch filepath.Ext(stripCompression(path)) {
	case ".graph", ".metis":
		return "metis", nil
	}
	lr, err := openLines(path)
	if err != nil {
		return "", err
	}
	defer lr.Close()
	if looksLikeMetis(lr, 1000) {
		return "metis", nil
	}
	return "edgelist", nil
}

// looksLikeMetis sniffs up to maxLines lines: the first line that is not a
// '%' comment must parse as a METIS header "n m [fmt [ncon]]" and the
// following lines must not all have as many fields as the header (an edge
// list has the same field count on every line) — or include a blank line,
// which in METIS is a vertex without neighbours. '#' comments and commas
// mean an edge list. A METIS graph whose every vertex has exactly as many
// neighbours as its header has fields is taken for an edge list: name such
// files .graph or pass --format metis.
func looksLikeMetis(lr *lineReader, maxLines int) bool {
	line, ok := nextNonComment(lr)
	if !ok || bytes.IndexByte(line, '#') >= 0 || bytes.IndexByte(line, ',') >= 0 {
		return false
	}
	h, msg := parseMetisHeader(line, rangeIDs)
	if msg != "" {
		return false
	}
	varied := false
	for k := 0; k < maxLines; k++ {
		line, ok := nextNonComment(lr)
		if !ok {
			break
		}
		if bytes.IndexByte(line, '#') >= 0 || bytes.IndexByte(line, ',') >= 0 {
			return false
		}
		if countFields(line) != h.fieldCount {
			varied = true
		}
	}
	return varied
}

// countFields counts the fields of a line separated by spaces/tabs/commas.
func countFields(line []byte) int {
	n := 0
	for i := 0; ; n++ {
		var f []byte
		if f, i = nextField(line, i); len(f) == 0 {
			return n
		}
	}
}

// stripCompression drops a .gz or .bz2 suffix.
func stripCompression(path string) string {
	for _, ext := range []string{".gz", ".bz2"} {
		if strings.HasSuffix(path, ext) {
			return strings.TrimSuffix(path, ext)
		}
	}
	return path
}

// baseName is the dataset name of path: its base name without a
// compression suffix and without one further extension ("wave.graph.bz2"
// → "wave", ".../cora/" → "cora").
func baseName(path string) string {
	b := filepath.Base(stripCompression(filepath.Clean(path)))
	if ext := filepath.Ext(b); ext != "" && ext != b {
		b = strings.TrimSuffix(b, ext)
	}
	return b
}

// applyOverrides replaces features and labels from .npy files and checks
// that split nodes are labelled.
func applyOverrides(ds *Dataset, o LoadOptions) error {
	n := ds.NumNodes()
	if o.Features != "" && isNpzFile(o.Features) {
		x, err := readSparseFeatureFile(o.Features, n)
		if err != nil {
			return field.Wrap("graph.LoadOptions.Features", err)
		}
		ds.Features, ds.FeatDim = SparseX(x), x.NumCols
	} else if o.Features != "" {
		x, dim, err := readNpyFeatures(o.Features, n)
		if err != nil {
			return field.Wrap("graph.LoadOptions.Features", err)
		}
		ds.Features, ds.FeatDim = DenseX(x, n, dim), dim
	}
	if o.Labels != "" {
		y, err := readNpyLabels(o.Labels, n)
		if err != nil {
			return field.Wrap("graph.LoadOptions.Labels", err)
		}
		ds.Labels, ds.NumClasses = y, numClasses(y)
		for _, part := range [][]int32{ds.Train, ds.Valid, ds.Test} {
			for _, v := range part {
				if y[v] < 0 {
					return field.Errorf("graph.LoadOptions.Labels", "%s: node %d is in the split but has no label", o.Labels, v)
				}
			}
		}
	}
	return nil
}

// MaxFeatDim is the widest feature array read: the widest input the
// models take (nn.MaxWidth).
const MaxFeatDim = 1 << 24

// checkFeatWidth refuses a feature array of f columns, from its header
// before any of its data is read: none (N×0 holds no features) or more
// than MaxFeatDim.
func checkFeatWidth(name string, f int64) error {
	switch {
	case f == 0:
		return errorf(name, 0, "the feature array has 0 columns")
	case f > MaxFeatDim:
		return errorf(name, 0, "the feature array has %d columns, at most %d", f, MaxFeatDim)
	}
	return nil
}

// readNpyFeatures reads an N×F float array (N = n unless n < 0).
func readNpyFeatures(path string, n int) ([]float32, int, error) {
	a, err := ReadNpy(path)
	if err != nil {
		return nil, 0, err
	}
	if len(a.Shape) != 2 || (n >= 0 && a.Shape[0] != n) {
		return nil, 0, errorf(path, 0, "features have shape %v, want (%s, F)", a.Shape, nodesStr(n))
	}
	if err := checkRows(path, a.Shape[0]); err != nil {
		return nil, 0, err
	}
	if err := checkFeatWidth(path, int64(a.Shape[1])); err != nil {
		return nil, 0, err
	}
	x, err := a.Float32()
	if err != nil {
		return nil, 0, errorf(path, 0, "%v", err)
	}
	for i, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, 0, errorf(path, 0, "feature [%d,%d] is %v", i/a.Shape[1], i%a.Shape[1], v)
		}
	}
	return x, a.Shape[1], nil
}

// readNpyLabels reads labels of shape (N,) or (N, 1): integers >= -1, or
// integral floats with NaN for unlabelled nodes (as OGB's papers100M).
func readNpyLabels(path string, n int) ([]int32, error) {
	a, err := ReadNpy(path)
	if err != nil {
		return nil, err
	}
	ok := len(a.Shape) == 1 || (len(a.Shape) == 2 && a.Shape[1] == 1)
	if !ok || (n >= 0 && a.Shape[0] != n) {
		return nil, errorf(path, 0, "labels have shape %v, want (%s,) or (%s, 1)", a.Shape, nodesStr(n), nodesStr(n))
	}
	if err := checkRows(path, a.Shape[0]); err != nil {
		return nil, err
	}
	return npyLabels(path, a, 0)
}

// npyLabels converts the labels a (rows off, off+1, ... of the file path)
// to int32: integers >= -1, or integral floats with NaN for unlabelled.
func npyLabels(path string, a *NpyArray, off int) ([]int32, error) {
	var y []int64
	var err error
	if len(a.Descr) == 3 && a.Descr[1] == 'f' {
		f, _ := a.Float32()
		y = make([]int64, len(f))
		for i, v := range f {
			switch {
			case math.IsNaN(float64(v)):
				y[i] = -1
			case v != float32(int64(v)):
				return nil, errorf(path, 0, "label %d is %v, not an integer", off+i, v)
			default:
				y[i] = int64(v)
			}
		}
	} else if y, err = a.Int64(); err != nil {
		return nil, errorf(path, 0, "%v", err)
	}
	labels := make([]int32, len(y))
	for i, v := range y {
		if v < -1 || v > maxNodeID {
			return nil, errorf(path, 0, "label %d is %d (want >= 0, or -1 for none)", off+i, v)
		}
		if v >= MaxClasses {
			return nil, errorf(path, 0, "label %d is %d: at most %d classes are supported", off+i, v, MaxClasses)
		}
		labels[i] = int32(v)
	}
	return labels, nil
}

// checkRows refuses a per-node array of more rows than a serial loader's
// node ids or memory allow.
func checkRows(name string, rows int) error { return serialIDs().checkRows(name, rows) }

func nodesStr(n int) string {
	if n < 0 {
		return "N"
	}
	return fmt.Sprint(n)
}

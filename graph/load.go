package graph

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/internal/field"
)

// LoadOptions selects how Load reads a dataset.
type LoadOptions struct {
	Format   string // "", "auto", "ogb", "edgelist", "metis" or "bin"
	Split    string // OGB split directory; "" = "public" if present, else the only one
	Features string // optional .npy (N×F) replacing the dataset's features
	Labels   string // optional .npy (N, or N×1) replacing the dataset's labels
}

// Formats lists the values LoadOptions.Format (the --format flag) accepts.
func Formats() []string { return []string{"auto", "ogb", "edgelist", "metis", "bin"} }

// Load reads the dataset at path in the format o.Format, detected when
// empty or "auto" (see DetectFormat), then applies the .npy feature and
// label overrides. Edges are returned as stored (a directed graph stays
// directed; use Symmetrize for an undirected one). Name is the base name of
// path without compression and format extensions.
func Load(path string, o LoadOptions) (*Dataset, error) {
	format := o.Format
	if format == "" || format == "auto" {
		var err error
		if format, err = DetectFormat(path); err != nil {
			return nil, err
		}
	}
	if o.Split != "" && (format == "edgelist" || format == "metis") {
		return nil, field.Errorf("graph.LoadOptions.Split", "%q: only OGB directories have splits, %s is a %s file", o.Split, path, format)
	}
	var ds *Dataset
	var err error
	switch format {
	case "ogb":
		if st, serr := os.Stat(path); serr != nil || !st.IsDir() {
			return nil, field.Errorf("graph.LoadOptions.Format", "ogb: %s is not a directory", path)
		}
		ds, err = loadOGB(path, o)
	case "edgelist":
		ds, err = LoadEdgeList(path)
	case "metis":
		ds, err = LoadMetis(path)
	case "bin":
		ds, err = LoadBinary(path)
	default:
		return nil, field.Errorf("graph.LoadOptions.Format", "%q: unknown format (want %s)", o.Format, strings.Join(Formats(), ", "))
	}
	if err != nil {
		return nil, err
	}
	if ds.Name == "" || format != "bin" {
		ds.Name = baseName(path)
	}
	if err := applyOverrides(ds, o); err != nil {
		return nil, err
	}
	return ds, nil
}

// DetectFormat returns the format of path: "ogb" for a directory holding
// raw/edge.csv[.gz|.bz2]; "bin" for a file starting with the binary
// dataset magic; "metis" for a .graph or .metis name (optionally .gz/.bz2)
// or a file whose first lines look like a METIS header and adjacency lines
// (see looksLikeMetis); "edgelist" otherwise.
func DetectFormat(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if st.IsDir() {
		if findData(filepath.Join(path, "raw"), "edge", false) != "" {
			return "ogb", nil
		}
		return "", errorf(path, 0, "directory is not an OGB dataset (no raw/edge.csv[.gz])")
	}
	if err := container.CheckInput(path); err != nil {
		return "", err
	}
	if isBinaryFile(path) {
		return "bin", nil
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
	h, msg := parseMetisHeader(line)
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
	if o.Features != "" {
		x, dim, err := readNpyFeatures(o.Features, n)
		if err != nil {
			return field.Wrap("graph.LoadOptions.Features", err)
		}
		ds.X, ds.FeatDim = x, dim
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

// readNpyFeatures reads an N×F float array (N = n unless n < 0).
func readNpyFeatures(path string, n int) ([]float32, int, error) {
	a, err := ReadNpy(path)
	if err != nil {
		return nil, 0, err
	}
	if len(a.Shape) != 2 || (n >= 0 && a.Shape[0] != n) {
		return nil, 0, errorf(path, 0, "features have shape %v, want (%s, F)", a.Shape, nodesStr(n))
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
	return npyLabels(path, a, 0)
}

// npyLabels converts the labels a (rows off, off+1, ... of the file path)
// to int32: integers >= -1, or integral floats with NaN for unlabelled.
func npyLabels(path string, a *NpyArray, off int) ([]int32, error) {
	var y []int64
	var err error
	if strings.HasSuffix(a.Descr, "f4") || strings.HasSuffix(a.Descr, "f8") {
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

func nodesStr(n int) string {
	if n < 0 {
		return "N"
	}
	return fmt.Sprint(n)
}

package task

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/partition"
)

// Table is a per-node target table: row g is the node of global id g,
// one column per target (task); NaN marks an unlabelled entry.
type Table struct {
	Path       string // the file it was read from (error messages)
	Rows, Cols int
	Y          []float32 // Rows×Cols, row-major
	// Edges are a link task's positive pairs (global ids), Seed its
	// negatives' seed, NegRatio the negatives drawn per training edge
	// (0: 1); Cols is 0 then.
	Edges    *graph.EdgeSplit
	Seed     uint64
	NegRatio int
	// LinkMetric is the link task's selecting metric (LinkMetrics; ""
	// auto).
	LinkMetric string
	// Decoder is the link task's pair scorer (Decoders; "" dot).
	Decoder string
}

// TargetFormats lists the file forms ReadTargets reads.
const TargetFormats = ".npy (N,) or (N, T) of any numeric dtype, .npz holding it as y (np.savez(FILE, y=Y)) or as its only array, or .csv[.gz] with T comma-separated columns a line (nan or an empty field: unlabelled)"

// ReadTargets reads a target table from path (TargetFormats) and checks it
// with k's rule (0/1 for multilabel, finite for regression): a bad entry is
// an error naming the file and its row and column.
func ReadTargets(path string, k Kind) (*Table, error) {
	var t *Table
	var err error
	switch {
	case strings.HasSuffix(path, ".npy"), strings.HasSuffix(path, ".npz"):
		t, err = readNpyTargets(path)
	case strings.HasSuffix(path, ".csv"), strings.HasSuffix(path, ".csv.gz"):
		t, err = readCSVTargets(path)
	default:
		return nil, fmt.Errorf("%s: targets must be %s", path, TargetFormats)
	}
	if err != nil {
		return nil, err
	}
	if t.Rows == 0 || t.Cols == 0 {
		return nil, fmt.Errorf("%s: no targets (shape %d×%d)", path, t.Rows, t.Cols)
	}
	if k.Check != nil {
		if err := k.Check(t); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// NpzTargetKeys are the array names a .npz target table is read from (the
// first held), else its only array: y, or OGB's node_label.
var NpzTargetKeys = []string{"y", "node_label"}

func readNpyTargets(path string) (*Table, error) {
	read := graph.ReadNpy
	if strings.HasSuffix(path, ".npz") {
		read = func(p string) (*graph.NpyArray, error) { return graph.ReadNpzArray(p, NpzTargetKeys...) }
	}
	a, err := read(path)
	if err != nil {
		return nil, err
	}
	if len(a.Shape) != 1 && len(a.Shape) != 2 {
		return nil, fmt.Errorf("%s: targets have shape %v, want (N,) or (N, T)", path, a.Shape)
	}
	t := &Table{Path: path, Rows: a.Shape[0], Cols: 1}
	if len(a.Shape) == 2 {
		t.Cols = a.Shape[1]
	}
	if t.Y, err = a.Float32(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return t, nil
}

// readCSVTargets reads T comma-separated values a line; every line must
// have the first line's column count.
func readCSVTargets(path string) (*Table, error) {
	f, _, err := container.OpenInput(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		defer zr.Close()
		r = zr
	}
	t := &Table{Path: path}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<26)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Split(strings.TrimSpace(sc.Text()), ",")
		if t.Rows == 0 {
			t.Cols = len(fields)
		}
		if len(fields) != t.Cols {
			return nil, fmt.Errorf("%s:%d: %d columns, the first line has %d", path, line, len(fields), t.Cols)
		}
		for c, s := range fields {
			v, err := parseTarget(strings.TrimSpace(s))
			if err != nil {
				return nil, fmt.Errorf("%s:%d: column %d: %q is not a number (nan or empty: unlabelled)", path, line, c+1, s)
			}
			t.Y = append(t.Y, v)
		}
		t.Rows++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return t, nil
}

func parseTarget(s string) (float32, error) {
	if s == "" {
		return float32(math.NaN()), nil
	}
	v, err := strconv.ParseFloat(s, 32)
	return float32(v), err
}

// badEntry is the error of the first entry of t that ok refuses.
func badEntry(t *Table, ok func(v float32) bool, want string) error {
	for i, v := range t.Y {
		if !ok(v) {
			return fmt.Errorf("%s: node %d, target %d is %v: want %s", t.Path, i/t.Cols, i%t.Cols, v, want)
		}
	}
	return nil
}

// checkBinary: multilabel targets are 0, 1 or NaN (unlabelled).
func checkBinary(t *Table) error {
	return badEntry(t, func(v float32) bool { return v == 0 || v == 1 || v != v }, "0, 1 or NaN (unlabelled)")
}

// checkFinite: regression targets are finite.
func checkFinite(t *Table) error {
	return badEntry(t, func(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) },
		"a finite value (leave a node without a target out of the split)")
}

// owned returns the rows of y of shard s's owned nodes, in local order.
func owned(s *partition.Shard, y *Table) *dense.Matrix {
	m := &dense.Matrix{Rows: len(s.Global), Cols: y.Cols, Data: make([]float32, len(s.Global)*y.Cols)}
	for i, g := range s.Global {
		copy(m.Row(i), y.Y[int(g)*y.Cols:(int(g)+1)*y.Cols])
	}
	return m
}

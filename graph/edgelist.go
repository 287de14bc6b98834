package graph

import (
	"bytes"
	"fmt"
	"math"
)

// maxNodeID is the largest node id a serial loader accepts: ids are int32
// and the node count (max id + 1) must fit too (the range readers take
// ids up to MaxRangeNodeID).
const maxNodeID = math.MaxInt32 - 1

// LoadEdgeList reads a SNAP-style edge list (plain, .gz or .bz2): one edge
// "src dst" or "src dst weight" a line, fields separated by spaces, tabs or
// commas; lines starting with '#' or '%' and blank lines are skipped. Ids
// are 0-based and the node count is the largest id + 1. Edges are returned
// as given (no symmetrisation, duplicates kept) as a CSR whose row v lists
// the sources u of the edges u→v. Weights, when the first edge has one,
// must be present on every line and go to CSR.Val. A node count stated in a
// leading comment ("# Nodes: 4039 ...", "# ... 326186 nodes") keeps isolated
// nodes above the largest id when it exceeds it (by at most a factor of
// two, so a wrong comment cannot blow up memory). The dataset has
// structure only: FeatDim 0, no labels, no split.
func LoadEdgeList(path string) (*Dataset, error) {
	lr, err := openLines(path)
	if err != nil {
		return nil, err
	}
	defer lr.Close()
	g, err := readEdgeList(lr)
	if err != nil {
		return nil, err
	}
	return &Dataset{Name: baseName(path), Graph: g}, nil
}

// edgeListBuilder accumulates the edges of an edge list.
type edgeListBuilder struct {
	src, dst  idList
	val       []float32
	cols      int   // 2 or 3, fixed by the first edge
	firstLine int64 // line of the first edge
	maxID     int64
	hint      int64 // node count stated in a leading comment, -1 if none
	est       int   // estimated number of lines
	ids       idBounds
	started   bool // an edge was added (the slices are allocated)
}

// scanEdgeList reads every line of lr into an edgeListBuilder, with the
// node ids ids admits.
func scanEdgeList(lr *lineReader, ids idBounds) (*edgeListBuilder, error) {
	b := &edgeListBuilder{maxID: -1, hint: -1, ids: ids}
	for {
		line, ok := lr.Next()
		if !ok {
			break
		}
		if !b.started {
			b.est = lr.estimateLines()
		}
		if err := b.addLine(lr.name, lr.line, line); err != nil {
			return nil, err
		}
	}
	if err := lr.Err(); err != nil {
		return nil, err
	}
	return b, nil
}

// readEdgeList parses an edge list from lr.
func readEdgeList(lr *lineReader) (*CSR, error) {
	b, err := scanEdgeList(lr, serialIDs())
	if err != nil {
		return nil, err
	}
	if b.src.len() == 0 {
		return nil, errorf(lr.name, 0, "no edges found")
	}
	n := int(b.maxID) + 1
	if b.hint > int64(n) && b.hint <= 2*int64(n) {
		n = int(b.hint) // isolated nodes after the largest id
	}
	return FromCOO(n, n, b.src.i32, b.dst.i32, b.val), nil
}

// addLine parses one line: a comment, a blank line or an edge.
func (b *edgeListBuilder) addLine(file string, ln int64, line []byte) error {
	f1, i := nextField(line, 0)
	if len(f1) == 0 || f1[0] == '#' || f1[0] == '%' {
		if len(f1) != 0 && b.src.len() == 0 && b.hint < 0 {
			b.hint = nodeCountInComment(line)
		}
		return nil
	}
	f2, i := nextField(line, i)
	f3, i := nextField(line, i)
	cols := 1
	switch {
	case len(f2) == 0:
	case len(f3) == 0:
		cols = 2
	default:
		cols = 3
		if f4, _ := nextField(line, i); len(f4) != 0 {
			cols = 4
		}
	}
	if cols < 2 || cols > 3 {
		return errorf(file, ln, "expected 2 or 3 fields (src dst [weight]), found %d", cols)
	}
	if b.cols == 0 {
		b.cols, b.firstLine = cols, ln
	} else if cols != b.cols {
		return errorf(file, ln, "%d fields but line %d has %d: weights must be given on every edge or on none",
			cols, b.firstLine, b.cols)
	}
	u, err := parseNodeID(file, ln, 1, f1, b.ids)
	if err != nil {
		return err
	}
	v, err := parseNodeID(file, ln, 2, f2, b.ids)
	if err != nil {
		return err
	}
	if id := max(u, v); id >= b.ids.mem {
		return tooManyNodes(file, ln, fmt.Sprintf("node id %d", id), id+1)
	}
	if !b.started {
		b.started = true
		b.src, b.dst = newIDList(b.ids.wide, b.est), newIDList(b.ids.wide, b.est)
		if cols == 3 {
			b.val = make([]float32, 0, b.est)
		}
	}
	if cols == 3 {
		w, ok := parseFloat32(f3)
		if !ok {
			return errorf(file, ln, "field 3: bad edge weight %s", quote(f3))
		}
		if msg := weightProblem(w); msg != "" {
			return errorf(file, ln, "field 3: edge weight %s: %s", quote(f3), msg)
		}
		b.val = append(b.val, w)
	}
	b.src.add(u)
	b.dst.add(v)
	b.maxID = max(b.maxID, u, v)
	return nil
}

// nodeCountInComment finds a node count in a comment line written before
// the first edge: SNAP's "# Nodes: 4039 Edges: 88234" or "... 326186
// nodes ...". It returns -1 when there is none.
func nodeCountInComment(line []byte) int64 {
	var prev []byte
	for i := 0; ; {
		var f []byte
		if f, i = nextField(line, i); len(f) == 0 {
			return -1
		}
		lower := bytes.ToLower(f)
		if bytes.Equal(bytes.TrimRight(prev, ":"), []byte("nodes")) && bytes.HasSuffix(prev, []byte(":")) {
			if x, ok := parseInt(f); ok && x >= 0 {
				return x
			}
		}
		if bytes.HasPrefix(lower, []byte("nodes")) && len(prev) > 0 {
			if x, ok := parseInt(prev); ok && x >= 0 {
				return x
			}
		}
		prev = lower
	}
}

// parseNodeID parses a 0-based node id in field col (1-based) of a line,
// up to ids.maxID.
func parseNodeID(file string, ln int64, col int, f []byte, ids idBounds) (int64, error) {
	x, ok := parseInt(f)
	if !ok {
		return 0, errorf(file, ln, "field %d: bad node id %s", col, quote(f))
	}
	if x < 0 || x > ids.maxID {
		return 0, errorf(file, ln, "field %d: %s", col, ids.outside(x, ids.maxID))
	}
	return x, nil
}

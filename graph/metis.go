package graph

import (
	"fmt"
	"slices"
)

// metisHeader is the first non-comment line of a METIS graph file.
type metisHeader struct {
	n, m       int64
	vsize      bool // fmt digit 1: vertex sizes
	vwgt       bool // fmt digit 2: vertex weights (ncon of them)
	ewgt       bool // fmt digit 3: edge weights
	ncon       int
	line       int64 // line number of the header
	fieldCount int
}

// maxPrealloc bounds what a header can make a reader allocate up front, so
// a lying header fails on the data instead of exhausting memory.
const maxPrealloc = 1 << 22

// LoadMetis reads a METIS graph file (plain, .gz or .bz2): a header
// "n m [fmt [ncon]]" then one line per vertex listing its 1-based
// neighbours, each followed by its weight when fmt has edge weights (fmt
// 1, 11, 101, 111); vertex sizes (fmt 1xx) and ncon vertex weights (fmt
// x1x) are parsed and checked but not kept. Lines starting with '%' are
// comments; an empty line is a vertex without neighbours. The number of
// adjacency entries must be 2m. A METIS graph is symmetric, so CSR row v
// lists the neighbours of v (both in- and out-neighbours); edge weights go
// to CSR.Val. The dataset has structure only.
func LoadMetis(path string) (*Dataset, error) {
	lr, err := openLines(path)
	if err != nil {
		return nil, err
	}
	defer lr.Close()
	g, err := readMetis(lr)
	if err != nil {
		return nil, err
	}
	return &Dataset{Name: baseName(path), Graph: g}, nil
}

// readMetis parses a METIS graph from lr.
func readMetis(lr *lineReader) (*CSR, error) {
	ids := serialIDs()
	h, err := readMetisHeader(lr, ids)
	if err != nil {
		return nil, err
	}
	if h.n > ids.mem {
		return nil, tooManyNodes(lr.name, h.line, "the header's vertex count", h.n)
	}
	c := &CSR{NumRows: int(h.n), NumCols: int(h.n)}
	c.Ptr = make([]int64, 1, min(h.n+1, maxPrealloc))
	idx := newIDList(false, int(min(2*h.m, maxPrealloc)))
	if h.ewgt {
		c.Val = make([]float32, 0, cap(idx.i32))
	}
	var lines vertexLines
	for v := int64(0); v < h.n; v++ {
		line, ok := nextNonComment(lr)
		if !ok {
			if err := lr.Err(); err != nil {
				return nil, err
			}
			return nil, errorf(lr.name, lr.line, "file ends after %d of the %d vertex lines the header (line %d) announces",
				v, h.n, h.line)
		}
		if err := parseMetisVertex(&idx, &c.Val, &h, lr.name, lr.line, line); err != nil {
			return nil, err
		}
		lines.add(v, lr.line)
		c.Ptr = append(c.Ptr, int64(idx.len()))
	}
	c.Idx = idx.i32
	for {
		line, ok := nextNonComment(lr)
		if !ok {
			break
		}
		if !isBlank(line) {
			return nil, errorf(lr.name, lr.line, "data after the last vertex (the header on line %d says n=%d)", h.line, h.n)
		}
	}
	if err := lr.Err(); err != nil {
		return nil, err
	}
	if got := int64(len(c.Idx)); got != 2*h.m {
		return nil, errorf(lr.name, h.line, "header says m=%d edges (%d adjacency entries) but the vertex lines list %d entries",
			h.m, 2*h.m, got)
	}
	if v, u, ok := asymmetricEntry(c); ok {
		return nil, errorf(lr.name, lines.of(int64(v)), "vertex %d lists neighbour %d, but vertex %d does not list %d (a METIS graph must be symmetric)",
			v+1, u+1, u+1, v+1)
	}
	return c, nil
}

// vertexLines maps vertex numbers to their line in the file, storing only
// where comment lines shift the numbering.
type vertexLines struct{ v, line []int64 }

func (l *vertexLines) add(v, line int64) {
	if k := len(l.v); k == 0 || line-v != l.line[k-1]-l.v[k-1] {
		l.v, l.line = append(l.v, v), append(l.line, line)
	}
}

func (l *vertexLines) of(v int64) int64 {
	k, found := slices.BinarySearch(l.v, v)
	if !found {
		k--
	}
	if k < 0 {
		return 0
	}
	return l.line[k] + v - l.v[k]
}

// asymmetricEntry finds an adjacency entry v→u of c without its reverse
// u→v (counting multiplicities); ok is false when c is symmetric.
func asymmetricEntry(c *CSR) (v, u int32, ok bool) {
	structure := &CSR{NumRows: c.NumRows, NumCols: c.NumCols, Ptr: c.Ptr, Idx: c.Idx}
	s, t := ppSorted(structure), structure.Transpose() // rows of a transpose are sorted
	for r := range s.NumRows {
		a, b := s.Idx[s.Ptr[r]:s.Ptr[r+1]], t.Idx[t.Ptr[r]:t.Ptr[r+1]]
		i, j := 0, 0
		for i < len(a) && j < len(b) && a[i] == b[j] {
			i, j = i+1, j+1
		}
		switch {
		case i < len(a) && (j == len(b) || a[i] < b[j]):
			return int32(r), a[i], true // r lists a[i], which does not list r
		case j < len(b):
			return b[j], int32(r), true // b[j] lists r, which does not list b[j]
		}
	}
	return 0, 0, false
}

// nextNonComment returns the next line that does not start with '%'.
func nextNonComment(lr *lineReader) ([]byte, bool) {
	for {
		line, ok := lr.Next()
		if !ok || len(line) == 0 || line[0] != '%' {
			return line, ok
		}
	}
}

// readMetisHeader reads the header, skipping comments and blank lines;
// the vertex count must fit ids.
func readMetisHeader(lr *lineReader, ids idBounds) (metisHeader, error) {
	for {
		line, ok := nextNonComment(lr)
		if !ok {
			if err := lr.Err(); err != nil {
				return metisHeader{}, err
			}
			return metisHeader{}, errorf(lr.name, 0, "no METIS header line \"n m [fmt [ncon]]\"")
		}
		if isBlank(line) {
			continue
		}
		h, msg := parseMetisHeader(line, ids)
		if msg != "" {
			return h, errorf(lr.name, lr.line, "bad METIS header: %s", msg)
		}
		h.line = lr.line
		return h, nil
	}
}

// parseMetisHeader parses "n m [fmt [ncon]]" with a vertex count that
// fits ids; msg is non-empty on error.
func parseMetisHeader(line []byte, ids idBounds) (h metisHeader, msg string) {
	var f [5][]byte
	i, nf := 0, 0
	for nf < len(f) {
		var fld []byte
		if fld, i = nextField(line, i); len(fld) == 0 {
			break
		}
		f[nf] = fld
		nf++
	}
	h.fieldCount = nf
	if nf < 2 || nf > 4 {
		return h, fmt.Sprintf("expected \"n m [fmt [ncon]]\", found %d fields", nf)
	}
	var ok bool
	if h.n, ok = parseInt(f[0]); !ok || h.n < 1 {
		return h, fmt.Sprintf("vertex count %s is not an integer in [1,%d]", quote(f[0]), ids.maxID+1)
	}
	if tl := ids.tooLarge(h.n); tl != "" {
		return h, fmt.Sprintf("vertex count %d: %s", h.n, tl)
	}
	if h.m, ok = parseInt(f[1]); !ok || h.m < 0 || h.m > 1<<60 {
		return h, fmt.Sprintf("edge count %s is not a non-negative integer", quote(f[1]))
	}
	if nf >= 3 {
		fm := f[2]
		if len(fm) > 3 || !onlyBinaryDigits(fm) {
			return h, fmt.Sprintf("fmt %s must be up to 3 binary digits (0, 1, 10, 11, 100, ...)", quote(fm))
		}
		d := func(k int) bool { return len(fm) > k && fm[len(fm)-1-k] == '1' }
		h.ewgt, h.vwgt, h.vsize = d(0), d(1), d(2)
	}
	h.ncon = 0
	if h.vwgt {
		h.ncon = 1
	}
	if nf == 4 {
		nc, ok := parseInt(f[3])
		if !ok || nc < 1 || nc > 1024 {
			return h, fmt.Sprintf("ncon %s is not an integer in [1,1024]", quote(f[3]))
		}
		if !h.vwgt {
			return h, fmt.Sprintf("ncon=%d given but fmt %s has no vertex weights", nc, quote(f[2]))
		}
		h.ncon = int(nc)
	}
	return h, ""
}

func onlyBinaryDigits(b []byte) bool {
	for _, c := range b {
		if c != '0' && c != '1' {
			return false
		}
	}
	return len(b) > 0
}

// parseMetisVertex appends the neighbours of one vertex line to idx and,
// when h has edge weights, their weights to val.
func parseMetisVertex(idx *idList, val *[]float32, h *metisHeader, file string, ln int64, line []byte) error {
	i, col := 0, 0
	var f []byte
	skip := h.ncon
	if h.vsize {
		skip++
	}
	for k := 0; k < skip; k++ {
		f, i = nextField(line, i)
		col++
		if len(f) == 0 {
			return errorf(file, ln, "field %d: missing vertex size/weight (fmt asks for %d before the neighbours)", col, skip)
		}
		if x, ok := parseInt(f); !ok || x < 0 {
			return errorf(file, ln, "field %d: bad vertex size/weight %s", col, quote(f))
		}
	}
	for {
		f, i = nextField(line, i)
		if len(f) == 0 {
			return nil
		}
		col++
		u, ok := parseInt(f)
		if !ok {
			return errorf(file, ln, "field %d: bad neighbour %s", col, quote(f))
		}
		if u < 1 || u > h.n {
			return errorf(file, ln, "field %d: neighbour %d outside [1,%d]", col, u, h.n)
		}
		idx.add(u - 1)
		if !h.ewgt {
			continue
		}
		f, i = nextField(line, i)
		col++
		if len(f) == 0 {
			return errorf(file, ln, "field %d: neighbour %d has no edge weight (fmt has edge weights)", col, u)
		}
		w, ok := parseInt(f)
		if !ok || w < 0 {
			return errorf(file, ln, "field %d: bad edge weight %s", col, quote(f))
		}
		*val = append(*val, float32(w))
	}
}

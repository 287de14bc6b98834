package graph

import (
	"archive/zip"
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// NpyData is one array for WriteNpz: Data is a []float32, []float64,
// []int64, []int32, []uint8 or []bool holding the product of Shape
// elements in C order.
type NpyData struct {
	Name  string // member name without .npy
	Shape []int
	Data  any
}

// WriteNpz writes arrays as a NumPy .npz archive: members stored as
// np.savez does, or deflated as np.savez_compressed does when compress is
// set. The file is written through path.tmp and renamed, so a failed write
// leaves no partial file.
func WriteNpz(path string, arrays []NpyData, compress bool) error {
	return writeFileAtomic(path, func(w *bufio.Writer) error { return writeNpzTo(w, arrays, compress) })
}

func writeNpzTo(w io.Writer, arrays []NpyData, compress bool) error {
	cw := &countWriter{w: w}
	zw := zip.NewWriter(cw)
	method := zip.Store
	if compress {
		method = zip.Deflate
	}
	for _, a := range arrays {
		if err := zw.Flush(); err != nil {
			return err
		}
		fh := &zip.FileHeader{Name: a.Name + ".npy", Method: method}
		if !compress {
			fh.Extra = alignExtra(cw.n + 30 + int64(len(fh.Name)))
		}
		mw, err := zw.CreateHeader(fh)
		if err != nil {
			return err
		}
		if err := encodeNpy(mw, a); err != nil {
			return fmt.Errorf("%s: %w", a.Name, err)
		}
	}
	return zw.Close()
}

// alignExtra returns a zip extra field (id 0xd935, as zipalign writes)
// that moves a stored member's data from offset off to a multiple of 64,
// so its npy data (64-byte aligned within the member) can be used straight
// from a mapping of the file.
func alignExtra(off int64) []byte {
	pad := (64 - (off+4)%64) % 64
	b := make([]byte, 4+pad)
	binary.LittleEndian.PutUint16(b, 0xd935)
	binary.LittleEndian.PutUint16(b[2:], uint16(pad))
	return b
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// encodeNpy writes a as a .npy (format 1.0, little-endian, C order).
func encodeNpy(w io.Writer, a NpyData) error {
	var descr string
	var n int
	switch d := a.Data.(type) {
	case []float32:
		descr, n = "<f4", len(d)
	case []float64:
		descr, n = "<f8", len(d)
	case []float16:
		descr, n = "<f2", len(d)
	case []int64:
		descr, n = "<i8", len(d)
	case []int32:
		descr, n = "<i4", len(d)
	case []uint8:
		descr, n = "|u1", len(d)
	case []bool:
		descr, n = "|b1", len(d)
	case npyString:
		descr, n = fmt.Sprintf("|S%d", max(len(d), 1)), 1
		a.Data = []byte(d)
		if len(d) == 0 {
			a.Data = []byte{0}
		}
	default:
		return fmt.Errorf("unsupported data type %T", a.Data)
	}
	want := 1
	dims := make([]string, len(a.Shape))
	for i, s := range a.Shape {
		want *= s
		dims[i] = fmt.Sprint(s)
	}
	if want != n {
		return fmt.Errorf("%d values for shape %v", n, a.Shape)
	}
	shape := strings.Join(dims, ", ")
	if len(dims) == 1 {
		shape += ","
	}
	hdr := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shape)
	hdr += strings.Repeat(" ", 63-(10+len(hdr))%64) + "\n" // pad magic+header to 64 bytes
	if _, err := io.WriteString(w, npyMagic+"\x01\x00"); err != nil {
		return err
	}
	if err := binary.Write(w, binary.LittleEndian, uint16(len(hdr))); err != nil {
		return err
	}
	if _, err := io.WriteString(w, hdr); err != nil {
		return err
	}
	return binary.Write(w, binary.LittleEndian, a.Data)
}

// npyString is a NumPy bytes scalar (dtype |S), as scipy stores a sparse
// archive's format.
type npyString string

// WriteSparseNpz writes sparse features x as scipy.sparse.save_npz writes a
// csr_matrix (format, shape, data, indices, indptr; int32 indices and
// offsets below 2^31 entries, as scipy), through path.tmp and a rename.
func WriteSparseNpz(path string, x *CSR, compress bool) error {
	return WriteSparseNpzAs(path, x, "csr", compress)
}

// WriteSparseNpzAs writes x as scipy.sparse.save_npz writes it converted
// to format: csr, csc (x's transpose as CSR arrays) or coo (row, col and
// data in row order).
func WriteSparseNpzAs(path string, x *CSR, format string, compress bool) error {
	var m []NpyData
	switch format {
	case "csr":
		m = sparseMembers("", x)
	case "csc":
		m = sparseMembers("", x.Transpose())
		m[2].Data = []int64{int64(x.NumRows), int64(x.NumCols)}
	case "coo":
		row := make([]int32, len(x.Idx))
		for r := range x.NumRows {
			for k := x.Ptr[r]; k < x.Ptr[r+1]; k++ {
				row[k] = int32(r)
			}
		}
		m = []NpyData{{Name: "row", Shape: []int{len(row)}, Data: row}, {Name: "col", Shape: []int{len(x.Idx)}, Data: x.Idx},
			{Name: "shape", Shape: []int{2}, Data: []int64{int64(x.NumRows), int64(x.NumCols)}},
			{Name: "data", Shape: []int{len(x.Val)}, Data: x.Val}}
	default:
		return fmt.Errorf("sparse format %q: want csr, csc or coo", format)
	}
	return WriteNpz(path, append(m, NpyData{Name: "format", Data: npyString(format)}), compress)
}

// sparseMembers are the CSR arrays of x under prefix: indices, indptr
// (int32 below 2^31 entries, as scipy writes them), shape and data.
func sparseMembers(prefix string, x *CSR) []NpyData {
	var ptr any = x.Ptr
	if x.NNZ() < 1<<31 {
		p32 := make([]int32, len(x.Ptr))
		for i, p := range x.Ptr {
			p32[i] = int32(p)
		}
		ptr = p32
	}
	return []NpyData{
		{Name: prefix + "indices", Shape: []int{len(x.Idx)}, Data: x.Idx},
		{Name: prefix + "indptr", Shape: []int{len(x.Ptr)}, Data: ptr},
		{Name: prefix + "shape", Shape: []int{2}, Data: []int64{int64(x.NumRows), int64(x.NumCols)}},
		{Name: prefix + "data", Shape: []int{len(x.Val)}, Data: x.Val},
	}
}

// WriteNpzDataset writes ds as NumPy arrays: with ogb unset, a PyG-style
// file at path (edge_index, edge_weight when weighted, x, or x_data,
// x_indices, x_indptr and x_shape for sparse features, y, num_nodes and
// train/val/test_mask);
// with ogb set, OGB's npz layout under the directory path (raw/data.npz
// with edge_index, node_feat, num_nodes; raw/node-label.npz; the split
// as split/public/{train,valid,test}.csv). Edges are written as stored
// (u→v for each entry u of row v). compress deflates the members.
func WriteNpzDataset(path string, ds *Dataset, ogb, compress bool) error {
	n, g := ds.NumNodes(), ds.Graph
	edges := make([]int64, 2*g.NNZ())
	for v := range n {
		for k := g.Ptr[v]; k < g.Ptr[v+1]; k++ {
			edges[k], edges[g.NNZ()+k] = int64(g.Idx[k]), int64(v)
		}
	}
	data := []NpyData{{Name: "edge_index", Shape: []int{2, int(g.NNZ())}, Data: edges},
		{Name: "num_nodes", Shape: []int{1}, Data: []int64{int64(n)}}}
	if g.Val != nil {
		data = append(data, NpyData{Name: "edge_weight", Shape: []int{len(g.Val)}, Data: g.Val})
	}
	feat, label := "x", "y"
	if ogb {
		feat, label = "node_feat", "node_label"
	}
	switch l := ds.Features.Layout(); {
	case l.Sparse() && ogb:
		return fmt.Errorf("%s: the OGB layout has no sparse features: write the PyG-style file", path)
	case l.Sparse():
		data = append(data, sparseMembers(feat+"_", &CSR{NumRows: l.Rows, NumCols: l.Cols, Ptr: l.Ptr, Idx: l.Idx, Val: l.Val})...)
	case ds.FeatDim > 0:
		data = append(data, NpyData{Name: feat, Shape: []int{n, ds.FeatDim}, Data: l.Val})
	}
	var labels []NpyData
	if ds.Labels != nil {
		labels = []NpyData{{Name: label, Shape: []int{n}, Data: convert[int32, int64](ds.Labels)}}
	}
	if !ogb {
		data = append(data, labels...)
		mask := ds.SplitMask()
		for k, name := range []string{"train_mask", "val_mask", "test_mask"} {
			m := make([]bool, n)
			for v, b := range mask {
				m[v] = b&(1<<k) != 0
			}
			data = append(data, NpyData{Name: name, Shape: []int{n}, Data: m})
		}
		return WriteNpz(path, data, compress)
	}
	return writeOGBNpz(path, data, labels, ds, compress)
}

// writeOGBNpz writes the files of OGB's npz layout under dir.
func writeOGBNpz(dir string, data, labels []NpyData, ds *Dataset, compress bool) error {
	raw, split := filepath.Join(dir, "raw"), filepath.Join(dir, "split", "public")
	for _, d := range []string{raw, split} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := WriteNpz(filepath.Join(raw, "data.npz"), data, compress); err != nil {
		return err
	}
	if labels != nil {
		if err := WriteNpz(filepath.Join(raw, "node-label.npz"), labels, compress); err != nil {
			return err
		}
	}
	for k, ids := range [3][]int32{ds.Train, ds.Valid, ds.Test} {
		var b strings.Builder
		for _, v := range ids {
			fmt.Fprintln(&b, v)
		}
		if err := os.WriteFile(filepath.Join(split, splitParts[k]+".csv"), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

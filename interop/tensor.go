// Package interop moves supergcn models to and from other frameworks: a
// model's parameters under PyTorch Geometric's names and PyTorch's layouts
// (pyg.go), in a safetensors or an npz file (this file). See docs/MODELS.md.
package interop

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/internal/sysmem"
)

// Tensor is one named float32 tensor, row-major (C order).
type Tensor struct {
	Name  string
	Shape []int
	Data  []float32
}

// numel is the product of the shape.
func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// MetadataKey is the name of the metadata entry: the safetensors header's
// string map, and in an npz a 0-d unicode array holding that map as JSON.
const MetadataKey = "__metadata__"

// maxTensorBytes bounds what a tensor may claim before anything is
// allocated (2^31 float32 values, nn.MaxParams).
const maxTensorBytes = 4 << 31

// Format is a file format of this package: "safetensors" or "npz".
type Format string

const (
	Safetensors Format = "safetensors"
	Npz         Format = "npz"
)

// FormatOf is the format path's extension names (.safetensors or .npz),
// or an error.
func FormatOf(path string) (Format, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".safetensors":
		return Safetensors, nil
	case ".npz":
		return Npz, nil
	}
	return "", fmt.Errorf("%s: not a .safetensors or .npz file name", path)
}

// checkTensors refuses tensors with no name, a duplicate name, a negative
// dimension or data that does not fill the shape.
func checkTensors(ts []Tensor) error {
	seen := map[string]bool{}
	for _, t := range ts {
		switch {
		case t.Name == "" || t.Name == MetadataKey:
			return fmt.Errorf("tensor name %q is reserved or empty", t.Name)
		case seen[t.Name]:
			return fmt.Errorf("tensor %s given twice", t.Name)
		}
		seen[t.Name] = true
		for _, d := range t.Shape {
			if d < 0 {
				return fmt.Errorf("tensor %s: negative dimension in shape %v", t.Name, t.Shape)
			}
		}
		if numel(t.Shape) != len(t.Data) {
			return fmt.Errorf("tensor %s: %d values for shape %v", t.Name, len(t.Data), t.Shape)
		}
	}
	return nil
}

// WriteFile writes the tensors and the metadata to path in the format its
// extension names, atomically (container.WriteFile: path.tmp, then rename).
func WriteFile(path string, ts []Tensor, meta map[string]string) error {
	f, err := FormatOf(path)
	if err != nil {
		return err
	}
	if err := checkTensors(ts); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var b []byte
	if f == Safetensors {
		b, err = EncodeSafetensors(ts, meta)
	} else {
		b, err = EncodeNpz(ts, meta)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return container.WriteBytes(path, 0o644, b)
}

// ReadFile reads a safetensors or npz file (by extension): its float32
// tensors (float64 and float16 are converted; an npz's other dtypes are an
// error) in file order, and its metadata.
func ReadFile(path string) ([]Tensor, map[string]string, error) {
	f, err := FormatOf(path)
	if err != nil {
		return nil, nil, err
	}
	b, err := container.ReadInput(path, sysmem.Limit(), "tensor file in this process's memory")
	if err != nil {
		return nil, nil, err
	}
	var ts []Tensor
	var meta map[string]string
	if f == Safetensors {
		ts, meta, err = DecodeSafetensors(b)
	} else {
		ts, meta, err = DecodeNpz(b)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: not a valid %s file: %w", path, f, err)
	}
	return ts, meta, nil
}

// safetensors: 8-byte little-endian header length N, N bytes of JSON
// ({"name": {"dtype", "shape", "data_offsets": [begin, end]}, …,
// "__metadata__": {string: string}}, padded with spaces to a multiple of
// 8), then the data, offsets relative to its start.

type stEntry struct {
	Dtype   string   `json:"dtype"`
	Shape   []int    `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
}

// EncodeSafetensors encodes the tensors (as F32, in the given order) and
// the metadata as a safetensors file.
func EncodeSafetensors(ts []Tensor, meta map[string]string) ([]byte, error) {
	if err := checkTensors(ts); err != nil {
		return nil, err
	}
	// encoding/json sorts map keys; the data follows the tensors' order.
	h := map[string]any{}
	var off int64
	for _, t := range ts {
		n := int64(4 * len(t.Data))
		shape := t.Shape
		if shape == nil {
			shape = []int{}
		}
		h[t.Name] = stEntry{Dtype: "F32", Shape: shape, Offsets: [2]int64{off, off + n}}
		off += n
	}
	if len(meta) > 0 {
		h[MetadataKey] = meta
	}
	js, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	for len(js)%8 != 0 {
		js = append(js, ' ')
	}
	var buf bytes.Buffer
	buf.Grow(8 + len(js) + int(off))
	buf.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(js))))
	buf.Write(js)
	for _, t := range ts {
		container.EmitLE(t.Data, func(b []byte) error { buf.Write(b); return nil })
	}
	return buf.Bytes(), nil
}

// DecodeSafetensors decodes a safetensors file (dtypes F32, F64, F16,
// BF16; converted to float32), its tensors in data order.
func DecodeSafetensors(b []byte) ([]Tensor, map[string]string, error) {
	if len(b) < 8 {
		return nil, nil, fmt.Errorf("shorter than the 8-byte header length")
	}
	n := binary.LittleEndian.Uint64(b)
	if n > uint64(len(b)-8) {
		return nil, nil, fmt.Errorf("header length %d runs past the end of the file", n)
	}
	data := b[8+n:]
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &raw); err != nil {
		return nil, nil, fmt.Errorf("header: %v", err)
	}
	var meta map[string]string
	if m, ok := raw[MetadataKey]; ok {
		if err := json.Unmarshal(m, &meta); err != nil {
			return nil, nil, fmt.Errorf("header: %s: %v", MetadataKey, err)
		}
		delete(raw, MetadataKey)
	}
	type item struct {
		name string
		e    stEntry
	}
	items := make([]item, 0, len(raw))
	for name, m := range raw {
		var e stEntry
		if err := json.Unmarshal(m, &e); err != nil {
			return nil, nil, fmt.Errorf("header: tensor %s: %v", name, err)
		}
		items = append(items, item{name, e})
	}
	sort.Slice(items, func(i, j int) bool { return items[i].e.Offsets[0] < items[j].e.Offsets[0] })
	ts := make([]Tensor, 0, len(items))
	for _, it := range items {
		e := it.e
		size := map[string]int{"F32": 4, "F64": 8, "F16": 2, "BF16": 2}[e.Dtype]
		if size == 0 {
			return nil, nil, fmt.Errorf("tensor %s: dtype %q, need F32, F64, F16 or BF16", it.name, e.Dtype)
		}
		count := int64(1)
		for _, d := range e.Shape {
			if d < 0 || (d > 0 && count > maxTensorBytes/int64(d)) {
				return nil, nil, fmt.Errorf("tensor %s: shape %v is negative or too large", it.name, e.Shape)
			}
			count *= int64(d)
		}
		lo, hi := e.Offsets[0], e.Offsets[1]
		if lo < 0 || hi < lo || hi > int64(len(data)) {
			return nil, nil, fmt.Errorf("tensor %s: data offsets [%d, %d] outside the %d data bytes", it.name, lo, hi, len(data))
		}
		if hi-lo != count*int64(size) {
			return nil, nil, fmt.Errorf("tensor %s: %d data bytes for shape %v of %s", it.name, hi-lo, e.Shape, e.Dtype)
		}
		v, err := toFloat32(e.Dtype, data[lo:hi])
		if err != nil {
			return nil, nil, fmt.Errorf("tensor %s: %v", it.name, err)
		}
		ts = append(ts, Tensor{Name: it.name, Shape: e.Shape, Data: v})
	}
	return ts, meta, nil
}

// toFloat32 converts little-endian values of dtype to float32.
func toFloat32(dtype string, b []byte) ([]float32, error) {
	switch dtype {
	case "F32":
		return container.DecodeLE[float32](b), nil
	case "F64":
		out := make([]float32, len(b)/8)
		for i := range out {
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])))
		}
		return out, nil
	case "F16", "BF16":
		out := make([]float32, len(b)/2)
		for i := range out {
			h := binary.LittleEndian.Uint16(b[2*i:])
			if dtype == "BF16" {
				out[i] = math.Float32frombits(uint32(h) << 16)
			} else {
				out[i] = half(h)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("dtype %q is not supported", dtype)
}

// half converts an IEEE binary16 value.
func half(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := int(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0:
		v := float32(math.Ldexp(float64(frac), -24))
		if sign != 0 {
			v = -v
		}
		return v
	case exp == 31:
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	}
	return math.Float32frombits(sign | uint32(exp-15+127)<<23 | frac<<13)
}

// npz: a zip (stored, no compression) of NAME.npy members, format 1.0,
// dtype <f4, C order; the metadata is __metadata__.npy, a 0-d <U array
// holding the JSON of the string map.

// EncodeNpz encodes the tensors and the metadata as an npz archive.
func EncodeNpz(ts []Tensor, meta map[string]string) ([]byte, error) {
	if err := checkTensors(ts); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	add := func(name string, header string, data []byte) error {
		w, err := z.CreateHeader(&zip.FileHeader{Name: name + ".npy", Method: zip.Store})
		if err != nil {
			return err
		}
		if _, err := w.Write(npyHeader(header)); err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	for _, t := range ts {
		var data bytes.Buffer
		container.EmitLE(t.Data, func(b []byte) error { data.Write(b); return nil })
		if err := add(t.Name, fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': %s, }", pyShape(t.Shape)), data.Bytes()); err != nil {
			return nil, err
		}
	}
	if len(meta) > 0 {
		js, err := json.Marshal(meta)
		if err != nil {
			return nil, err
		}
		s := string(js)
		n := utf8.RuneCountInString(s)
		data := make([]byte, 0, 4*n)
		for _, r := range s {
			data = binary.LittleEndian.AppendUint32(data, uint32(r))
		}
		if err := add(MetadataKey, fmt.Sprintf("{'descr': '<U%d', 'fortran_order': False, 'shape': (), }", max(n, 1)), data); err != nil {
			return nil, err
		}
	}
	if err := z.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// pyShape writes a shape as a Python tuple.
func pyShape(s []int) string {
	switch len(s) {
	case 0:
		return "()"
	case 1:
		return fmt.Sprintf("(%d,)", s[0])
	}
	p := make([]string, len(s))
	for i, d := range s {
		p[i] = strconv.Itoa(d)
	}
	return "(" + strings.Join(p, ", ") + ")"
}

// npyHeader is the .npy 1.0 preamble of the header dict, padded with
// spaces and a newline to a multiple of 64 bytes.
func npyHeader(dict string) []byte {
	const pre = 10
	hl := len(dict) + 1
	hl += (64 - (pre+hl)%64) % 64
	b := []byte("\x93NUMPY\x01\x00")
	b = binary.LittleEndian.AppendUint16(b, uint16(hl))
	b = append(b, dict...)
	for len(b) < pre+hl-1 {
		b = append(b, ' ')
	}
	return append(b, '\n')
}

var (
	npyDescr   = regexp.MustCompile(`'descr'\s*:\s*'([<>|=])([a-zA-Z])(\d+)'`)
	npyFortran = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	npyShape   = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

// DecodeNpz decodes an npz archive: its float tensors (<f4, <f8, <f2 in C
// order; big-endian is refused) in archive order, and its metadata.
func DecodeNpz(b []byte) ([]Tensor, map[string]string, error) {
	z, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, nil, err
	}
	var ts []Tensor
	var meta map[string]string
	for _, m := range z.File {
		name, ok := strings.CutSuffix(m.Name, ".npy")
		if !ok {
			return nil, nil, fmt.Errorf("member %s is not a .npy", m.Name)
		}
		if m.UncompressedSize64 > uint64(maxTensorBytes)+1<<16 {
			return nil, nil, fmt.Errorf("member %s: %d bytes, too large", m.Name, m.UncompressedSize64)
		}
		r, err := m.Open()
		if err != nil {
			return nil, nil, fmt.Errorf("member %s: %v", m.Name, err)
		}
		body, err := io.ReadAll(io.LimitReader(r, int64(m.UncompressedSize64)+1))
		r.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("member %s: %v", m.Name, err)
		}
		dict, data, err := splitNpy(body)
		if err != nil {
			return nil, nil, fmt.Errorf("member %s: %v", m.Name, err)
		}
		d := npyDescr.FindStringSubmatch(dict)
		sh := npyShape.FindStringSubmatch(dict)
		fo := npyFortran.FindStringSubmatch(dict)
		if d == nil || sh == nil || fo == nil {
			return nil, nil, fmt.Errorf("member %s: header %q lacks descr, fortran_order or shape", m.Name, dict)
		}
		var shape []int
		count := int64(1)
		for _, f := range strings.Split(sh[1], ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			v, err := strconv.Atoi(f)
			if err != nil || v < 0 || (v > 0 && count > maxTensorBytes/int64(v)) {
				return nil, nil, fmt.Errorf("member %s: bad shape (%s)", m.Name, sh[1])
			}
			shape = append(shape, v)
			count *= int64(v)
		}
		if name == MetadataKey {
			if d[2] != "U" || d[1] == ">" || len(shape) != 0 {
				return nil, nil, fmt.Errorf("member %s: not a 0-d little-endian unicode array", m.Name)
			}
			var sb strings.Builder
			for i := 0; i+4 <= len(data); i += 4 {
				if r := rune(binary.LittleEndian.Uint32(data[i:])); r != 0 {
					sb.WriteRune(r)
				}
			}
			if err := json.Unmarshal([]byte(sb.String()), &meta); err != nil {
				return nil, nil, fmt.Errorf("member %s: %v", m.Name, err)
			}
			continue
		}
		if fo[1] == "True" && len(shape) > 1 {
			return nil, nil, fmt.Errorf("member %s: Fortran order, need C order", m.Name)
		}
		if d[1] == ">" || d[2] != "f" {
			return nil, nil, fmt.Errorf("member %s: dtype %s%s%s, need little-endian float", m.Name, d[1], d[2], d[3])
		}
		dtype := map[string]string{"4": "F32", "8": "F64", "2": "F16"}[d[3]]
		size, _ := strconv.Atoi(d[3])
		if dtype == "" {
			return nil, nil, fmt.Errorf("member %s: dtype f%s is not supported", m.Name, d[3])
		}
		if int64(len(data)) != count*int64(size) {
			return nil, nil, fmt.Errorf("member %s: %d data bytes for shape %v", m.Name, len(data), shape)
		}
		v, err := toFloat32(dtype, data)
		if err != nil {
			return nil, nil, fmt.Errorf("member %s: %v", m.Name, err)
		}
		ts = append(ts, Tensor{Name: name, Shape: shape, Data: v})
	}
	return ts, meta, nil
}

// splitNpy splits a .npy file into its header dict and its data.
func splitNpy(b []byte) (string, []byte, error) {
	if len(b) < 10 || string(b[:6]) != "\x93NUMPY" {
		return "", nil, fmt.Errorf("not a .npy file")
	}
	var hl, pre int
	switch b[6] {
	case 1:
		hl, pre = int(binary.LittleEndian.Uint16(b[8:])), 10
	case 2, 3:
		if len(b) < 12 {
			return "", nil, fmt.Errorf("truncated .npy header")
		}
		hl, pre = int(binary.LittleEndian.Uint32(b[8:])), 12
	default:
		return "", nil, fmt.Errorf(".npy format version %d", b[6])
	}
	if hl > len(b)-pre {
		return "", nil, fmt.Errorf("truncated .npy header")
	}
	return string(b[pre : pre+hl]), b[pre+hl:], nil
}

package graph

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"unsafe"

	"github.com/supergcn/supergcn/internal/container"
)

// NpyArray is an array read from a NumPy .npy file (format versions 1.0,
// 2.0 and 3.0, C order). Its elements keep the file's dtype until asked
// for as float32 or int64.
type NpyArray struct {
	Shape []int  // dimensions, outermost first; empty for a scalar
	Descr string // NumPy dtype string of the file, e.g. "<f4", "|u1"
	data  any    // []float32, []float64, []int8 ... []uint64; booleans as []uint8
}

// npyHeader is the parsed header of a .npy file.
type npyHeader struct {
	descr   string
	fortran bool
	shape   []int
	kind    byte // 'f', 'i', 'u' or 'b'
	size    int  // bytes per element
	swap    bool // byte order differs from the host's
	dataOff int64
}

const (
	npyMagic        = "\x93NUMPY"
	maxNpyHeaderLen = 1 << 20
	maxNpyBytes     = 1 << 50
)

// ReadNpy reads a .npy file. Numeric dtypes f2, f4, f8, i1, i2, i4, i8, u1,
// u2, u4, u8 and b1 are supported in either byte order; the data are read
// straight into a slice of the element type (no copy on little-endian
// hosts). Fortran-order arrays and structured dtypes are rejected.
func ReadNpy(path string) (*NpyArray, error) {
	f, _, err := container.OpenInput(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h, err := readNpyHeader(f, path)
	if err != nil {
		return nil, err
	}
	n := 1
	for _, d := range h.shape {
		n *= d
	}
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		if got, want := st.Size()-h.dataOff, int64(n)*int64(h.size); got != want {
			return nil, errorf(path, 0, "npy data is %d bytes but shape %v of %s needs %d", got, h.shape, h.descr, want)
		}
	}
	a := &NpyArray{Shape: h.shape, Descr: h.descr}
	if a.data, err = readNpyData(f, &h, n); err != nil {
		return nil, errorf(path, 0, "reading npy data: %v", err)
	}
	return a, nil
}

// readNpyHeader reads and checks the magic, version and header dict.
func readNpyHeader(r io.Reader, name string) (npyHeader, error) {
	h, err := readNpyHeaderRaw(r, name)
	if err == nil {
		if err = h.setDtype(); err != nil {
			err = errorf(name, 0, "bad npy header: %v", err)
		}
	}
	return h, err
}

// readNpyHeaderRaw is readNpyHeader without the check of the dtype (which
// it leaves undecoded): for the string members of scipy's sparse archives.
func readNpyHeaderRaw(r io.Reader, name string) (npyHeader, error) {
	var pre [12]byte
	if _, err := io.ReadFull(r, pre[:10]); err != nil {
		return npyHeader{}, errorf(name, 0, "not a .npy file: too short")
	}
	if string(pre[:6]) != npyMagic {
		return npyHeader{}, errorf(name, 0, "not a .npy file: bad magic %q", pre[:6])
	}
	var hlen int64
	off := int64(10)
	switch major := pre[6]; major {
	case 1:
		hlen = int64(binary.LittleEndian.Uint16(pre[8:10]))
	case 2, 3:
		if _, err := io.ReadFull(r, pre[10:12]); err != nil {
			return npyHeader{}, errorf(name, 0, "bad npy header: too short")
		}
		hlen, off = int64(binary.LittleEndian.Uint32(pre[8:12])), 12
	default:
		return npyHeader{}, errorf(name, 0, "unsupported npy format version %d.%d", major, pre[7])
	}
	if hlen > maxNpyHeaderLen {
		return npyHeader{}, errorf(name, 0, "bad npy header: length %d is implausible", hlen)
	}
	buf := make([]byte, hlen)
	if _, err := io.ReadFull(r, buf); err != nil {
		return npyHeader{}, errorf(name, 0, "bad npy header: file ends inside the %d-byte header", hlen)
	}
	h, err := parseNpyDictRaw(buf)
	if err != nil {
		return npyHeader{}, errorf(name, 0, "bad npy header: %v", err)
	}
	h.dataOff = off + hlen
	return h, nil
}

// parseNpyDictRaw parses the Python dict literal of a .npy header, e.g.
// {'descr': '<f4', 'fortran_order': False, 'shape': (2708, 1433), },
// leaving the dtype undecoded (npyHeader.setDtype).
func parseNpyDictRaw(b []byte) (npyHeader, error) {
	p := &pyLit{b: b}
	var h npyHeader
	seen := map[string]bool{}
	if !p.eat('{') {
		return h, p.fail("expected '{'")
	}
	for !p.eat('}') {
		key, err := p.str()
		if err != nil {
			return h, err
		}
		if !p.eat(':') {
			return h, p.fail("expected ':' after key")
		}
		switch key {
		case "descr":
			if h.descr, err = p.str(); err != nil {
				return h, fmt.Errorf("descr: %v (structured dtypes are not supported)", err)
			}
		case "fortran_order":
			h.fortran, err = p.boolean()
		case "shape":
			h.shape, err = p.tuple()
		default:
			return h, fmt.Errorf("unknown key %q", key)
		}
		if err != nil {
			return h, err
		}
		seen[key] = true
		if !p.eat(',') && p.peek() != '}' {
			return h, p.fail("expected ',' or '}'")
		}
	}
	p.space()
	if p.i != len(p.b) {
		return h, p.fail("data after '}'")
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return h, fmt.Errorf("missing key %q", k)
		}
	}
	if h.fortran {
		return h, fmt.Errorf("fortran_order is True: only C-order arrays are supported (save with np.ascontiguousarray)")
	}
	return h, nil
}

// setDtype decodes descr into kind, size and byte order.
func (h *npyHeader) setDtype() error {
	d := h.descr
	if len(d) != 3 {
		return fmt.Errorf("unsupported dtype %q", d)
	}
	h.kind, h.size = d[1], int(d[2]-'0')
	ok := false
	switch h.kind {
	case 'f':
		ok = h.size == 2 || h.size == 4 || h.size == 8
	case 'i', 'u':
		ok = h.size == 1 || h.size == 2 || h.size == 4 || h.size == 8
	case 'b':
		ok = h.size == 1
	}
	if !ok {
		return fmt.Errorf("unsupported dtype %q (want f2, f4, f8, i1-i8, u1-u8 or b1)", d)
	}
	switch d[0] {
	case '<', '=':
		h.swap = !hostLittleEndian()
	case '>':
		h.swap = hostLittleEndian()
	case '|':
		if h.size != 1 {
			return fmt.Errorf("dtype %q: '|' byte order on a multi-byte type", d)
		}
	default:
		return fmt.Errorf("dtype %q: unknown byte order %q", d, d[0])
	}
	if h.size == 1 {
		h.swap = false
	}
	total := int64(h.size)
	for _, n := range h.shape {
		if n != 0 && total > maxNpyBytes/int64(n) {
			return fmt.Errorf("shape %v is too large", h.shape)
		}
		total *= int64(n)
	}
	return nil
}

// readNpyData reads n elements of h's dtype into a typed slice.
func readNpyData(r io.Reader, h *npyHeader, n int) (any, error) {
	switch {
	case h.kind == 'f' && h.size == 2:
		return readTyped[float16](r, n, h.swap)
	case h.kind == 'f' && h.size == 4:
		return readTyped[float32](r, n, h.swap)
	case h.kind == 'f':
		return readTyped[float64](r, n, h.swap)
	case h.kind == 'i' && h.size == 1:
		return readTyped[int8](r, n, false)
	case h.kind == 'i' && h.size == 2:
		return readTyped[int16](r, n, h.swap)
	case h.kind == 'i' && h.size == 4:
		return readTyped[int32](r, n, h.swap)
	case h.kind == 'i':
		return readTyped[int64](r, n, h.swap)
	case h.size == 1: // u1, b1
		return readTyped[uint8](r, n, false)
	case h.size == 2:
		return readTyped[uint16](r, n, h.swap)
	case h.size == 4:
		return readTyped[uint32](r, n, h.swap)
	default:
		return readTyped[uint64](r, n, h.swap)
	}
}

// readTyped reads n elements straight into the memory of a []T, swapping
// byte order in place when asked.
func readTyped[T any](r io.Reader, n int, swap bool) ([]T, error) {
	s := make([]T, n)
	if n == 0 {
		return s, nil
	}
	size := int(unsafe.Sizeof(s[0]))
	b := unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), n*size)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	if swap {
		for i := 0; i < len(b); i += size {
			for j, k := i, i+size-1; j < k; j, k = j+1, k-1 {
				b[j], b[k] = b[k], b[j]
			}
		}
	}
	return s, nil
}

// hostLittleEndian reports the byte order of this machine.
func hostLittleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// Len returns the number of elements.
func (a *NpyArray) Len() int {
	n := 1
	for _, d := range a.Shape {
		n *= d
	}
	return n
}

// Float32 returns the elements as float32. For a float32 array the
// returned slice is the array's own storage (no copy); other dtypes are
// converted.
func (a *NpyArray) Float32() ([]float32, error) {
	switch s := a.data.(type) {
	case []float32:
		return s, nil
	case []float16:
		d := make([]float32, len(s))
		for i, h := range s {
			d[i] = h.float32()
		}
		return d, nil
	case []float64:
		return convert[float64, float32](s), nil
	case []int8:
		return convert[int8, float32](s), nil
	case []int16:
		return convert[int16, float32](s), nil
	case []int32:
		return convert[int32, float32](s), nil
	case []int64:
		return convert[int64, float32](s), nil
	case []uint8:
		return convert[uint8, float32](s), nil
	case []uint16:
		return convert[uint16, float32](s), nil
	case []uint32:
		return convert[uint32, float32](s), nil
	case []uint64:
		return convert[uint64, float32](s), nil
	}
	return nil, fmt.Errorf("npy: no data")
}

// Int64 returns the elements as int64. Floating-point elements must hold
// integral values (NaN is an error); uint64 values above 2^63-1 are errors.
func (a *NpyArray) Int64() ([]int64, error) {
	switch s := a.data.(type) {
	case []float16:
		f, _ := a.Float32()
		return floatsToInt64(f)
	case []float32:
		return floatsToInt64(s)
	case []float64:
		return floatsToInt64(s)
	case []int8:
		return convert[int8, int64](s), nil
	case []int16:
		return convert[int16, int64](s), nil
	case []int32:
		return convert[int32, int64](s), nil
	case []int64:
		return s, nil
	case []uint8:
		return convert[uint8, int64](s), nil
	case []uint16:
		return convert[uint16, int64](s), nil
	case []uint32:
		return convert[uint32, int64](s), nil
	case []uint64:
		for i, x := range s {
			if x > math.MaxInt64 {
				return nil, fmt.Errorf("npy: element %d = %d overflows int64", i, x)
			}
		}
		return convert[uint64, int64](s), nil
	}
	return nil, fmt.Errorf("npy: no data")
}

// float16 is an IEEE 754 half-precision value (NumPy's f2), as stored.
type float16 uint16

// float32 converts h exactly (every half is a float32).
func (h float16) float32() float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // Inf, NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp != 0: // normal
		return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
	case frac == 0:
		return math.Float32frombits(sign)
	}
	// subnormal: frac × 2^-24
	v := float32(frac) * (1.0 / (1 << 24))
	if sign != 0 {
		v = -v
	}
	return v
}

type number interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

func convert[S, D number](s []S) []D {
	d := make([]D, len(s))
	for i, x := range s {
		d[i] = D(x)
	}
	return d
}

func floatsToInt64[F float32 | float64](s []F) ([]int64, error) {
	d := make([]int64, len(s))
	for i, x := range s {
		v := float64(x)
		if v != math.Trunc(v) || v < math.MinInt64 || v >= math.MaxInt64 {
			return nil, fmt.Errorf("npy: element %d = %s is not an integer", i, strconv.FormatFloat(v, 'g', -1, 64))
		}
		d[i] = int64(v)
	}
	return d, nil
}

// pyLit is a cursor over the Python literal of a .npy header.
type pyLit struct {
	b []byte
	i int
}

func (p *pyLit) space() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t' || p.b[p.i] == '\n' || p.b[p.i] == '\r') {
		p.i++
	}
}

func (p *pyLit) peek() byte {
	p.space()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *pyLit) eat(c byte) bool {
	if p.peek() == c {
		p.i++
		return true
	}
	return false
}

func (p *pyLit) fail(msg string) error {
	return fmt.Errorf("%s at byte %d of the header dict", msg, p.i)
}

// str parses a quoted string without escapes.
func (p *pyLit) str() (string, error) {
	q := p.peek()
	if q != '\'' && q != '"' {
		return "", p.fail("expected a quoted string")
	}
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		if p.b[j] == q {
			p.i = j + 1
			return string(p.b[start:j]), nil
		}
	}
	return "", p.fail("unterminated string")
}

func (p *pyLit) boolean() (bool, error) {
	p.space()
	for _, w := range []string{"True", "False"} {
		if len(p.b)-p.i >= len(w) && string(p.b[p.i:p.i+len(w)]) == w {
			p.i += len(w)
			return w == "True", nil
		}
	}
	return false, p.fail("expected True or False")
}

// tuple parses a tuple of non-negative ints: (), (n,), (a, b), (a, b,).
func (p *pyLit) tuple() ([]int, error) {
	if !p.eat('(') {
		return nil, p.fail("expected '(' for the shape")
	}
	shape := []int{}
	for !p.eat(')') {
		if len(shape) >= 32 {
			return nil, p.fail("too many dimensions")
		}
		p.space()
		j := p.i
		for j < len(p.b) && p.b[j] >= '0' && p.b[j] <= '9' {
			j++
		}
		d, ok := parseInt(p.b[p.i:j])
		if !ok || d > maxNpyBytes {
			return nil, p.fail("expected a dimension")
		}
		p.i = j
		if p.i < len(p.b) && p.b[p.i] == 'L' { // Python 2 long literal
			p.i++
		}
		shape = append(shape, int(d))
		if !p.eat(',') && p.peek() != ')' {
			return nil, p.fail("expected ',' or ')' in the shape")
		}
	}
	return shape, nil
}

// WriteNpyF32 writes a rows × cols float32 matrix (row-major data) as a
// NumPy .npy file (format 1.0, little-endian "<f4", C order), through
// path.tmp and a rename so a failed write leaves no partial file.
func WriteNpyF32(path string, rows, cols int, data []float32) error {
	if rows < 0 || cols < 0 || len(data) != rows*cols {
		return fmt.Errorf("%s: %d values for a %d×%d matrix", path, len(data), rows, cols)
	}
	return writeFileAtomic(path, func(w *bufio.Writer) error {
		return encodeNpy(w, NpyData{Shape: []int{rows, cols}, Data: data})
	})
}

// writeFileAtomic writes path through a buffered, locked path.tmp renamed
// once complete (container.WriteFile), so a failed write leaves no partial
// file; errors name path.
func writeFileAtomic(path string, write func(w *bufio.Writer) error) error {
	err := container.WriteFile(path, 0o644, func(f *os.File) error {
		w := bufio.NewWriterSize(f, 1<<20)
		if err := write(w); err != nil {
			return err
		}
		return w.Flush()
	})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

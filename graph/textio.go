package graph

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"github.com/supergcn/supergcn/internal/container"
)

// Buffer sizes of the text readers: lines are found in a buffer of
// lineBufSize bytes (grown for longer lines); compressed input is read from
// disk through a buffer of rawBufSize bytes.
const (
	lineBufSize = 1 << 20
	rawBufSize  = 256 << 10
)

// lineReader returns the lines of a text input one at a time without
// copying them: a returned line is valid until the next call to Next.
// It counts lines (1-based) for error messages and turns read errors of
// the underlying (possibly decompressing) reader into *ParseError values
// naming the file and the line reached.
type lineReader struct {
	name    string // file name used in errors
	codec   string // "gzip", "bzip2" or "" (plain), for error messages
	r       io.Reader
	closers []io.Closer
	buf     []byte
	start   int   // unread data is buf[start:end]
	end     int   //
	scanned int   // buf[start:start+scanned] is known to hold no '\n'
	line    int64 // number of the line last returned by Next
	err     error // sticky error of r (io.EOF at a clean end)
	size    int64 // size of an uncompressed input file, -1 if unknown
	bufSize int   // initial buffer size
	hint    int   // expected number of lines when known (0: unknown)
}

// openLines opens path for line reading, decompressing it when its name
// ends in .gz or .bz2 or its content starts with the gzip magic.
func openLines(path string) (*lineReader, error) {
	f, _, err := container.OpenInput(path)
	if err != nil {
		return nil, err
	}
	lr, err := newCompressedLines(path, f, f)
	if err != nil {
		f.Close()
	}
	return lr, err
}

// newCompressedLines reads lines of path from r (the content of f, which
// the lineReader closes; the caller closes it on error), decompressing as
// openLines does.
func newCompressedLines(path string, f *os.File, r io.Reader) (*lineReader, error) {
	br := bufio.NewReaderSize(r, rawBufSize)
	lr := &lineReader{name: path, closers: []io.Closer{f}, size: -1, bufSize: lineBufSize}
	magic, _ := br.Peek(3)
	switch {
	case strings.HasSuffix(path, ".bz2"):
		if !bytes.HasPrefix(magic, []byte("BZh")) {
			return nil, errorf(path, 0, "not a bzip2 file (bad magic)")
		}
		lr.codec, lr.r = "bzip2", bzip2.NewReader(br)
	case strings.HasSuffix(path, ".gz") || bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, errorf(path, 0, "not a gzip file: %v", err)
		}
		lr.codec, lr.r = "gzip", zr
		lr.closers = append(lr.closers, zr)
	default:
		lr.r = br
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			lr.size = st.Size()
		}
	}
	return lr, nil
}

// newLineReader reads lines from r (uncompressed); name is used in errors.
// Its buffer starts small (tests and fuzzing exercise refills and growth).
func newLineReader(r io.Reader, name string) *lineReader {
	return &lineReader{name: name, r: r, size: -1, bufSize: 16}
}

// estimateLines returns the expected number of lines, so callers can size
// their slices once: the hint when set (capped at the lines the file can
// hold, or at maxPrealloc for a compressed one), else a guess for an
// uncompressed file from the lines in the buffer, else 0.
func (lr *lineReader) estimateLines() int {
	if lr.hint > 0 { // a count from another file: bounded by what this one can hold
		if lr.size > 0 {
			return int(min(int64(lr.hint), lr.size/2+1)) // a line is at least a digit and a newline
		}
		return min(lr.hint, maxPrealloc)
	}
	if lr.size <= 0 || lr.end == 0 {
		return 0
	}
	nl := bytes.Count(lr.buf[:lr.end], []byte{'\n'})
	if nl == 0 {
		return 0
	}
	est := float64(lr.size) * float64(nl) / float64(lr.end)
	return int(min(est*1.02+16, float64(maxPrealloc*64)))
}

// Close releases the file and decompressor.
func (lr *lineReader) Close() error {
	var first error
	for i := len(lr.closers) - 1; i >= 0; i-- {
		if err := lr.closers[i].Close(); err != nil && first == nil {
			first = err
		}
	}
	lr.closers = nil
	return first
}

// Line returns the number of the line last returned by Next.
func (lr *lineReader) Line() int64 { return lr.line }

// Next returns the next line without its "\n" or "\r\n" terminator; ok is
// false at the end of input or on a read error (see Err). A final line
// without a terminator is returned only when the input ended cleanly.
func (lr *lineReader) Next() (line []byte, ok bool) {
	for {
		data := lr.buf[lr.start:lr.end]
		if i := bytes.IndexByte(data[lr.scanned:], '\n'); i >= 0 {
			i += lr.scanned
			lr.start += i + 1
			lr.scanned = 0
			lr.line++
			return trimCR(data[:i]), true
		}
		lr.scanned = len(data)
		if lr.err != nil {
			if lr.err == io.EOF && len(data) > 0 {
				lr.start, lr.scanned = lr.end, 0
				lr.line++
				return trimCR(data), true
			}
			return nil, false
		}
		lr.fill()
	}
}

// fill reads more input into the buffer, moving unread data to the front
// and growing the buffer when a line does not fit.
func (lr *lineReader) fill() {
	if lr.buf == nil {
		lr.buf = make([]byte, max(lr.bufSize, 1))
	}
	if lr.start > 0 {
		lr.end = copy(lr.buf, lr.buf[lr.start:lr.end])
		lr.start = 0
	}
	if lr.end == len(lr.buf) {
		nb := make([]byte, 2*len(lr.buf))
		copy(nb, lr.buf[:lr.end])
		lr.buf = nb
	}
	for tries := 0; tries < 100; tries++ {
		n, err := lr.r.Read(lr.buf[lr.end:])
		lr.end += n
		if err != nil {
			lr.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	lr.err = io.ErrNoProgress
}

// eachInt calls fn for each line, trimmed, with the line parsed as an
// integer (ok false when it is not one); it stops at fn's first error and
// otherwise returns Err().
func (lr *lineReader) eachInt(fn func(f []byte, x int64, ok bool) error) error {
	for {
		line, ok := lr.Next()
		if !ok {
			break
		}
		f := trimSpace(line)
		x, ok := parseInt(f)
		if err := fn(f, x, ok); err != nil {
			return err
		}
	}
	return lr.Err()
}

// Err returns nil after a clean end of input, or a *ParseError naming the
// file and the line being read when the input failed (a truncated or
// corrupt compressed stream, an I/O error).
func (lr *lineReader) Err() error {
	if lr.err == nil || lr.err == io.EOF {
		return nil
	}
	at := lr.line + 1
	what := "read error"
	if lr.codec != "" {
		what = lr.codec + " stream"
	}
	if errors.Is(lr.err, io.ErrUnexpectedEOF) {
		return errorf(lr.name, at, "%s ends unexpectedly (file truncated?)", what)
	}
	return errorf(lr.name, at, "%s: %v", what, lr.err)
}

// trimCR drops one trailing '\r'.
func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}

// isBlank reports whether b holds only spaces and tabs.
func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// trimSpace drops leading and trailing spaces and tabs.
func trimSpace(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	for j > i && (b[j-1] == ' ' || b[j-1] == '\t') {
		j--
	}
	return b[i:j]
}

// nextField returns the next field of line at or after position i, fields
// being separated by runs of spaces, tabs and commas; next is the position
// after the field. field is empty when the line has no more fields.
func nextField(line []byte, i int) (field []byte, next int) {
	for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == ',') {
		i++
	}
	j := i
	for j < len(line) && line[j] != ' ' && line[j] != '\t' && line[j] != ',' {
		j++
	}
	return line[i:j], j
}

// unsafeString views b as a string without copying; the string must not be
// kept beyond the lifetime of b's current contents.
func unsafeString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// parseInt parses a decimal integer with an optional sign.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	neg := false
	digits := b
	if b[0] == '-' || b[0] == '+' {
		neg = b[0] == '-'
		digits = b[1:]
	}
	if len(digits) == 0 {
		return 0, false
	}
	if len(digits) > 18 {
		v, err := strconv.ParseInt(unsafeString(b), 10, 64)
		return v, err == nil
	}
	var n int64
	for _, c := range digits {
		d := c - '0'
		if d > 9 {
			return 0, false
		}
		n = n*10 + int64(d)
	}
	if neg {
		n = -n
	}
	return n, true
}

// parseFloat32 parses a finite decimal (or Go hexadecimal) floating-point
// number, correctly rounded to float32. "nan", "inf" and values that
// overflow float32 are rejected. Plain decimals "[-]ddd[.ddd]" with a
// mantissa below 2^24 and at most 10 fraction digits take the exact fast
// path (one correctly rounded float32 division, as strconv does).
func parseFloat32(b []byte) (float32, bool) {
	i, neg := 0, false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg, i = b[0] == '-', 1
	}
	var m uint32
	digits, frac, dot := 0, 0, false
	for ; i < len(b); i++ {
		c := b[i]
		if c == '.' && !dot {
			dot = true
			continue
		}
		d := c - '0'
		if d > 9 || m >= 1<<24/10 {
			return parseFloat32Slow(b)
		}
		m = m*10 + uint32(d)
		digits++
		if dot {
			frac++
		}
	}
	if digits == 0 || frac > 10 {
		return parseFloat32Slow(b)
	}
	v := float32(m)
	if frac > 0 {
		v /= pow10f32(frac)
	}
	if neg {
		v = -v
	}
	return v, true
}

// pow10f32 returns 10^e for 0 <= e <= 10, exact in float32.
func pow10f32(e int) float32 {
	p := float32(1)
	for ; e > 0; e-- {
		p *= 10
	}
	return p
}

func parseFloat32Slow(b []byte) (float32, bool) {
	if len(b) == 0 {
		return 0, false
	}
	if c := b[0]; c != '-' && c != '+' && c != '.' && (c < '0' || c > '9') {
		return 0, false // rejects "nan", "inf", "infinity"
	}
	v, err := strconv.ParseFloat(unsafeString(b), 32)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false
	}
	return float32(v), true
}

// quote shortens and quotes a field for an error message.
func quote(b []byte) string {
	const max = 40
	if len(b) > max {
		return strconv.Quote(string(b[:max])) + "..."
	}
	return strconv.Quote(string(b))
}

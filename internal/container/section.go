package container

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash"
	"io"
)

// A framed section is
//
//	tag (uint32), zero (uint32), payload length in bytes (uint64),
//	payload, CRC32-C of the payload (uint32)
//
// all little-endian. SectionOverhead is the bytes a section adds to its payload.
const SectionOverhead = 16 + 4

// Writer writes a stream through a buffer, counting the bytes and keeping a
// CRC32-C of everything written. Errors are sticky: after the first, writes
// do nothing and Err returns it.
type Writer struct {
	bw  *bufio.Writer
	sum hash.Hash32
	n   int64
	err error
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{bw: bufio.NewWriterSize(w, 1<<20), sum: NewHash()}
}

// Write appends b.
func (w *Writer) Write(b []byte) {
	if w.err != nil || len(b) == 0 {
		return
	}
	k, err := w.bw.Write(b)
	w.sum.Write(b[:k])
	w.n += int64(k)
	w.err = err
}

// Flush writes out the buffer and returns the first error.
func (w *Writer) Flush() error {
	if w.err == nil {
		w.err = w.bw.Flush()
	}
	return w.err
}

// Len returns the bytes written so far; Sum32 their CRC32-C.
func (w *Writer) Len() int64    { return w.n }
func (w *Writer) Sum32() uint32 { return w.sum.Sum32() }

// WriteSection appends s, little-endian, as a framed section with tag.
func WriteSection[T Fixed](w *Writer, tag uint32, s []T) {
	var h [16]byte
	binary.LittleEndian.PutUint32(h[0:], tag)
	binary.LittleEndian.PutUint64(h[8:], uint64(len(s)*sizeOf[T]()))
	w.Write(h[:])
	crc := uint32(0)
	EmitLE(s, func(b []byte) error {
		crc = UpdateChecksum(crc, b)
		w.Write(b)
		return w.err
	})
	var c [4]byte
	binary.LittleEndian.PutUint32(c[:], crc)
	w.Write(c[:])
}

// Reader reads a stream of known size through a buffer, keeping a CRC32-C
// of everything read and the bytes left.
type Reader struct {
	r    io.Reader
	sum  hash.Hash32
	left int64
}

// NewReader returns a Reader on r, which holds size bytes.
func NewReader(r io.Reader, size int64) *Reader {
	sum := NewHash()
	return &Reader{r: io.TeeReader(bufio.NewReaderSize(r, 1<<20), sum), sum: sum, left: size}
}

// Left returns the bytes not yet read; Sum32 the CRC32-C of those read.
func (r *Reader) Left() int64   { return r.left }
func (r *Reader) Sum32() uint32 { return r.sum.Sum32() }

// SectionError is a failure reading one part (a section, or "header") of a
// stream; the caller adds the file name.
type SectionError struct {
	Section string
	Msg     string
}

func (e *SectionError) Error() string { return "section " + e.Section + ": " + e.Msg }

func sectionErr(section, format string, a ...any) error {
	return &SectionError{Section: section, Msg: fmt.Sprintf(format, a...)}
}

// ReadFull reads len(b) bytes; section names the part for the error.
func (r *Reader) ReadFull(section string, b []byte) error {
	k, err := io.ReadFull(r.r, b)
	r.left -= int64(k)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return sectionErr(section, "truncated file (%d of %d bytes read)", k, len(b))
	}
	if err != nil {
		return sectionErr(section, "%v", err)
	}
	return nil
}

// ReadSection reads a framed section with tag holding count values of T,
// checking the frame, that the payload fits in what is left of the stream
// (before allocating), and the payload's CRC32-C. name names the section in
// errors (*SectionError).
func ReadSection[T Fixed](r *Reader, tag uint32, name string, count int64) ([]T, error) {
	size := int64(sizeOf[T]())
	var h [16]byte
	if err := r.ReadFull(name, h[:]); err != nil {
		return nil, err
	}
	gotTag, gotLen := binary.LittleEndian.Uint32(h[0:]), binary.LittleEndian.Uint64(h[8:])
	if gotTag != tag || binary.LittleEndian.Uint32(h[4:]) != 0 {
		return nil, sectionErr(name, "bad section header (tag %d, want %d)", gotTag, tag)
	}
	if count < 0 || count > r.left/size || gotLen != uint64(count*size) {
		return nil, sectionErr(name, "length %d bytes, want %d×%d (file has %d bytes left)", gotLen, count, size, r.left)
	}
	s := make([]T, count)
	b := AsBytes(s)
	if err := r.ReadFull(name, b); err != nil {
		return nil, err
	}
	var c [4]byte
	if err := r.ReadFull(name, c[:]); err != nil {
		return nil, err
	}
	if got, want := Checksum(b), binary.LittleEndian.Uint32(c[:]); got != want {
		return nil, sectionErr(name, "checksum mismatch (CRC32-C %08x, stored %08x): the file is damaged", got, want)
	}
	if !HostLE {
		SwapBytes(b, int(size))
	}
	return s, nil
}

// CombineChecksum returns the CRC32-C of the concatenation A‖B from crcA =
// Checksum(A), crcB = Checksum(B) and lenB = len(B), without the bytes
// (zlib's crc32_combine over GF(2)): readers that each checksum their own
// byte range of a section can verify the section's stored checksum together.
func CombineChecksum(crcA, crcB uint32, lenB int64) uint32 {
	if lenB <= 0 {
		return crcA
	}
	var even, odd [32]uint32
	odd[0] = 0x82f63b78 // reflected Castagnoli polynomial: one zero bit
	for n, row := 1, uint32(1); n < 32; n, row = n+1, row<<1 {
		odd[n] = row
	}
	gf2Square(&even, &odd) // two zero bits
	gf2Square(&odd, &even) // four zero bits
	for {
		gf2Square(&even, &odd)
		if lenB&1 != 0 {
			crcA = gf2Times(&even, crcA)
		}
		if lenB >>= 1; lenB == 0 {
			break
		}
		gf2Square(&odd, &even)
		if lenB&1 != 0 {
			crcA = gf2Times(&odd, crcA)
		}
		if lenB >>= 1; lenB == 0 {
			break
		}
	}
	return crcA ^ crcB
}

func gf2Times(mat *[32]uint32, vec uint32) uint32 {
	var sum uint32
	for i := 0; vec != 0; i, vec = i+1, vec>>1 {
		if vec&1 != 0 {
			sum ^= mat[i]
		}
	}
	return sum
}

func gf2Square(square, mat *[32]uint32) {
	for n := range mat {
		square[n] = gf2Times(mat, mat[n])
	}
}

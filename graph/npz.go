package graph

import (
	"archive/zip"
	"io"
	"os"
	"sort"
	"strings"
	"unsafe"
)

// maxDeflateRatio bounds how far DEFLATE can expand data (1032:1 at
// most), so that a member's stated size, which sizes allocations, cannot
// exceed what its compressed bytes can hold.
const maxDeflateRatio = 1032

// npzFile is an open NumPy .npz archive (a zip of .npy members, Zip64
// included). Members stored without compression are read in place by
// offset (pread, or the file's mapping); deflated members are decompressed
// as they are read.
type npzFile struct {
	path    string
	f       *os.File
	size    int64
	members map[string]*zip.File // by array name (member name without .npy)
}

// openNpz opens path and reads its zip directory. Members whose name does
// not end in .npy are ignored (np.savez writes none).
func openNpz(path string) (*npzFile, error) {
	f, st, err := openStat(path)
	if err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(f, st.Size())
	if err != nil {
		f.Close()
		return nil, errorf(path, 0, "not a readable .npz (zip) archive: %v", err)
	}
	z := &npzFile{path: path, f: f, size: st.Size(), members: map[string]*zip.File{}}
	for _, m := range zr.File {
		name, ok := strings.CutSuffix(m.Name, ".npy")
		if !ok {
			continue
		}
		if z.members[name] != nil {
			f.Close()
			return nil, errorf(path, 0, "member %s appears twice", m.Name)
		}
		z.members[name] = m
	}
	return z, nil
}

// Close closes the archive.
func (z *npzFile) Close() error { return z.f.Close() }

// has reports whether the archive holds array name.
func (z *npzFile) has(name string) bool { return z.members[name] != nil }

// first returns the first of names the archive holds ("" if none).
func (z *npzFile) first(names ...string) string {
	for _, n := range names {
		if z.has(n) {
			return n
		}
	}
	return ""
}

// names lists the arrays of the archive, sorted.
func (z *npzFile) names() []string {
	s := make([]string, 0, len(z.members))
	for n := range z.members {
		s = append(s, n)
	}
	sort.Strings(s)
	return s
}

// npzArray is one member of an archive opened for reading: its npy header,
// and either its data's offset in the file (stored) or a stream positioned
// at element pos (deflated).
type npzArray struct {
	name   string // "archive.npz:member.npy", for errors
	Shape  []int
	h      npyHeader
	n      int64  // elements
	file   string // the file holding it
	f      io.ReaderAt
	stored bool
	off    int64         // stored: file offset of element 0
	rc     io.ReadCloser // deflated: the member's decompressed content; a .npy file: the file, for Close
	pos    int64         // deflated: next element rc returns
}

// open opens array name of the archive and checks its npy header against
// the member's size.
func (z *npzFile) open(name string) (*npzArray, error) {
	m := z.members[name]
	if m == nil {
		return nil, errorf(z.path, 0, "no array %q (it holds %s)", name, strings.Join(z.names(), ", "))
	}
	a := &npzArray{name: z.path + ":" + name + ".npy", file: z.path, f: z.f}
	hr, err := a.locate(m, z.size)
	if err == nil {
		err = a.readHeader(hr, int64(m.UncompressedSize64))
	}
	if err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// locate finds member m's content in a file of size bytes: its offset when
// stored, a decompressing stream when deflated. hr reads the content.
func (a *npzArray) locate(m *zip.File, size int64) (hr io.Reader, err error) {
	switch m.Method {
	case zip.Store:
		off, err := m.DataOffset()
		if err != nil {
			return nil, errorf(a.name, 0, "bad zip entry: %v", err)
		}
		if m.CompressedSize64 != m.UncompressedSize64 || off < 0 || m.CompressedSize64 > uint64(size-off) {
			return nil, errorf(a.name, 0, "bad zip entry: stored member of %d bytes at offset %d outside the %d-byte file", m.CompressedSize64, off, size)
		}
		a.stored, a.off = true, off
		return io.NewSectionReader(a.f, off, int64(m.CompressedSize64)), nil
	case zip.Deflate:
		if m.UncompressedSize64/maxDeflateRatio > m.CompressedSize64 {
			return nil, errorf(a.name, 0, "bad zip entry: %d bytes cannot inflate to the %d stated", m.CompressedSize64, m.UncompressedSize64)
		}
		if a.rc, err = m.Open(); err != nil {
			return nil, errorf(a.name, 0, "bad zip entry: %v", err)
		}
		return a.rc, nil
	}
	return nil, errorf(a.name, 0, "zip compression method %d is not supported (np.savez stores, np.savez_compressed deflates)", m.Method)
}

// readHeader reads the npy header from hr and checks the shape against
// the bytes of the whole .npy (size; < 0: unknown), then moves a.off to
// the data.
func (a *npzArray) readHeader(hr io.Reader, size int64) error {
	h, err := readNpyHeader(hr, a.name)
	if err != nil {
		return err
	}
	a.h, a.Shape, a.n = h, h.shape, 1
	for _, d := range h.shape {
		a.n *= int64(d)
	}
	if got, want := size-h.dataOff, a.n*int64(h.size); size >= 0 && got != want {
		return errorf(a.name, 0, "npy data is %d bytes but shape %v of %s needs %d", got, h.shape, h.descr, want)
	}
	a.off += h.dataOff
	return nil
}

// openNpyArray opens a .npy file for reading by ranges, as a stored
// member; Close closes the file.
func openNpyArray(path string) (*npzArray, error) {
	f, st, err := openStat(path)
	if err != nil {
		return nil, err
	}
	a := &npzArray{name: path, file: path, f: f, stored: true, rc: f}
	if err := a.readHeader(f, st.Size()); err != nil {
		f.Close()
		return nil, err
	}
	return a, nil
}

// Close ends reading the member; a deflated member read to its end has had
// its CRC checked.
func (a *npzArray) Close() error {
	if a.rc != nil {
		return a.rc.Close()
	}
	return nil
}

// elems reads elements [from, to) into an NpyArray of shape (to-from,). A
// deflated member is read forward only: from must not lie before the
// elements already read.
func (a *npzArray) elems(from, to int64) (*NpyArray, error) {
	if from < 0 || to < from || to > a.n {
		return nil, errorf(a.name, 0, "elements [%d,%d) outside the %d of shape %v", from, to, a.n, a.Shape)
	}
	size := int64(a.h.size)
	var r io.Reader
	if a.stored {
		r = io.NewSectionReader(a.f, a.off+from*size, (to-from)*size)
	} else {
		if from < a.pos {
			return nil, errorf(a.name, 0, "compressed member read backwards (element %d after %d)", from, a.pos)
		}
		if _, err := io.CopyN(io.Discard, a.rc, (from-a.pos)*size); err != nil {
			return nil, errorf(a.name, 0, "decompressing: %v", err)
		}
		r, a.pos = a.rc, to
	}
	data, err := readNpyData(r, &a.h, int(to-from))
	if err != nil {
		return nil, errorf(a.name, 0, "reading elements [%d,%d): %v", from, to, err)
	}
	if !a.stored && to == a.n {
		if err := a.checkEnd(); err != nil {
			return nil, err
		}
	}
	return &NpyArray{Shape: []int{int(to - from)}, Descr: a.h.descr, data: data}, nil
}

// checkEnd reads a deflated member past its last element, so the zip
// reader verifies the size and CRC.
func (a *npzArray) checkEnd() error {
	n, err := io.Copy(io.Discard, a.rc)
	switch {
	case err != nil:
		return errorf(a.name, 0, "decompressing: %v", err)
	case n != 0:
		return errorf(a.name, 0, "%d bytes after the npy data", n)
	}
	return nil
}

// rowLen is the number of elements in one row (the product of Shape[1:]).
func (a *npzArray) rowLen() int64 {
	r := int64(1)
	for _, d := range a.Shape[1:] {
		r *= int64(d)
	}
	return r
}

// mappedF32 returns the elements of a stored little-endian float32 member
// straight from a private mapping of the file (no copy; writes stay in this
// process), with the func that unmaps it; nil when the member is
// compressed, of another dtype, misaligned in the file, the host is
// big-endian, or the file cannot be mapped.
func (a *npzArray) mappedF32() ([]float32, func() error) {
	if !a.stored || a.h.descr != "<f4" || !hostLittleEndian() || a.n == 0 || a.off%4 != 0 {
		return nil, nil
	}
	img, err := mapFile(a.file)
	if err != nil {
		return nil, nil
	}
	if int64(len(img.data)) < a.off+4*a.n {
		img.close()
		return nil, nil
	}
	b := img.data[a.off : a.off+4*a.n]
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), a.n), img.close
}

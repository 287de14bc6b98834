package container

import (
	"encoding/binary"
	"unsafe"
)

// Fixed are the element types stored in sections: all files are
// little-endian, and on little-endian hosts sections are written from and
// viewed as raw memory.
type Fixed interface {
	~int64 | ~uint64 | ~int32 | ~uint32 | ~float32 | ~uint8
}

// HostLE is true on little-endian hosts.
var HostLE = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

func sizeOf[T Fixed]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

// AsBytes views s as its raw (host-order) bytes, without copying.
func AsBytes[T Fixed](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*sizeOf[T]())
}

// SwapBytes reverses the bytes of each size-byte element of b in place
// (host order ↔ little-endian on big-endian hosts).
func SwapBytes(b []byte, size int) {
	if size <= 1 {
		return
	}
	for i := 0; i+size <= len(b); i += size {
		for l, r := i, i+size-1; l < r; l, r = l+1, r-1 {
			b[l], b[r] = b[r], b[l]
		}
	}
}

// EmitLE passes the little-endian bytes of s to emit: in one piece without
// copying on little-endian hosts, in converted chunks otherwise.
func EmitLE[T Fixed](s []T, emit func([]byte) error) error {
	if len(s) == 0 {
		return nil
	}
	b := AsBytes(s)
	if HostLE {
		return emit(b)
	}
	size := sizeOf[T]()
	const chunk = 1 << 16
	buf := make([]byte, 0, chunk*size)
	for lo := 0; lo < len(b); lo += chunk * size {
		buf = append(buf[:0], b[lo:min(lo+chunk*size, len(b))]...)
		SwapBytes(buf, size)
		if err := emit(buf); err != nil {
			return err
		}
	}
	return nil
}

// ViewLE returns the little-endian bytes b as a []T: a view sharing b on
// little-endian hosts (b must then be aligned for T), a decoded copy
// otherwise. An empty b gives an empty, non-nil slice.
func ViewLE[T Fixed](b []byte) []T {
	size := sizeOf[T]()
	if len(b) < size {
		return []T{}
	}
	if HostLE {
		return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/size)
	}
	return DecodeLE[T](b)
}

// DecodeLE returns a fresh []T holding the little-endian values of b.
func DecodeLE[T Fixed](b []byte) []T {
	size := sizeOf[T]()
	out := make([]T, len(b)/size)
	raw := AsBytes(out)
	copy(raw, b)
	if !HostLE {
		SwapBytes(raw, size)
	}
	return out
}

// Aligned reports whether b's first byte lies on an align-byte boundary.
func Aligned(b []byte, align uintptr) bool {
	return len(b) == 0 || uintptr(unsafe.Pointer(&b[0]))%align == 0
}

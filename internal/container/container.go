// Package container holds what supergcn's three binary file formats share:
// the 8-byte magic and uint32 version that open every file, CRC32-C
// (Castagnoli) checksums, little-endian views of typed slices, the framed
// section (tag, length, payload, checksum), and the atomic writer every
// output goes through (NAME.tmp, fsync, rename, fsync of the directory; the
// .tmp removed on every error).
//
// The formats themselves (graph's .sgb dataset, partition's part files and
// train's checkpoints) keep their own layouts and error messages; this
// package only provides the pieces, so a change to checksumming, byte order
// or durability is made once.
package container

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
)

// castagnoli is the CRC32-C table; read-only after package initialisation.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum returns the CRC32-C of b.
func Checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// UpdateChecksum returns the CRC32-C of the bytes summed in crc followed by b.
func UpdateChecksum(crc uint32, b []byte) uint32 { return crc32.Update(crc, castagnoli, b) }

// NewHash returns a running CRC32-C.
func NewHash() hash.Hash32 { return crc32.New(castagnoli) }

// MagicSize is the length of a format's magic; PrefixSize the magic and
// the uint32 version that follows it at the start of every file.
const (
	MagicSize  = 8
	PrefixSize = MagicSize + 4
)

// Format identifies one file format by its magic and the versions this
// build reads (Min through Version) and writes (Version).
type Format struct {
	Magic   string // exactly MagicSize bytes
	Version uint32 // written, and the newest read
	Min     uint32 // oldest version read (0 means Version)
}

// ErrBadMagic: the bytes do not start with the format's magic.
var ErrBadMagic = errors.New("bad magic")

// TruncatedError: the file ends inside the prefix (it starts with a
// prefix of the magic, so it is a damaged file of this format).
type TruncatedError struct{ Have, Need int }

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("truncated: %d bytes, header needs %d", e.Have, e.Need)
}

// VersionError: the magic matches but the version is not one this build reads.
type VersionError struct{ Got, Min, Max uint32 }

func (e *VersionError) Error() string {
	if e.Min == e.Max {
		return fmt.Sprintf("format version %d, this build reads %d", e.Got, e.Max)
	}
	return fmt.Sprintf("format version %d, this build reads %d to %d", e.Got, e.Min, e.Max)
}

// PutPrefix writes the magic and the current version into b[:PrefixSize].
func (f Format) PutPrefix(b []byte) {
	copy(b[:MagicSize], f.Magic)
	binary.LittleEndian.PutUint32(b[MagicSize:], f.Version)
}

// Prefix returns the magic and current version as a fresh PrefixSize slice.
func (f Format) Prefix() []byte {
	b := make([]byte, PrefixSize)
	f.PutPrefix(b)
	return b
}

// HasMagic reports whether b starts with the format's magic.
func (f Format) HasMagic(b []byte) bool {
	return len(b) >= MagicSize && string(b[:MagicSize]) == f.Magic
}

// CheckPrefix checks the magic and version at the start of b and returns
// the version: ErrBadMagic, a *TruncatedError or a *VersionError otherwise.
func (f Format) CheckPrefix(b []byte) (uint32, error) {
	if len(b) < MagicSize {
		if len(b) > 0 && string(b) == f.Magic[:len(b)] {
			return 0, &TruncatedError{Have: len(b), Need: PrefixSize}
		}
		return 0, ErrBadMagic
	}
	if !f.HasMagic(b) {
		return 0, ErrBadMagic
	}
	if len(b) < PrefixSize {
		return 0, &TruncatedError{Have: len(b), Need: PrefixSize}
	}
	v := binary.LittleEndian.Uint32(b[MagicSize:])
	lo := f.Min
	if lo == 0 {
		lo = f.Version
	}
	if v < lo || v > f.Version {
		return v, &VersionError{Got: v, Min: lo, Max: f.Version}
	}
	return v, nil
}

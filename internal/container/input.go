package container

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// NotRegularError is the error for an input that is not a regular file: a
// named pipe blocks until a writer appears, a device such as /dev/zero
// never ends, and neither has a size to check before reading.
type NotRegularError struct {
	Path string
	Kind string
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s: %s, not a regular file", e.Path, e.Kind)
}

// fileKind names the type of a file that is not regular.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "a special file"
}

// OpenInput opens the regular file path for reading and returns it with
// its FileInfo. Anything else (a directory, named pipe, device or socket)
// is a *NotRegularError; a named pipe is recognised without waiting for a
// writer.
func OpenInput(path string) (*os.File, os.FileInfo, error) {
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = &NotRegularError{Path: path, Kind: fileKind(st.Mode())}
	}
	if err == nil {
		err = setBlocking(f)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// CheckInput returns the error OpenInput would give for path, without
// keeping it open.
func CheckInput(path string) error {
	f, _, err := OpenInput(path)
	if err == nil {
		f.Close()
	}
	return err
}

// TooLargeError is the error for an input larger than a reader accepts.
type TooLargeError struct {
	Path      string
	Size, Max int64
	What      string
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: %d bytes, more than the %d a %s may have", e.Path, e.Size, e.Max, e.What)
}

// ReadInput reads the whole regular file path (see OpenInput), refusing
// one larger than max bytes (a *TooLargeError; what names the kind of file
// in it) before reading any of it.
func ReadInput(path string, max int64, what string) ([]byte, error) {
	f, st, err := OpenInput(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > max {
		return nil, &TooLargeError{Path: path, Size: st.Size(), Max: max, What: what}
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = &TooLargeError{Path: path, Size: int64(len(b)), Max: max, What: what}
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

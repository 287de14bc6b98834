package graph

import (
	"errors"
	"fmt"
	"strconv"
)

// ParseError reports bad input in a file: File names the file, Line the
// 1-based line (0 when the problem is not tied to one line, e.g. a missing
// section or a binary header), Msg what is wrong.
type ParseError struct {
	File string
	Line int64
	Msg  string
}

// Error formats the error as "FILE:LINE: MSG", or "FILE: MSG" when Line is 0.
func (e *ParseError) Error() string {
	if e.Line == 0 {
		return e.File + ": " + e.Msg
	}
	return e.File + ":" + strconv.FormatInt(e.Line, 10) + ": " + e.Msg
}

// errorf returns a *ParseError for file and line with a formatted message.
func errorf(file string, line int64, format string, args ...any) error {
	return &ParseError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// errNoMap: the file cannot be memory-mapped (empty, not regular, too
// large for the address space, or no mmap on this system).
var errNoMap = errors.New("file cannot be mapped")

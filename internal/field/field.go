// Package field is how supergcn's libraries report a bad input without
// knowing the command line: an *Error names the input as the library's API
// spells it, qualified by package and type ("train.Config.Epochs",
// "graph.LoadOptions.Split"), and a message may mention other inputs the
// same way. The command line maps those names to its flags (Rename); the
// libraries never name a flag.
package field

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Error is an invalid value of the input Field.
type Error struct {
	Field string
	Err   error
}

func (e *Error) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error for field with a formatted message (%w wraps).
func Errorf(field, format string, args ...any) error {
	return &Error{Field: field, Err: fmt.Errorf(format, args...)}
}

// Wrap returns err as an *Error of field, or nil for a nil err.
func Wrap(field string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Field: field, Err: err}
}

// Rename returns the text of err with every input name of names (the keys)
// replaced by its value (Replace). It also reports whether err holds an
// *Error.
func Rename(err error, names map[string]string) (string, bool) {
	var fe *Error
	return Replace(err.Error(), names), errors.As(err, &fe)
}

// Replace returns msg with every input name of names (the keys) replaced
// by its value, longest names first so that a name that is a prefix of
// another ("train.Config.Save", "train.Config.SaveEvery") is not split.
func Replace(msg string, names map[string]string) string {
	keys := make([]string, 0, len(names))
	for k := range names {
		if strings.Contains(msg, k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return msg
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	pairs := make([]string, 0, 2*len(keys))
	for _, k := range keys {
		pairs = append(pairs, k, names[k])
	}
	return strings.NewReplacer(pairs...).Replace(msg)
}

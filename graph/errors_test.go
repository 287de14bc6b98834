package graph

import "testing"

func TestParseErrorFormat(t *testing.T) {
	for _, c := range []struct {
		e    ParseError
		want string
	}{
		{ParseError{"a/edge.csv", 12, "bad node id \"x\""}, "a/edge.csv:12: bad node id \"x\""},
		{ParseError{"x.npy", 0, "bad npy header"}, "x.npy: bad npy header"},
		{ParseError{"big.txt", 62000000123, "oops"}, "big.txt:62000000123: oops"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}

package spell

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "", 3}, {"train", "trian", 1}, {"epochs", "epcohs", 1}, {"kitten", "sitting", 3}, {"hidden", "hid", 3}, {"ca", "abc", 3}} {
		if d := Distance(c.a, c.b); d != c.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, d, c.d)
		}
	}
}

func TestNearest(t *testing.T) {
	kinds := []string{"aggr", "alltoall", "gemm", "order", "profile", "quant", "stream"}
	for key, want := range map[string]string{"qaunt": "quant", "gemm": "gemm", "prof": "profile", "xyz": "", "str": "stream", "a": ""} {
		if n := Nearest(key, kinds); n != want {
			t.Errorf("Nearest(%q) = %q, want %q", key, n, want)
		}
	}
	if s := DidYouMean("Qaunt", kinds); s != " (did you mean quant?)" {
		t.Errorf("DidYouMean: %q", s)
	}
	if s := DidYouMean("zzzzzz", kinds); s != "" {
		t.Errorf("DidYouMean(zzzzzz): %q", s)
	}
}

func TestCanonical(t *testing.T) {
	names, aliases := []string{"two-level", "flat", "NN"}, map[string]string{"hierarchical": "two-level"}
	for in, want := range map[string]string{"Two_Level": "two-level", "FLAT,Hierarchical": "flat,two-level", "nn": "NN", "three": "three", " flat ": "flat"} {
		if got := Canonical(in, names, aliases); got != want {
			t.Errorf("Canonical(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUnknownFlag(t *testing.T) {
	fs := flag.NewFlagSet("supergcn train", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	for _, n := range []string{"hidden", "epochs", "lr"} {
		fs.String(n, "", "")
	}
	habits := Habits{
		Names:       map[string]string{"learning-rate": "lr", "num-heads": "heads"},
		Unsupported: map[string]string{"hiddn": "not offered"},
	}
	for args, want := range map[string]string{
		"--epcohs=3":         "flag provided but not defined: --epcohs (did you mean --epochs?)",
		"-learning_rate 0.1": "flag provided but not defined: -learning_rate (did you mean --lr?)",
		"--zzzzzz":           "flag provided but not defined: --zzzzzz (see supergcn train --help)",
		"--Hiddn=3":          "flag provided but not defined: --Hiddn: not offered",                    // not --hidden
		"--num_heads 4":      "flag provided but not defined: --num_heads (see supergcn train --help)", // no --heads here
	} {
		a := strings.Fields(args)
		err := fs.Parse(a)
		if msg, ok := UnknownFlag(fs, a, err, habits); !ok || msg != want {
			t.Errorf("%s: %q, want %q", args, msg, want)
		}
	}
	if _, ok := UnknownFlag(fs, nil, errors.New("invalid value"), habits); ok {
		t.Error("another error taken for an unknown flag")
	}
}

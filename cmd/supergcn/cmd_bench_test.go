package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/perfmodel/measure"
)

// benchCaptureStdout runs fn with os.Stdout redirected and returns what it wrote.
func benchCaptureStdout(t *testing.T, fn func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	ferr := fn()
	os.Stdout = old
	w.Close()
	return <-done, ferr
}

func TestBenchAggrJSON(t *testing.T) {
	for _, g := range []string{"random", "powerlaw"} {
		out, err := benchCaptureStdout(t, func() error {
			return runBench([]string{"aggr", "--graph", g, "--nodes", "700", "--edges", "9000", "--width", "9",
				"--threads", "2", "--reps", "2", "--json", "--kernel", "generic"})
		})
		if err != nil {
			t.Fatalf("%s: %v", g, err)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != len(measure.AggrOps) {
			t.Fatalf("%s: %d lines, want %d:\n%s", g, len(lines), len(measure.AggrOps), out)
		}
		for i, l := range lines {
			var r measure.AggrLine
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("%s: line %q: %v", g, l, err)
			}
			if r.Op != measure.AggrOps[i] || r.Nodes != 700 || r.Edges != 9000 || r.Width != 9 || r.Threads != 2 ||
				r.Kernel != "generic" || !(r.MedianMS > 0) || !(r.GUPS > 0) || !(r.GBS > 0) {
				t.Fatalf("%s: bad result %+v", g, r)
			}
		}
	}
}

func TestBenchErrors(t *testing.T) {
	var ue usageError
	for _, args := range [][]string{
		{}, {"bogus"}, {"aggr", "--ops", "spmm,nope"}, {"aggr", "--width", "0"}, {"aggr", "--kernel", "nope"},
	} {
		_, err := benchCaptureStdout(t, func() error { return runBench(args) })
		if !errors.As(err, &ue) {
			t.Fatalf("bench %v: err %v, want a usage error", args, err)
		}
	}
}

func TestBenchStream(t *testing.T) {
	out, err := benchCaptureStdout(t, func() error {
		return runBench([]string{"stream", "--threads", "2", "--mib", "1", "--reps", "1", "--json"})
	})
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	if c, ok := r["triad_gbs"].(float64); !ok || !(c > 0) {
		t.Fatalf("stream result %v", r)
	}
}

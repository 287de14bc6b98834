package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestBenchGemmJSON(t *testing.T) {
	out, err := benchCaptureStdout(t, func() error {
		return runBench([]string{"gemm", "--rows", "5000", "--in", "3,20", "--out", "7", "--ops", "nn,NT,TN",
			"--threads", "2", "--reps", "1", "--json"})
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := []struct {
		op      string
		in, out int
	}{{"NN", 3, 7}, {"NN", 20, 7}, {"NT", 3, 7}, {"NT", 20, 7}, {"TN", 3, 7}, {"TN", 20, 7}}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, l := range lines {
		var r gemmResult
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if r.Op != want[i].op || r.In != want[i].in || r.Out != want[i].out || r.Rows != 5000 || r.Threads != 2 ||
			!(r.MedianMS > 0) || !(r.GFLOPS > 0) {
			t.Fatalf("line %d: %+v, want %+v", i, r, want[i])
		}
	}
	csv, err := benchCaptureStdout(t, func() error {
		return runBench([]string{"gemm", "--rows", "100", "--in", "4", "--out", "5", "--ops", "TN", "--reps", "1", "--csv"})
	})
	if err != nil || !strings.HasPrefix(csv, "op,rows,in,out,threads,reps,median_ms,gflops\nTN,100,4,5,") {
		t.Fatalf("--csv: %v\n%s", err, csv)
	}
}

func TestBenchGemmErrors(t *testing.T) {
	var ue usageError
	for _, args := range [][]string{
		{"gemm", "--ops", "NN,XX"}, {"gemm", "--in", "0"}, {"gemm", "--out", "a"}, {"gemm", "--rows", "0"},
		{"gemm", "--rows", "100000000", "--in", "256"},
	} {
		_, err := benchCaptureStdout(t, func() error { return runBench(args) })
		if !errors.As(err, &ue) {
			t.Fatalf("bench %v: err %v, want a usage error", args, err)
		}
	}
}

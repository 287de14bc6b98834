package main

import (
	"slices"
	"testing"
)

func TestWithoutOutputs(t *testing.T) {
	in := []string{"--data", "/x/p.sgb", "--metrics", "/root/out/m.jsonl", "--save=/a.ckpt", "-save-every", "5",
		"--model", "sage", "--predictions", "p.npy", "--cpuprofile=c.prof", "--epochs", "6"}
	want := []string{"--data", "/x/p.sgb", "--model", "sage", "--epochs", "6"}
	if got := withoutOutputs(in); !slices.Equal(got, want) {
		t.Fatalf("withoutOutputs(%q) = %q, want %q", in, got, want)
	}
}

package main

// Inputs and outputs that are not what they claim to be: special files in
// place of inputs, outputs naming inputs, sizes beyond reason. Each must end
// with one line and a non-zero exit, quickly, with nothing half-written.

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/supergcn/supergcn/internal/testdata"
)

// TestCLISpecialFiles: a named pipe or a device given as any input is
// refused before it is read (a FIFO would block forever, /dev/zero never
// ends).
func TestCLISpecialFiles(t *testing.T) {
	cora := testdata.Dataset(t, "cora")
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	const pipe, dev = "a named pipe (FIFO), not a regular file", "/dev/zero: a character device, not a regular file"
	out := filepath.Join(dir, "out")
	for _, c := range []badCase{
		{name: "train --data fifo", args: []string{"train", "--data", fifo}, want: pipe},
		{name: "train --data /dev/zero", args: []string{"train", "--data", "/dev/zero"}, want: dev},
		{name: "train --features fifo", args: []string{"train", "--data", cora, "--features", fifo}, want: pipe},
		{name: "train --labels /dev/zero", args: []string{"train", "--data", cora, "--labels", "/dev/zero"}, want: dev},
		{name: "train --resume fifo", args: []string{"train", "--data", cora, "--resume", fifo}, want: pipe},
		{name: "train --resume /dev/zero", args: []string{"train", "--data", cora, "--resume", "/dev/zero"}, want: dev},
		{name: "eval --model fifo", args: []string{"eval", "--data", cora, "--model", fifo}, want: pipe},
		{name: "eval --model /dev/zero", args: []string{"eval", "--data", cora, "--model", "/dev/zero"}, want: dev},
		{name: "convert --data /dev/zero", args: []string{"convert", "--data", "/dev/zero", "--out", out}, want: dev},
		{name: "partition ldg --data fifo", args: []string{"partition", "--data", fifo, "--method", "ldg", "--parts", "2", "--out", out}, want: pipe},
		{name: "predict --profile fifo", args: []string{"predict", "--profile", fifo, "--partitions", dir, "--network", "10gbit"}, want: pipe},
		{name: "predict --profile /dev/zero", args: []string{"predict", "--profile", "/dev/zero", "--partitions", dir, "--network", "10gbit"}, want: dev},
		{name: "plot fifo", args: []string{"plot", fifo, "--out", out}, want: pipe},
	} {
		expectQuickFailure(t, c)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("an output was written: %v", err)
	}
}

// expectQuickFailure is expectCleanFailure within 30 s (the special-file
// cases used to block forever or run until memory ran out).
func expectQuickFailure(t *testing.T, c badCase) {
	t.Helper()
	r := runEnv(t, 30*time.Second, c.env, c.args...)
	checkCleanFailure(t, c, r)
}

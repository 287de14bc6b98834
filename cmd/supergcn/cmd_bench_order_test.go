package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/partition"
)

// bench order --json: one line per order and width, the given order's
// speed-up 1, every time positive; bad flags are usage errors.
func TestBenchOrderJSON(t *testing.T) {
	out, err := benchCaptureStdout(t, func() error {
		return runBench([]string{"order", "--spec", "nodes=3000,degree=8,classes=4", "--widths", "5,33", "--parts", "2",
			"--threads", "2", "--reps", "2", "--json", "--kernel", "generic"})
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	orders := partition.NodeOrders()
	if len(lines) != 2*len(orders) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), 2*len(orders), out)
	}
	for i, l := range lines {
		var r orderResult
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if r.Order != orders[i%len(orders)] || r.Width != []int{5, 33}[i/len(orders)] || r.Parts != 2 || r.Nodes < 1000 || r.Nodes > 2000 ||
			!(r.FwdMS > 0) || !(r.BwdMS > 0) || !(r.FwdGain > 0) || (r.Order == partition.OrderGiven && (r.FwdGain != 1 || r.BwdGain != 1)) {
			t.Fatalf("bad result %+v", r)
		}
	}
	var ue usageError
	for _, args := range [][]string{
		{"order", "--orders", "given,nope"}, {"order", "--widths", "0"}, {"order", "--spec", "nodes=-1"}, {"order", "--parts", "0"},
	} {
		_, err := benchCaptureStdout(t, func() error { return runBench(args) })
		if !errors.As(err, &ue) {
			t.Fatalf("bench %v: err %v, want a usage error", args, err)
		}
	}
}

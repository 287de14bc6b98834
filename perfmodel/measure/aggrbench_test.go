package measure

import (
	"errors"
	"testing"

	"github.com/supergcn/supergcn/internal/field"
)

// TestAggrBench: a small random graph runs every operator once per line
// with the run's settings; each bad setting is a field error naming it.
func TestAggrBench(t *testing.T) {
	b := AggrBench{Graph: "random", Nodes: 300, Edges: 2000, Width: 5, Reps: 1, Threads: 1, Kernel: "generic", Ops: AggrOps, Seed: 3}
	r, err := b.Run()
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Lines) != len(AggrOps) || r.Nodes != 300 || r.Edges != 2000 || r.Kernel != "generic" {
		t.Fatalf("report %+v", r)
	}
	for i, l := range r.Lines {
		if l.Op != AggrOps[i] || l.Width != 5 || l.Nodes != 300 || !(l.GUPS > 0) {
			t.Errorf("line %d: %+v", i, l)
		}
	}
	for name, spoil := range map[string]func(*AggrBench){
		"Width": func(b *AggrBench) { b.Width = 0 },
		"Reps":  func(b *AggrBench) { b.Reps = 0 },
		"Ops":   func(b *AggrBench) { b.Ops = []string{"spmm", "nope"} },
		"Nodes": func(b *AggrBench) { b.Nodes = 0 },
		"Edges": func(b *AggrBench) { b.Edges = -1 },
	} {
		bad := b
		spoil(&bad)
		var fe *field.Error
		if _, err := bad.Run(); !errors.As(err, &fe) || fe.Field != "measure.AggrBench."+name {
			t.Errorf("%s: %v", name, err)
		}
	}
}

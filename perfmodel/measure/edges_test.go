package measure

import (
	"runtime"
	"testing"

	"github.com/supergcn/supergcn/graph"
)

// TestEdgesOf: the COO of a CSR builds the same CSR back.
func TestEdgesOf(t *testing.T) {
	src, dst, err := SynthEdges("powerlaw", 50, 300, 3)
	if err != nil {
		t.Fatal(err)
	}
	a := graph.FromCOO(50, 50, src, dst, nil)
	s, d := EdgesOf(a)
	b := graph.FromCOO(50, 50, s, d, nil)
	if len(s) != 300 || len(d) != 300 {
		t.Fatalf("%d, %d edges, want 300", len(s), len(d))
	}
	for v := range 51 {
		if a.Ptr[v] != b.Ptr[v] {
			t.Fatalf("row %d: offsets differ", v)
		}
	}
	for k := range a.Idx {
		if a.Idx[k] != b.Idx[k] {
			t.Fatalf("entry %d differs", k)
		}
	}
}

func TestHugeFloats(t *testing.T) {
	x, err := HugeFloats(1 << 20)
	if runtime.GOOS != "linux" {
		if err == nil {
			t.Error("huge pages outside Linux")
		}
		return
	}
	if err != nil {
		t.Skipf("no anonymous mapping here: %v", err)
	}
	if len(x) != 1<<20 || x[len(x)-1] != 0 {
		t.Fatalf("%d floats", len(x))
	}
	x[12345] = 1
}

// TestAggrBuffers: x is the same for a seed, out starts zero.
func TestAggrBuffers(t *testing.T) {
	x, out, err := AggrBuffers(30, 4, false, 5)
	if err != nil {
		t.Fatal(err)
	}
	y, _, _ := AggrBuffers(30, 4, false, 5)
	nonzero := 0
	for i, v := range x.Data {
		if v != y.Data[i] || out.Data[i] != 0 {
			t.Fatalf("element %d: %v vs %v, out %v", i, v, y.Data[i], out.Data[i])
		}
		if v != 0 {
			nonzero++
		}
	}
	if x.Rows != 30 || x.Cols != 4 || nonzero < 100 {
		t.Errorf("%d×%d, %d non-zero of 120", x.Rows, x.Cols, nonzero)
	}
}

package nn

import (
	"math/rand/v2"
	"testing"

	"github.com/supergcn/supergcn/dense"
)

// TestHiddenStage: the stage on its own computes ReLU(LayerNorm(o)) as the
// separate passes do, and refuses shapes it was not made for.
func TestHiddenStage(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	o := randMat(r, 50, 37)
	want := NewLayerNorm("ln", 37).Forward(o)
	ReLU(want)
	s, err := NewHiddenStage(37, true, 0, "generic")
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.Forward(o, true, 1)
	if err != nil {
		t.Fatal(err)
	}
	sameFloats(t, "stage output", h.Data, want.Data)
	g := randMat(r, 50, 37)
	if _, err := s.Backward(g); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Backward(dense.New(3, 37)); err == nil {
		t.Error("Backward of another shape accepted")
	}
	if _, err := s.Forward(dense.New(2, 5), true, 1); err == nil {
		t.Error("Forward of another width accepted")
	}
	for _, bad := range []struct {
		w int
		p float64
		k string
	}{{0, 0, ""}, {4, 1, ""}, {4, 0, "mmx"}} {
		if _, err := NewHiddenStage(bad.w, false, bad.p, bad.k); err == nil {
			t.Errorf("NewHiddenStage(%d, %g, %q) accepted", bad.w, bad.p, bad.k)
		}
	}
}

package exchange

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/nn"
)

var allKinds = []nn.OpKind{nn.OpGCN, nn.OpMean, nn.OpSum}

// TestSingleRankMatchesReference: with one rank the exchange is the whole
// operator; forward and backward match the float64 reference.
func TestSingleRankMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ds := randomDataset(rng, 300, 4, 0)
	for _, kind := range allKinds {
		for _, w := range []int{1, 7, 64} {
			p, err := New(ShardFromDataset(ds), comm.Single(), testEngine(), kind, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if p.Rows() != 300 {
				t.Fatalf("Rows() = %d", p.Rows())
			}
			x := randomMatrix(rng, 300, w)
			out := dense.New(300, w)
			if err := p.Forward(nn.Pass{}, x, out); err != nil {
				t.Fatal(err)
			}
			assertClose(t, kind.String()+" forward", out, refOperator(ds.Graph, kind, x, false), 1e-5)
			gx := dense.New(300, w)
			if err := p.Backward(nn.Pass{}, x, gx); err != nil {
				t.Fatal(err)
			}
			assertClose(t, kind.String()+" backward", gx, refOperator(ds.Graph, kind, x, true), 1e-5)
			if st := p.Stats(); st.Forwards != 1 || st.Backwards != 1 || st.CommBytes != 0 {
				t.Fatalf("stats %+v", st)
			}
		}
	}
}

// TestNewRejects covers the inputs New refuses.
func TestNewRejects(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ds := randomDataset(rng, 20, 2, 0)
	e := testEngine()
	cases := []struct {
		name string
		opts Options
		edit func()
		want string
	}{
		{"mode", Options{Mode: "sideways"}, nil, "unknown mode"},
		{"weights on cut edges only", Options{}, nil, "cut edges carry weights"},
	}
	for _, c := range cases {
		if c.edit != nil {
			c.edit()
		}
		s := ShardFromDataset(ds)
		if c.name == "weights on cut edges only" {
			s.Remote.Val = []float32{}
		}
		_, err := New(s, comm.Single(), e, nn.OpGCN, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
	s := ShardFromDataset(randomDataset(rng, 20, 2, 0))
	s.Ranks = 2
	if _, err := New(s, comm.Single(), e, nn.OpSum, Options{}); err == nil {
		t.Error("rank count mismatch accepted")
	}
	p, _ := New(ShardFromDataset(randomDataset(rng, 20, 2, 0)), comm.Single(), e, nn.OpSum, Options{})
	if err := p.Forward(nn.Pass{}, dense.New(20, 3), dense.New(19, 3)); err == nil {
		t.Error("shape mismatch accepted")
	}
}

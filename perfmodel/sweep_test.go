package perfmodel

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/quant"
)

// TestSweep: a sweep predicts every profile × network × mode × bits in
// that order, resolves AutoBits as train does (2 bits with several ranks),
// takes the partition's widths where the model leaves them 0, equals
// Predict of the same setting, and round-trips its volumes through a file.
func TestSweep(t *testing.T) {
	m, err := ModelOf(nn.Config{Model: "gcn", Layers: 2, Hidden: 128, Dropout: 0.5, Norm: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if m.In != 0 || m.Classes != 0 || !m.Dropout || m.LayerNorm {
		t.Fatalf("ModelOf: %+v", m)
	}
	if _, err := ModelOf(nn.Config{Model: "gcn", Layers: 2, Hidden: 8, Dropout: 1}); err == nil || !strings.HasPrefix(err.Error(), "nn.Config.Dropout") {
		t.Errorf("dropout 1: %v", err)
	}
	v := &Volumes{Ranks: twoRanks()}
	v.Meta.Parts, v.Meta.FeatDim, v.Meta.Nodes, v.Meta.Edges = 2, 100, 2000, 21000
	shm, _ := ParseNetwork("shm")
	gbit, _ := ParseNetwork("1gbit")
	sw := Sweep{Profiles: []*Profile{flatProfile()}, Networks: []Network{shm, gbit}, Modes: []exchange.Mode{exchange.ModeHybrid, exchange.ModePost},
		Bits: []int{AutoBits, 32}, Config: Config{Model: m, RanksPerNode: 1, Threads: 1, EvalEvery: 1}, Scale: 1}
	rows, err := sw.Run(v)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 8 {
		t.Fatalf("%d rows, want 2 networks × 2 modes × 2 bits", len(rows))
	}
	for i, r := range rows {
		net, mode, bits := []Network{shm, gbit}[i/4], []exchange.Mode{exchange.ModeHybrid, exchange.ModePost}[i/2%2], []int{2, 32}[i%2]
		if r.Network != net.Name || r.AggrMode != mode.String() || r.Bits != bits || r.Exchange != exchange.ExchangeFlat {
			t.Errorf("row %d: %s %s %d bits %s exchange, want %s %s %d flat", i, r.Network, r.AggrMode, r.Bits, r.Exchange, net.Name, mode, bits)
		}
		want, err := Predict(twoRanks(), flatProfile(), net, Config{Model: Model{Kind: "gcn", Layers: 2, Hidden: 128, In: 100, Classes: DefaultClasses, Dropout: true},
			Mode: mode, Wire: quant.Wires{quant.Forward: {Bits: bits}}, RanksPerNode: 1, Threads: 1, EvalEvery: 1})
		if err != nil {
			t.Fatal(err)
		}
		if r.EpochS != want.EpochS {
			t.Errorf("row %d: %v s, Predict says %v", i, r.EpochS, want.EpochS)
		}
	}
	path := filepath.Join(t.TempDir(), "v.json")
	if err := v.Write(path); err != nil {
		t.Fatal(err)
	}
	back, err := ReadVolumes(path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := sw.Run(back)
	if err != nil || again[3].EpochS != rows[3].EpochS {
		t.Errorf("from the file: %v", err)
	}
	if _, err := back.NodeVolumes(1); err == nil {
		t.Error("a file without node volumes planned them")
	}
	for name, spoil := range map[string]func(s *Sweep){
		"exchange": func(s *Sweep) { s.Exchange = "three-level" },
		"scale":    func(s *Sweep) { s.Scale = 0 },
		"bits":     func(s *Sweep) { s.Bits = []int{3} },
		"per node": func(s *Sweep) { s.Config.RanksPerNode = 0 },
	} {
		s := sw
		spoil(&s)
		if _, err := s.Run(v); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The automatic exchange of a sweep is train's: two-level for 2 nodes of 2
// ranks, but flat for the max operator's models, which run flat only.
func TestSweepExchangeOfMax(t *testing.T) {
	for kind, want := range map[string]string{"gcn": exchange.ExchangeTwoLevel, "sage-max": exchange.ExchangeFlat, "sage-pool": exchange.ExchangeFlat} {
		s := Sweep{Config: Config{Model: Model{Kind: kind}}}
		if got := s.exchangeOf(2, 4); got != want {
			t.Errorf("%s: %s, want %s", kind, got, want)
		}
	}
}

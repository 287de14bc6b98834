package perfmodel

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/internal/field"
)

// flatProfile has the same rate at every width and shape, so times are
// easy to compute by hand.
func flatProfile() *Profile {
	r := Rates{Threads: 1, Copies: 1, ElemGBs: 10, DropoutGVs: 1, LayerNormGVs: 1, SoftmaxGVs: 1,
		Aggr:  []AggrRate{{Width: 16, Forward: 1, Transpose: 1}, {Width: 256, Forward: 1, Transpose: 1}},
		Gemm:  []GemmRate{{Op: "nn", K: 128, N: 128, GFLOPS: 100}},
		Quant: []QuantRate{{Bits: 2, Width: 128, EncodeGBs: 2, DecodeGBs: 4}}}
	return &Profile{Name: "flat", CoresPerNode: 4, IntraNode: Link{LatencyUS: 0, GBs: 1000, Efficiency: 1}, Rates: []Rates{r}}
}

// twoRanks: each rank owns 1000 nodes and 10000 local edges and receives
// rows from the other (post 300, pre 400, hybrid 200).
func twoRanks() []exchange.RankVolume {
	c := exchange.RowCounts{Pre: 400, Post: 300, Hybrid: 200}
	return []exchange.RankVolume{
		{Rank: 0, Nodes: 1000, TrainNodes: 100, LocalEdges: 10000, CutEdges: 500, Recv: []exchange.PeerRows{{From: 1, Counts: c, CutEdges: 500}}},
		{Rank: 1, Nodes: 1000, TrainNodes: 100, LocalEdges: 10000, CutEdges: 500, Recv: []exchange.PeerRows{{From: 0, Counts: c, CutEdges: 500}}},
	}
}

func gcn() Model {
	return Model{Kind: "gcn", Layers: 2, Hidden: 128, In: 100, Classes: 47, Dropout: true}
}

func TestParseNetwork(t *testing.T) {
	n, err := ParseNetwork("2.5gbit")
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(n.Inter.GBs-0.3125) > 1e-12 || n.Inter.Efficiency != tbfEfficiency || n.Single {
		t.Errorf("2.5gbit = %+v", n.Inter)
	}
	if n, err := ParseNetwork("100mbit"); err != nil || math.Abs(n.Inter.GBs-0.0125) > 1e-12 {
		t.Errorf("100mbit = %+v, %v", n.Inter, err)
	}
	for _, p := range Presets() {
		if _, err := ParseNetwork(p); err != nil {
			t.Errorf("preset %s: %v", p, err)
		}
	}
	for _, bad := range []string{"", "fast", "gbit", "-1gbit", "0mbit", "1tbit", "NaNgbit"} {
		if _, err := ParseNetwork(bad); err == nil {
			t.Errorf("ParseNetwork(%q) accepted", bad)
		}
	}
}

func TestLinkSeconds(t *testing.T) {
	l := Link{LatencyUS: 2, GBs: 1, Efficiency: 0.5}
	if got, want := l.Seconds(3, 1e9), 6e-6+2; math.Abs(got-want) > 1e-12 {
		t.Errorf("Seconds = %v, want %v", got, want)
	}
}

func TestRatesInterpolation(t *testing.T) {
	r := Rates{Aggr: []AggrRate{{Width: 16, Forward: 1, Transpose: 2}, {Width: 256, Forward: 5, Transpose: 6}}}
	// log-linear: width 64 is halfway between 16 and 256 → 3 GUPS.
	if got, want := r.AggrSeconds(1e9, 64, false), 64.0/3; math.Abs(got-want) > 1e-9 {
		t.Errorf("AggrSeconds(64) = %v, want %v", got, want)
	}
	if got, want := r.AggrSeconds(1e9, 8, true), 8.0/2; math.Abs(got-want) > 1e-9 {
		t.Errorf("below the widths: %v, want %v", got, want)
	}
	if got, want := r.AggrSeconds(1e9, 512, false), 512.0/5; math.Abs(got-want) > 1e-9 {
		t.Errorf("above the widths: %v, want %v", got, want)
	}
	r.Quant = []QuantRate{{Bits: 2, Width: 128, EncodeGBs: 2, DecodeGBs: 4}, {Bits: 8, Width: 128, EncodeGBs: 8, DecodeGBs: 8}}
	if got := r.QuantSeconds(1000, 128, 32, false); got != 0 {
		t.Errorf("fp32 rows cost %v to encode", got)
	}
	if got, want := r.QuantSeconds(1000, 128, 4, true), 1000*128*4/4e9; math.Abs(got-want) > 1e-15 { // nearest bits: 2
		t.Errorf("QuantSeconds(4 bits) = %v, want %v", got, want)
	}
}

func TestProfileValidate(t *testing.T) {
	if err := flatProfile().Validate(); err != nil {
		t.Fatal(err)
	}
	for name, spoil := range map[string]func(p *Profile){
		"no cores":      func(p *Profile) { p.CoresPerNode = 0 },
		"no rates":      func(p *Profile) { p.Rates = nil },
		"zero aggr":     func(p *Profile) { p.Rates[0].Aggr[1].Forward = 0 },
		"widths order":  func(p *Profile) { p.Rates[0].Aggr[1].Width = 16 },
		"nan gemm":      func(p *Profile) { p.Rates[0].Gemm[0].GFLOPS = math.NaN() },
		"bad op":        func(p *Profile) { p.Rates[0].Gemm[0].Op = "tt" },
		"bad bits":      func(p *Profile) { p.Rates[0].Quant[0].Bits = 3 },
		"no elementwis": func(p *Profile) { p.Rates[0].ElemGBs = 0 },
		"intra":         func(p *Profile) { p.IntraNode.Efficiency = 2 },
	} {
		p := flatProfile()
		spoil(p)
		if err := p.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	for _, n := range PublishedNames() {
		p, err := FromPublished(n)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	if _, err := FromPublished("cray-1"); err == nil {
		t.Error("unknown hardware accepted")
	}
}

// TestPredictBytesAndComm: the bytes the model moves are the pairs' rows
// at the wire format, per exchange, and the communication of a rank is its
// node's bytes over the link.
func TestPredictBytesAndComm(t *testing.T) {
	net, _ := ParseNetwork("1gbit")
	net.Inter.LatencyUS = 0
	cfg := Config{Model: gcn(), Mode: exchange.ModeHybrid, Bits: 32, Threads: 1, RanksPerNode: 1, CoresPerNode: 1} // no overlap
	p, err := Predict(twoRanks(), flatProfile(), net, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// GCN 100→128→47: forward exchanges at widths 100 and 47 (propagate
	// first, then transform first), backward one at 47 (the first layer
	// needs no input gradient). Two ordered pairs of 200 rows each.
	rows := int64(2 * 200)
	if want := rows * 4 * (100 + 47 + 47); p.TrainBytes != want {
		t.Errorf("TrainBytes = %d, want %d", p.TrainBytes, want)
	}
	if p.EvalBytes != 0 || p.EvalS != 0 {
		t.Errorf("no evaluation asked, got %d bytes, %v s", p.EvalBytes, p.EvalS)
	}
	bw := net.Inter.GBs * 1e9 * net.Inter.Efficiency
	if want := float64(200*4*(100+47+47)) / bw; math.Abs(p.CommS-want) > 1e-12 {
		t.Errorf("CommS = %v, want %v", p.CommS, want)
	}
	if p.InterNodeShare != 1 || p.Nodes != 2 {
		t.Errorf("inter-node share %v on %d nodes, want 1 on 2", p.InterNodeShare, p.Nodes)
	}
	// Post moves 300 rows a pair; int2 moves fewer bytes and adds codec time.
	cfg.Mode = exchange.ModePost
	post, _ := Predict(twoRanks(), flatProfile(), net, cfg)
	if post.TrainBytes != p.TrainBytes*300/200 || !(post.EpochS > p.EpochS) {
		t.Errorf("post: %d bytes, %v s; hybrid %d bytes, %v s", post.TrainBytes, post.EpochS, p.TrainBytes, p.EpochS)
	}
	cfg.Mode, cfg.Bits = exchange.ModeHybrid, 2
	q, _ := Predict(twoRanks(), flatProfile(), net, cfg)
	if !(q.TrainBytes < p.TrainBytes/8) || !(q.QuantS > 0) || !(q.CommS < p.CommS/8) {
		t.Errorf("int2: %d bytes, quant %v, comm %v; fp32 %d bytes, comm %v", q.TrainBytes, q.QuantS, q.CommS, p.TrainBytes, p.CommS)
	}
	// One node: no inter-node bytes, faster than over 1 Gbit/s.
	shm, _ := ParseNetwork("shm")
	cfg.Bits = 32
	one, _ := Predict(twoRanks(), flatProfile(), shm, cfg)
	if one.InterNodeShare != 0 || !(one.EpochS < p.EpochS) || one.RanksPerNode != 2 {
		t.Errorf("shm: share %v, %v s (1gbit %v s), %d ranks a node", one.InterNodeShare, one.EpochS, p.EpochS, one.RanksPerNode)
	}
	// The evaluation pass is a forward: widths 100 and 47.
	cfg.EvalEvery = 1
	ev, _ := Predict(twoRanks(), flatProfile(), net, cfg)
	if want := rows * 4 * (100 + 47); ev.EvalBytes != want || math.Abs(ev.EpochS-ev.TrainS-ev.EvalS) > 1e-12 || !(ev.EvalS > 0) {
		t.Errorf("eval: %d bytes (want %d), epoch %v = train %v + eval %v?", ev.EvalBytes, want, ev.EpochS, ev.TrainS, ev.EvalS)
	}
	if !(ev.Efficiency > 0 && ev.Efficiency <= 1) {
		t.Errorf("efficiency %v", ev.Efficiency)
	}
	// Every second epoch: half the pass, the same training step.
	cfg.EvalEvery = 2
	ev2, _ := Predict(twoRanks(), flatProfile(), net, cfg)
	if math.Abs(ev2.EvalS-ev.EvalS/2) > 1e-12 || ev2.TrainS != ev.TrainS || ev2.EvalBytes != ev.EvalBytes/2 || !(ev2.IdealS < ev.IdealS) {
		t.Errorf("eval every 2: %+v", ev2)
	}
}

// TestPredictImbalance: a rank with twice the edges is the critical rank
// and the other waits for it.
func TestPredictImbalance(t *testing.T) {
	v := twoRanks()
	v[1].LocalEdges *= 4
	shm, _ := ParseNetwork("shm")
	p, err := Predict(v, flatProfile(), shm, Config{Model: gcn(), Bits: 32, Threads: 1, RanksPerNode: 1, CoresPerNode: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p.CriticalRank != 1 || !(p.BusyMaxS > p.BusyMinS) {
		t.Errorf("critical rank %d, busy %v … %v", p.CriticalRank, p.BusyMinS, p.BusyMaxS)
	}
	if !(p.TrainS >= p.BusyMaxS) {
		t.Errorf("the step (%v s) is shorter than its busiest rank (%v s)", p.TrainS, p.BusyMaxS)
	}
	if _, err := ScaleVolumes(v, 1e300); err == nil {
		t.Error("ScaleVolumes by 1e300: no error (counts wrap past int64)")
	}
	if s, err := ScaleVolumes(v, 2); err != nil || s[1].LocalEdges != 2*v[1].LocalEdges || s[0].Recv[0].Counts.Hybrid != 400 || v[0].Recv[0].Counts.Hybrid != 200 {
		t.Errorf("ScaleVolumes: %+v", s[0])
	}
}

func TestPredictRejects(t *testing.T) {
	net, _ := ParseNetwork("10gbit")
	good := Config{Model: gcn(), Bits: 32, Threads: 1, RanksPerNode: 1}
	for _, c := range []struct {
		field string
		spoil func(c *Config)
	}{
		{"perfmodel.Model.Kind", func(c *Config) { c.Model.Kind = "gat" }},
		{"perfmodel.Model.Layers", func(c *Config) { c.Model.Layers = 0 }},
		{"perfmodel.Config.Bits", func(c *Config) { c.Bits = 3 }},
		{"perfmodel.Config.EvalBits", func(c *Config) { c.EvalBits = 16 }},
		{"perfmodel.Config.Threads", func(c *Config) { c.Threads = 0 }},
		{"perfmodel.Config.RanksPerNode", func(c *Config) { c.RanksPerNode = 3 }},
		{"perfmodel.Config.EvalEvery", func(c *Config) { c.EvalEvery = -1 }},
	} {
		cfg := good
		c.spoil(&cfg)
		_, err := Predict(twoRanks(), flatProfile(), net, cfg)
		var fe *field.Error
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: got %v", c.field, err)
		}
	}
	if _, err := Predict(nil, flatProfile(), net, good); err == nil || !strings.Contains(err.Error(), "no ranks") {
		t.Errorf("no ranks: %v", err)
	}
}

// TestCommittedProfiles: profiles/NAME.json is what FromPublished derives
// (regenerate with supergcn bench profile --published NAME --out ...).
func TestCommittedProfiles(t *testing.T) {
	for _, n := range PublishedNames() {
		got, err := LoadProfile("profiles/" + n + ".json")
		if err != nil {
			t.Fatal(err)
		}
		want, _ := FromPublished(n)
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(want)
		if string(a) != string(b) {
			t.Errorf("profiles/%s.json differs from FromPublished(%q): regenerate it", n, n)
		}
	}
}

// TestPredictStaged: the two-level exchange's bytes are its stages' rows,
// inside nodes at IntraBits and between them at Bits; only the inter-node
// stage crosses the network.
func TestPredictStaged(t *testing.T) {
	v := make([]exchange.RankVolume, 4)
	for r := range v {
		v[r] = exchange.RankVolume{Rank: r, Nodes: 1000, TrainNodes: 100, LocalEdges: 10000}
	}
	st := &exchange.ExchangeVolume{
		Gather:  []exchange.Message{{From: 1, To: 0, Rows: 50}, {From: 3, To: 2, Rows: 50}},
		Inter:   []exchange.Message{{From: 0, To: 2, Rows: 100}, {From: 2, To: 0, Rows: 100}},
		Scatter: []exchange.Message{{From: 0, To: 1, Rows: 30}, {From: 2, To: 3, Rows: 30}},
	}
	net, _ := ParseNetwork("1gbit")
	cfg := Config{Model: Model{Kind: "gcn", Layers: 1, In: 10, Classes: 20}, Bits: 32, Threads: 1, RanksPerNode: 2,
		CoresPerNode: 1, Staged: st}
	p, err := Predict(v, flatProfile(), net, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// One layer 10 → 20: one forward exchange at width 10, none backward.
	// gather 100 rows, inter 200, scatter 60
	if want := int64(4 * 10 * (100 + 200 + 60)); p.TrainBytes != want || p.IntraBytes != 4*10*(100+60) {
		t.Errorf("bytes %d (intra %d), want %d (intra %d)", p.TrainBytes, p.IntraBytes, want, 4*10*(100+60))
	}
	if math.Abs(p.InterNodeShare-200.0/360) > 1e-12 || p.Exchange != "staged" {
		t.Errorf("inter-node share %v, exchange %q", p.InterNodeShare, p.Exchange)
	}
	// int2 between nodes, fp32 inside (the default).
	cfg.Bits = 2
	q, _ := Predict(v, flatProfile(), net, cfg)
	if q.IntraBytes != p.IntraBytes || !(q.TrainBytes-q.IntraBytes < (p.TrainBytes-p.IntraBytes)/3) || !(q.CommS < p.CommS) {
		t.Errorf("int2: %d bytes (%d intra), comm %v; fp32 %d (%d), comm %v", q.TrainBytes, q.IntraBytes, q.CommS, p.TrainBytes, p.IntraBytes, p.CommS)
	}
	cfg.Mode = exchange.ModePost
	if _, err := Predict(v, flatProfile(), net, cfg); err == nil {
		t.Error("two-level with post aggregation accepted")
	}
}

// TestPredictOverlap: with a spare core per rank the exchange hides behind
// the aggregation; without one they add up.
func TestPredictOverlap(t *testing.T) {
	net, _ := ParseNetwork("1gbit")
	cfg := Config{Model: gcn(), Bits: 32, Threads: 1, RanksPerNode: 1, CoresPerNode: 1}
	serial, _ := Predict(twoRanks(), flatProfile(), net, cfg)
	cfg.CoresPerNode = 2
	over, _ := Predict(twoRanks(), flatProfile(), net, cfg)
	if serial.Overlap || !over.Overlap || !(over.EpochS < serial.EpochS) {
		t.Errorf("serial %v s (overlap %v), overlapped %v s (overlap %v)", serial.EpochS, serial.Overlap, over.EpochS, over.Overlap)
	}
}

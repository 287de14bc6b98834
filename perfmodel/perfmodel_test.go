package perfmodel

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/internal/field"
	"github.com/supergcn/supergcn/quant"
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
	if got := r.QuantSeconds(1000, 128, quant.Wire{Bits: 32}, false); got != 0 {
		t.Errorf("fp32 rows cost %v to encode", got)
	}
	if got, want := r.QuantSeconds(1000, 128, quant.Wire{Bits: 4}, true), 1000*128*4/4e9; math.Abs(got-want) > 1e-15 { // nearest bits: 2
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
		"tiny gemm":     func(p *Profile) { p.Rates[0].Gemm[0].GFLOPS = 1e-300 },
		"huge aggr":     func(p *Profile) { p.Rates[0].Aggr[0].Forward = 1e300 },
		"tiny intra":    func(p *Profile) { p.IntraNode.GBs = 1e-300 },
		"zero quant":    func(p *Profile) { p.Rates[0].Quant[0].EncodeGBs = 0 },
		"zero copies":   func(p *Profile) { p.Rates[0].Copies = 0 },
		"copies -3":     func(p *Profile) { p.Rates[0].Copies = -3 },
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
	cfg := Config{Model: gcn(), Mode: exchange.ModeHybrid, Wire: wires(32), Threads: 1, RanksPerNode: 1, CoresPerNode: 1} // no overlap
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
	cfg.Mode, cfg.Wire = exchange.ModeHybrid, wires(2)
	q, _ := Predict(twoRanks(), flatProfile(), net, cfg)
	if !(q.TrainBytes < p.TrainBytes/8) || !(q.QuantS > 0) || !(q.CommS < p.CommS/8) {
		t.Errorf("int2: %d bytes, quant %v, comm %v; fp32 %d bytes, comm %v", q.TrainBytes, q.QuantS, q.CommS, p.TrainBytes, p.CommS)
	}
	// One node: no inter-node bytes, faster than over 1 Gbit/s.
	shm, _ := ParseNetwork("shm")
	cfg.Wire = wires(32)
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
	// With the evaluation aggregate cached, the propagate-first first layer
	// exchanges nothing in evaluation: width 47 only.
	cfg.EvalCache = true
	evc, _ := Predict(twoRanks(), flatProfile(), net, cfg)
	if want := rows * 4 * 47; evc.EvalBytes != want || !(evc.EvalS < ev.EvalS) || evc.TrainS != ev.TrainS {
		t.Errorf("eval cache: %d bytes (want %d), eval %v s (uncached %v), train %v (uncached %v)", evc.EvalBytes, want, evc.EvalS, ev.EvalS, evc.TrainS, ev.TrainS)
	}
	// A transform-first first layer (100 → 47) has no aggregate to reuse.
	tfCfg := cfg
	tfCfg.Model = Model{Kind: "gcn", Layers: 1, In: 100, Classes: 47}
	tf1, _ := Predict(twoRanks(), flatProfile(), net, tfCfg)
	if want := rows * 4 * 47; tf1.EvalBytes != want {
		t.Errorf("transform-first, eval cache: %d bytes, want %d", tf1.EvalBytes, want)
	}
	cfg.EvalCache = false
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
	p, err := Predict(v, flatProfile(), shm, Config{Model: gcn(), Wire: wires(32), Threads: 1, RanksPerNode: 1, CoresPerNode: 1})
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
	good := Config{Model: gcn(), Wire: wires(32), Threads: 1, RanksPerNode: 1}
	for _, c := range []struct {
		field string
		spoil func(c *Config)
	}{
		{"perfmodel.Model.Kind", func(c *Config) { c.Model.Kind = "no-such-model" }},
		{"perfmodel.Model.Layers", func(c *Config) { c.Model.Layers = 0 }},
		{"perfmodel.Config.Wire[forward]", func(c *Config) { c.Wire[quant.Forward].Bits = 3 }},
		{"perfmodel.Config.Wire[eval]", func(c *Config) { c.Wire[quant.Eval].Bits = 16 }},
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
// inside nodes at the Intra wire and between them at the Forward wire; only the inter-node
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
	cfg := Config{Model: Model{Kind: "gcn", Layers: 1, In: 10, Classes: 20}, Wire: wires(32), Threads: 1, RanksPerNode: 2,
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
	if math.Abs(p.InterNodeShare-200.0/360) > 1e-12 || p.Exchange != exchange.ExchangeTwoLevel {
		t.Errorf("inter-node share %v, exchange %q", p.InterNodeShare, p.Exchange)
	}
	// int2 between nodes, fp32 inside (the default).
	cfg.Wire = wires(2)
	q, _ := Predict(v, flatProfile(), net, cfg)
	if q.IntraBytes != p.IntraBytes || !(q.TrainBytes-q.IntraBytes < (p.TrainBytes-p.IntraBytes)/3) || !(q.CommS < p.CommS) {
		t.Errorf("int2: %d bytes (%d intra), comm %v; fp32 %d (%d), comm %v", q.TrainBytes, q.IntraBytes, q.CommS, p.TrainBytes, p.IntraBytes, p.CommS)
	}
	cfg.Mode = exchange.ModePost
	if _, err := Predict(v, flatProfile(), net, cfg); err == nil {
		t.Error("two-level with post aggregation accepted")
	}
}

// TestPredictOverlap: with a spare core per rank the exchange's
// shared-memory copies run beside the local product; without one they
// share the rank's core and add up. Time on the wire hides the local
// product either way (the rank waits on the network, its core is free).
func TestPredictOverlap(t *testing.T) {
	shm, _ := ParseNetwork("shm")
	prof := flatProfile()
	prof.IntraNode.GBs = 0.1 // copies as long as the local product
	cfg := Config{Model: gcn(), Wire: wires(32), Threads: 1, RanksPerNode: 2, CoresPerNode: 2}
	serial, _ := Predict(twoRanks(), prof, shm, cfg)
	cfg.CoresPerNode = 4
	over, _ := Predict(twoRanks(), prof, shm, cfg)
	if serial.Overlap || !over.Overlap || !(over.EpochS < serial.EpochS) {
		t.Errorf("serial %v s (overlap %v), overlapped %v s (overlap %v)", serial.EpochS, serial.Overlap, over.EpochS, over.Overlap)
	}
	// 100 Mbit/s: the wire time of every exchange exceeds the local
	// product, so twice the local edges cost nothing, with or without a
	// spare core; in shared memory they cost their aggregation time.
	slow, _ := ParseNetwork("100mbit")
	cfg = Config{Model: gcn(), Wire: wires(32), Threads: 1, RanksPerNode: 1, CoresPerNode: 1}
	base, _ := Predict(twoRanks(), flatProfile(), slow, cfg)
	v := twoRanks()
	for r := range v {
		v[r].LocalEdges *= 2
	}
	more, _ := Predict(v, flatProfile(), slow, cfg)
	// the local product is work (IdealS) but hidden: no timer sees it
	if math.Abs(more.TrainS-base.TrainS) > 1e-12 || !(more.IdealS > base.IdealS) || math.Abs(more.AggrS-base.AggrS) > 1e-15 {
		t.Errorf("100mbit: local edges ×2 changed the step %v → %v s (aggr %v → %v, work %v → %v)", base.TrainS, more.TrainS, base.AggrS, more.AggrS, base.IdealS, more.IdealS)
	}
	cfg.RanksPerNode = 2
	baseShm, _ := Predict(twoRanks(), flatProfile(), shm, cfg)
	moreShm, _ := Predict(v, flatProfile(), shm, cfg)
	// GCN: three exchanges at widths 100, 47, 47 (backward transposed),
	// 10000 more local edges each, at 1 GUPS
	if want := 10000 * (100 + 47 + 47) / 1e9; math.Abs(moreShm.TrainS-baseShm.TrainS-want) > 1e-12 {
		t.Errorf("shm: local edges ×2 added %v s, want %v", moreShm.TrainS-baseShm.TrainS, want)
	}
}

// TestExchangeWork: the aggregation of an exchange counts the local
// product with GCN's self-loops, the cut edges, one entry a boundary row
// and GCN's two row scalings, each a pass of 8 bytes a value.
func TestExchangeWork(t *testing.T) {
	shm, _ := ParseNetwork("shm")
	m := Model{Kind: "gcn", Layers: 1, In: 16, Classes: 32} // one layer, transform first: one exchange at width 16... (out > in: propagate first at 16)
	cfg := Config{Model: m, Mode: exchange.ModePost, Wire: wires(32), Threads: 1, RanksPerNode: 2, CoresPerNode: 1}
	p, err := Predict(twoRanks(), flatProfile(), shm, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// per rank: local 10000 + 1000 self-loops, cut 500, 300 post rows
	// sent (one entry each), at 1 GUPS × width 16; scalings 2 × 8 B ×
	// 1000 × 16 at 10 GB/s. The shared-memory copy (cpu) shares the core
	// with the local product, so the transfer's wall (CommS) is twice
	// its CPU and the local product left for AggrS is cpu shorter.
	cpu := 300 * 16 * 4 / 1000e9
	want := float64(10000+1000+500+300)*16/1e9 + 2*8*1000*16/10e9 - cpu
	if math.Abs(p.AggrS-want) > 1e-15 || math.Abs(p.CommS-2*cpu) > 1e-15 {
		t.Errorf("AggrS = %v, want %v; CommS = %v, want %v", p.AggrS, want, p.CommS, 2*cpu)
	}
	// SAGE (mean) scales one side only; pre mode sends 400 rows and adds
	// the 400 received ones.
	cfg.Model.Kind, cfg.Mode = "sage", exchange.ModePre
	q, _ := Predict(twoRanks(), flatProfile(), shm, cfg)
	if want := float64(10000+500+400+400)*16/1e9 + 8*1000*16/10e9 - 400*16*4/1000e9; math.Abs(q.AggrS-want) > 1e-15 {
		t.Errorf("sage pre: AggrS = %v, want %v", q.AggrS, want)
	}
	// With the exchange pattern measured, the rows go at its gather rate
	// and the codec at its rates.
	prof := flatProfile()
	prof.Rates[0].Exchange = &ExchangeRates{Rows: 100, Peers: 1,
		RowRates: []RowRate{{Width: 16, GatherGBs: 0.5, ScatterGBs: 0.25}},
		Quant:    []QuantRate{{Bits: 2, Width: 16, EncodeGBs: 0.1, DecodeGBs: 0.2}}}
	cfg.Model.Kind, cfg.Mode = "gcn", exchange.ModePost
	x, _ := Predict(twoRanks(), prof, shm, cfg)
	if want := float64(10000+1000+500)*16/1e9 + 300*16*4/0.5e9 + 2*8*1000*16/10e9 - cpu; math.Abs(x.AggrS-want) > 1e-15 {
		t.Errorf("exchange rates: AggrS = %v, want %v", x.AggrS, want)
	}
	cfg.Wire = wires(2)
	cfg.Wire[quant.Intra] = quant.Wire{Bits: 2} // shared memory: the codec runs only when asked for inside nodes
	y, _ := Predict(twoRanks(), prof, shm, cfg)
	// 300 rows encoded and 300 decoded, width 16: encoding (1.92e-4 s)
	// shares the core with the local product (11000 entries × 16 at
	// 1 GUPS, 1.76e-4 s), so its wall is 1.92e-4 + 1.76e-4 and nothing of
	// the local product is left to share the decoding (0.96e-4 s)
	if want := 300*16*4/0.1e9 + 11000*16/1e9 + 300*16*4/0.2e9; math.Abs(y.QuantS-want) > 1e-15 {
		t.Errorf("exchange codec: QuantS = %v, want %v", y.QuantS, want)
	}
}

// loadedProfile: one thread measured with 4 copies (the node full) and,
// in Loads, with 1 and 2 copies, each faster than the fuller one.
func loadedProfile() *Profile {
	p := flatProfile()
	p.Rates[0].Copies = 4
	for _, c := range []int{2, 1} {
		r := p.Rates[0]
		r.Copies = c
		r.Aggr = []AggrRate{{Width: 16, Forward: 4 / float64(c), Transpose: 4 / float64(c)}}
		p.Loads = append(p.Loads, r)
	}
	two := p.Rates[0]
	two.Threads = 2
	p.Rates = append(p.Rates, two)
	return p
}

func TestRatesFor(t *testing.T) {
	p := loadedProfile()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ threads, busy, copies, ratesThreads int }{
		{1, 1, 1, 1}, {1, 2, 2, 1}, {1, 3, 4, 1}, {1, 4, 4, 1}, {1, 16, 4, 1}, {1, 0, 1, 1},
		{2, 1, 4, 2}, // no loads measured at 2 threads: the node full
		{3, 1, 4, 2}, // 3 threads take the 2-thread entry
	} {
		r, _ := p.RatesFor(c.threads, c.busy)
		if r.Copies != c.copies || r.Threads != c.ratesThreads {
			t.Errorf("RatesFor(%d, %d) = %d threads × %d copies, want %d × %d", c.threads, c.busy, r.Threads, r.Copies, c.ratesThreads, c.copies)
		}
	}
	// A profile without loads (every profile before them) answers Rates.
	old := flatProfile()
	if r, ok := old.RatesFor(1, 1); r != &old.Rates[0] || !ok {
		t.Errorf("old profile: %+v", r)
	}
	// Predict takes the rate of the ranks busy on the host.
	shm, _ := ParseNetwork("shm")
	cfg := Config{Model: gcn(), Wire: wires(32), Threads: 1, RanksPerNode: 1, CoresPerNode: 1}
	full, _ := Predict(twoRanks(), p, shm, cfg) // shm: both ranks busy → 2 copies
	cfg.RanksPerHost = 1
	alone, _ := Predict(twoRanks(), p, shm, cfg)
	cfg.RanksPerHost = 4
	busy, _ := Predict(twoRanks(), p, shm, cfg)
	if full.ProfileCopies != 2 || alone.ProfileCopies != 1 || busy.ProfileCopies != 4 {
		t.Errorf("copies used: default %d, host 1 %d, host 4 %d; want 2, 1, 4", full.ProfileCopies, alone.ProfileCopies, busy.ProfileCopies)
	}
	if !(alone.AggrS < full.AggrS && full.AggrS < busy.AggrS) {
		t.Errorf("aggregation %v (1 copy), %v (2), %v (4): want ascending", alone.AggrS, full.AggrS, busy.AggrS)
	}
	// More threads than the host's cores: the ranks time-share them.
	// flatProfile has 4 cores and one entry: 2 ranks × 2 threads fill
	// them, 2 × 4 run at half speed.
	cfg = Config{Model: gcn(), Wire: wires(32), Threads: 2, RanksPerNode: 2, CoresPerNode: 8}
	fits, _ := Predict(twoRanks(), flatProfile(), shm, cfg)
	cfg.Threads = 4
	half, _ := Predict(twoRanks(), flatProfile(), shm, cfg)
	if fits.Oversubscription != 1 || half.Oversubscription != 2 || math.Abs(half.DenseS-2*fits.DenseS) > 1e-15 || math.Abs(half.IdealS-2*fits.IdealS) > 1e-15 {
		t.Errorf("oversubscription %v → %v, dense %v → %v, work %v → %v: want 1 → 2 and twice the times",
			fits.Oversubscription, half.Oversubscription, fits.DenseS, half.DenseS, fits.IdealS, half.IdealS)
	}
	cfg = Config{Model: gcn(), Wire: wires(32), Threads: 1, RanksPerNode: 1, CoresPerNode: 1, RanksPerHost: -1}
	var fe *field.Error
	if _, err := Predict(twoRanks(), p, shm, cfg); !errors.As(err, &fe) || fe.Field != "perfmodel.Config.RanksPerHost" {
		t.Errorf("RanksPerHost -1: %v", err)
	}
	for name, spoil := range map[string]func(p *Profile){
		"load of unmeasured threads": func(p *Profile) { p.Loads[0].Threads = 8 },
		"load of no copies":          func(p *Profile) { p.Loads[0].Copies = 0 },
		"load measured twice":        func(p *Profile) { p.Loads[1].Copies = 2 },
		"load repeats rates":         func(p *Profile) { p.Loads[0].Copies = 4 },
		"load bad rate":              func(p *Profile) { p.Loads[1].Aggr[0].Forward = math.Inf(1) },
		"exchange no rows": func(p *Profile) {
			p.Rates[0].Exchange = &ExchangeRates{Rows: 0, Peers: 1, RowRates: []RowRate{{16, 1, 1, 0}}, Quant: p.Rates[0].Quant}
		},
		"exchange zero gather": func(p *Profile) {
			p.Rates[0].Exchange = &ExchangeRates{Rows: 1, Peers: 1, RowRates: []RowRate{{16, 0, 1, 0}}, Quant: p.Rates[0].Quant}
		},
		"exchange no quant": func(p *Profile) {
			p.Rates[0].Exchange = &ExchangeRates{Rows: 1, Peers: 1, RowRates: []RowRate{{16, 1, 1, 0}}}
		},
	} {
		p := loadedProfile()
		spoil(p)
		if err := p.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestLoadProfileFiles: profiles written before the optional fields load
// as they are; malformed JSON is reported with the file and the line and
// column; a bad value with the file and the field.
func TestLoadProfileFiles(t *testing.T) {
	// The node's measured profile has the optional fields and loads with them.
	if p, err := LoadProfile("../docs/data/profile-xeon16-prescott.json"); err != nil {
		t.Errorf("node profile: %v", err)
	} else if p.Loads == nil || p.Rates[0].Exchange == nil {
		t.Errorf("node profile: loads or exchange rates missing")
	}
	for _, f := range []string{"../docs/data/profile-dev-2c.json", "profiles/a64fx.json", "profiles/xeon-gold-6148.json"} {
		p, err := LoadProfile(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if p.Loads != nil || p.Rates[0].Exchange != nil {
			t.Errorf("%s: loads or exchange rates appeared", f)
		}
		if r, _ := p.RatesFor(1, 16); r != &p.Rates[0] {
			t.Errorf("%s: RatesFor(1, 16) is not rates[0]", f)
		}
	}
	dir := t.TempDir()
	good, _ := json.MarshalIndent(loadedProfile(), "", "  ")
	for _, c := range []struct{ name, text, want string }{
		{"syntax.json", "{\n  \"name\": \"x\",\n  \"cores_per_node\": 4,,\n}", "syntax.json: line 3, column 23: invalid character ','"},
		{"type.json", "{\"name\": \"x\",\n\"cores_per_node\": \"four\"}", "type.json: line 2, column 24: json: cannot unmarshal string"},
		{"truncated.json", "{\"name\": \"x\",\n\"rates\": [", "truncated.json: line 2, column 10: unexpected end of JSON input"},
		{"loads.json", strings.Replace(string(good), `"threads": 1,
      "copies": 2`, `"threads": 3,
      "copies": 2`, 1), "loads.json: loads[0]: threads 3, want a thread count of rates"},
	} {
		path := dir + "/" + c.name
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadProfile(path)
		if err == nil || !strings.HasPrefix(err.Error(), dir+"/") || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line containing %q", c.name, err, c.want)
		}
	}
	// The profile with loads and exchange rates round-trips.
	p := loadedProfile()
	p.Rates[0].Exchange = &ExchangeRates{Rows: 8, Peers: 2, RowRates: []RowRate{{16, 1, 2, 0}}, Quant: p.Rates[0].Quant}
	b, _ := json.Marshal(p)
	path := dir + "/new.json"
	os.WriteFile(path, b, 0o644)
	q, err := LoadProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	if b2, _ := json.Marshal(q); string(b2) != string(b) {
		t.Errorf("round trip: %s\nwant %s", b2, b)
	}
}

// TestSharedCore: the exchange's driver and the local product on one core
// (no spare core per rank) each get half of it while both run; with a
// spare core they run side by side. Hand-checked times.
func TestSharedCore(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	newP := func(over bool) *predictor {
		return &predictor{over: over, share: 1, cfg: Config{Threads: 1}, pending: make([]float64, 1), aggr: make([]float64, 1),
			local: make([]float64, 1), quant: make([]float64, 1), comm: make([]float64, 1), dense: make([]float64, 1)}
	}
	for _, c := range []struct{ threads, share, cpu, local, wall, left float64 }{
		{1, 1, 0.1, 0.3, 0.2, 0.2}, {1, 1, 0.3, 0.1, 0.4, 0}, {1, 1, 0.2, 0, 0.2, 0}, {1, 1, 0, 0.5, 0, 0.5},
		// 0.1 shared at a factor 1.5: 0.1·2·1.5 = 0.3, plus 0.2 alone
		{1, 1.5, 0.3, 0.1, 0.5, 0},
		// 3 threads, the driver on one (MPI's copies): 4 threads on 3
		// cores, 3/4 speed each while both run
		{3, 1, 0.3, 0.6, 0.4, 0.3},
		// one thread, a measured factor below 1 (copies out of step):
		// taken as 1, CPU conserved: 0.1·2 + 0.2 alone
		{1, 0.76, 0.3, 0.1, 0.4, 0},
		// 3 threads keep a factor below 1: 0.3 shared at 0.5·4/3
		{3, 0.5, 0.3, 0.6, 0.2, 0.3},
	} {
		p := newP(false)
		p.cfg.Threads, p.share = int(c.threads), c.share
		w, l := p.sharedWall(c.cpu, c.local, 1)
		if !near(w, c.wall) || !near(l, c.left) || (c.threads == 1 && c.share <= 1 && !near(w+l, c.cpu+c.local)) {
			t.Errorf("sharedWall(%v, %v) with %v threads, factor %v = %v, %v; want %v, %v", c.cpu, c.local, c.threads, c.share, w, l, c.wall, c.left)
		}
	}
	type parts struct{ pending, comm, quant, aggr, local float64 }
	got := func(p *predictor) parts { return parts{p.pending[0], p.comm[0], p.quant[0], p.aggr[0], p.local[0]} }
	for _, c := range []struct {
		name                               string
		over                               bool
		local, done, cpu, wire, dec, after float64
		want                               parts
	}{
		// local 0.5 of which 0.1 ran beside the encoding; the copies (0.05)
		// share the core (wall 0.1), the wire (0.2) does not: 0.15 more of
		// the local product runs during the transfer; decoding 0.1 shares
		// with the 0.25 left (wall 0.2), 0.15 is left for aggr with after.
		{"no spare core, wire", false, 0.5, 0.1, 0.05, 0.2, 0.1, 0.02, parts{0.57, 0.2, 0.2, 0.17, 0.15}},
		// CPU-bound (no wire): the wall is the CPU of the rest of the local
		// product, the copies and the decoding.
		{"no spare core, shm", false, 0.5, 0.1, 0.05, 0, 0.1, 0, parts{0.55, 0.1, 0.2, 0.25, 0.25}},
		// a spare core: the transfer and the decoding run at full speed
		// beside the local product, 0.2 of which is left after them.
		{"spare core", true, 0.5, 0, 0.05, 0.2, 0.1, 0.02, parts{0.52, 0.2, 0.1, 0.22, 0.2}},
		{"spare core, hidden", true, 0.2, 0, 0.05, 0.2, 0.1, 0.02, parts{0.32, 0.2, 0.1, 0.02, 0}},
	} {
		p := newP(c.over)
		// one stage moving copies and network rows at once, as the flat exchange's
		cs := []stageCost{{enc: []float64{0}, dec: []float64{c.dec}, copy: []float64{c.cpu}, wire: []float64{c.wire}}}
		p.addStages(0, []stage{{}}, cs, 10, c.local, c.done, c.after)
		g := got(p)
		if !near(g.pending, c.want.pending) || !near(g.comm, c.want.comm) || !near(g.quant, c.want.quant) || !near(g.aggr, c.want.aggr) || !near(g.local, c.want.local) {
			t.Errorf("%s: %+v, want %+v", c.name, g, c.want)
		}
		if !near(p.idealWork, c.local+c.after) {
			t.Errorf("%s: work %v, want the whole local product and after, %v", c.name, p.idealWork, c.local+c.after)
		}
	}
	// the codec runs on the rank's T threads: 2T threads on T cores, half
	// speed each while both run, whatever T (CPU conserved)
	p4 := newP(false)
	p4.cfg.Threads = 4
	if w, l := p4.sharedWall(0.1, 0.3, 4); !near(w, 0.2) || !near(l, 0.2) {
		t.Errorf("codec on 4 threads: %v, %v; want 0.2, 0.2", w, l)
	}
	// encoding: beside the local product without a spare core, alone with one
	p := newP(false)
	if done := p.sharedEncode(0, 0.1, 0.5); !near(done, 0.1) || !near(p.quant[0], 0.2) || !near(p.pending[0], 0.2) {
		t.Errorf("shared encode: done %v, quant %v, pending %v; want 0.1, 0.2, 0.2", done, p.quant[0], p.pending[0])
	}
	p = newP(true)
	if done := p.sharedEncode(0, 0.1, 0.5); !near(done, 0.1) || !near(p.quant[0], 0.1) {
		t.Errorf("spare core encode: done %v, quant %v; want 0.1, 0.1 (side by side)", done, p.quant[0])
	}
	// a spare core and 3 threads: the codec's 3 and the local product's 3
	// on 4 cores, 2/3 speed each; MPI's one thread fits
	p = newP(true)
	p.cfg.Threads = 3
	if w, _ := p.sharedWall(0.1, 0.5, 3); !near(w, 0.15) {
		t.Errorf("spare core, codec on 3 threads: wall %v, want 0.15", w)
	}
	if w, _ := p.sharedWall(0.1, 0.5, 1); !near(w, 0.1) {
		t.Errorf("spare core, copies: wall %v, want 0.1", w)
	}
}

// TestShareFactor: a measured ShareFactor lengthens the shared windows of
// a rank without a spare core (and only those); bad values are refused,
// and a profile without it (measured before the factor existed) takes 1.
func TestShareFactor(t *testing.T) {
	shm, _ := ParseNetwork("shm")
	prof := func(f float64) *Profile {
		p := flatProfile()
		p.Rates[0].Exchange = &ExchangeRates{Rows: 100, Peers: 1, ShareFactor: f,
			RowRates: []RowRate{{Width: 16, GatherGBs: 0.5, ScatterGBs: 0.25}},
			Quant:    []QuantRate{{Bits: 2, Width: 16, EncodeGBs: 0.1, DecodeGBs: 0.2}}}
		return p
	}
	if (&ExchangeRates{}).Share() != 1 || (*ExchangeRates)(nil).Share() != 1 || prof(1.3).Rates[0].Exchange.Share() != 1.3 {
		t.Error("Share: want 1 when not measured, else the factor")
	}
	m := Model{Kind: "gcn", Layers: 1, In: 16, Classes: 32}
	cfg := Config{Model: m, Mode: exchange.ModePost, Wire: wires(2), Threads: 1, RanksPerNode: 2, CoresPerNode: 1}
	cfg.Wire[quant.Intra] = quant.Wire{Bits: 2} // the codec inside the node
	one, _ := Predict(twoRanks(), prof(0), shm, cfg)
	two, err := Predict(twoRanks(), prof(2), shm, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// encoding 1.92e-4 s shares with the local product (1.76e-4 s): the
	// shared 1.76e-4 of each costs 2·1.76e-4 at factor 1, 4·1.76e-4 at 2
	if d := two.QuantS - one.QuantS; math.Abs(d-2*11000*16/1e9) > 1e-15 {
		t.Errorf("factor 2 added %v s of encoding wall, want %v", d, 2*11000*16/1e9)
	}
	cfg.CoresPerNode = 8 // a spare core: nothing shared
	a, _ := Predict(twoRanks(), prof(0), shm, cfg)
	b, _ := Predict(twoRanks(), prof(2), shm, cfg)
	if a.EpochS != b.EpochS {
		t.Errorf("spare core: factor 2 changed the epoch %v → %v", a.EpochS, b.EpochS)
	}
	for _, bad := range []float64{101, math.NaN(), math.Inf(1), -1} {
		if err := prof(bad).Validate(); err == nil || !strings.Contains(err.Error(), "share_factor") {
			t.Errorf("share_factor %v: %v", bad, err)
		}
	}
}

// TestHaloRate: the cut-edge products go at the profile's HaloGUPS when
// every row rate has it (interpolated in log width), else at the
// aggregation rate, as profiles without the rate are charged.
func TestHaloRate(t *testing.T) {
	r := flatProfile().Rates[0]
	r.Exchange = &ExchangeRates{Rows: 100, Peers: 1, Quant: r.Quant,
		RowRates: []RowRate{{Width: 16, GatherGBs: 1, ScatterGBs: 1, HaloGUPS: 0.5}, {Width: 64, GatherGBs: 1, ScatterGBs: 1, HaloGUPS: 2}}}
	// width 32 is halfway between 16 and 64 in log width: 1.25 GUPS
	if got, want := r.HaloSeconds(1000, 32, false), 1000*32/1.25e9; math.Abs(got-want) > 1e-18 {
		t.Errorf("HaloSeconds(1000, 32) = %v, want %v", got, want)
	}
	if got, want := r.HaloSeconds(1000, 8, true), 1000*8/0.5e9; math.Abs(got-want) > 1e-18 {
		t.Errorf("HaloSeconds below the widths = %v, want %v (the nearest width's rate)", got, want)
	}
	if got := r.Scaled(0.5).HaloSeconds(1000, 16, false); math.Abs(got-1000*16/0.25e9) > 1e-18 {
		t.Errorf("Scaled(0.5): %v, want the halved rate's %v", got, 1000*16/0.25e9)
	}
	r.Exchange.RowRates[1].HaloGUPS = 0 // one width without it: not measured
	if got, want := r.HaloSeconds(1000, 32, false), r.AggrSeconds(1000, 32, false); got != want {
		t.Errorf("partial halo rates: %v, want the aggregation's %v", got, want)
	}

	// In a prediction: GCN, one propagate-first layer at width 16, post
	// mode, two ranks in shared memory (TestExchangeWork's setting); the
	// 500 cut edges of each rank now take 500·16/0.25e9 s instead of
	// 500·16/1e9.
	shm, _ := ParseNetwork("shm")
	cfg := Config{Model: Model{Kind: "gcn", Layers: 1, In: 16, Classes: 32}, Mode: exchange.ModePost, Wire: wires(32),
		Threads: 1, RanksPerNode: 2, CoresPerNode: 1}
	prof := flatProfile()
	prof.Rates[0].Exchange = &ExchangeRates{Rows: 100, Peers: 1, Quant: prof.Rates[0].Quant,
		RowRates: []RowRate{{Width: 16, GatherGBs: 0.5, ScatterGBs: 0.25, HaloGUPS: 0.25}}}
	p, err := Predict(twoRanks(), prof, shm, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cpu := 300 * 16 * 4 / 1000e9
	want := float64(10000+1000)*16/1e9 + 500*16/0.25e9 + 300*16*4/0.5e9 + 2*8*1000*16/10e9 - cpu
	if math.Abs(p.AggrS-want) > 1e-15 {
		t.Errorf("AggrS = %v, want %v", p.AggrS, want)
	}

	// A negative or infinite halo rate is refused, naming its field.
	prof.Rates[0].Exchange.RowRates[0].HaloGUPS = -1
	if err := prof.Validate(); err == nil || !strings.Contains(err.Error(), "halo_gups") {
		t.Errorf("negative halo_gups: %v", err)
	}
}

// TestStagedAggregation: the two-level exchange's aggregation is its own
// products' (exchange.forwardTwoLevel, backwardTwoLevel), each row at the
// profile's gather or scatter rate. Four ranks as two nodes of two, SAGE
// (no self-loops, one row scaling a direction) with no local edges, so
// nothing shares a core and every term adds up by hand.
func TestStagedAggregation(t *testing.T) {
	v := make([]exchange.RankVolume, 4)
	for r := range v {
		v[r] = exchange.RankVolume{Rank: r, Nodes: 1000, TrainNodes: 100}
	}
	// ranks 0 and 2 receive 20 flat rows from their node peer; the
	// gather stage brings them 50 rows, so 30 are partial sums
	v[0].Recv = []exchange.PeerRows{{From: 1, Counts: exchange.RowCounts{Hybrid: 20}}}
	v[2].Recv = []exchange.PeerRows{{From: 3, Counts: exchange.RowCounts{Hybrid: 20}}}
	st := &exchange.ExchangeVolume{
		Gather:  []exchange.Message{{From: 1, To: 0, Rows: 50}, {From: 3, To: 2, Rows: 50}},
		Inter:   []exchange.Message{{From: 0, To: 2, Rows: 100}, {From: 2, To: 0, Rows: 100}},
		Scatter: []exchange.Message{{From: 0, To: 1, Rows: 30}, {From: 2, To: 3, Rows: 30}},
	}
	prof := flatProfile()
	prof.Rates[0].Exchange = &ExchangeRates{Rows: 100, Peers: 1, Quant: prof.Rates[0].Quant,
		RowRates: []RowRate{{Width: 10, GatherGBs: 0.5, ScatterGBs: 0.25}}}
	net, _ := ParseNetwork("1gbit")
	// one transform-first layer 20 → 10: a forward and a backward
	// exchange at width 10
	cfg := Config{Model: Model{Kind: "sage", Layers: 1, In: 20, Classes: 10}, Mode: exchange.ModeHybrid, Wire: wires(32),
		Threads: 1, RanksPerNode: 2, CoresPerNode: 1, Staged: st}
	p, err := Predict(v, prof, net, cfg)
	if err != nil {
		t.Fatal(err)
	}
	row := 10 * 4.0 // bytes of a row
	scale := 8 * 1000 * 10 / 10e9
	// rank 0 forward: S1 (0 rows) and S2x (100) before the post; S2r adds
	// the 30 partial sums after the gather stage, S3 copies the 30 rows
	// it forwards after the inter-node stage (gather rate); the output
	// scaling. Backward: Hᵀ writes its 50 + 100 + 0 received rows; S3ᵀ
	// adds the 30 forwarded rows' gradients back, S2rᵀ the 30 partial
	// sums' (scatter rate); the input scaling.
	fwd := (100+30+30)*row/0.5e9 + scale
	bwd := 150*row/0.5e9 + (30+30)*row/0.25e9 + scale
	if p.CriticalRank != 0 || math.Abs(p.AggrS-(fwd+bwd)) > 1e-15 || p.AggrLocalS != 0 {
		t.Errorf("critical rank %d, AggrS = %v (local %v), want rank 0, %v", p.CriticalRank, p.AggrS, p.AggrLocalS, fwd+bwd)
	}
	// the flat rows of a same-node peer are no partial sums: without them
	// rank 0 adds 50 partial sums each way
	v[0].Recv = nil
	q, _ := Predict(v, prof, net, cfg)
	if want := fwd + bwd + 20*row/0.5e9 + 20*row/0.25e9; math.Abs(q.AggrS-want) > 1e-15 {
		t.Errorf("no flat rows: AggrS = %v, want %v", q.AggrS, want)
	}
}

// TestStagedWalk: the stages run one after another on the exchange's
// driver beside the local product (one thread, no spare core): intra-node
// copies, the work between the stages and the codec share the core,
// wire time leaves it to the local product.
func TestStagedWalk(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	p := &predictor{share: 1, cfg: Config{Threads: 1}, pending: make([]float64, 1), aggr: make([]float64, 1),
		local: make([]float64, 1), quant: make([]float64, 1), comm: make([]float64, 1), dense: make([]float64, 1)}
	// local 0.5, 0.1 of it beside the first encoding: 0.4 left.
	// stage 0, intra 0.05: wall 0.1, 0.35 left; between 0.02: wall 0.04,
	// 0.33 left; stage 1 encodes 0.04 (wall 0.08, 0.29 left), 0.2 on the
	// wire (0.09 left), decodes 0.06 (wall 0.12, 0.03 left); between
	// 0.03: wall 0.06, none left; stage 2, intra 0.05 alone.
	// (The folds are 20 and 30 rows at 1 ms a row.)
	p.rates = &Rates{Exchange: &ExchangeRates{RowRates: []RowRate{{Width: 1, GatherGBs: 4e-6, ScatterGBs: 4e-6}}}}
	stages := []stage{{floor: true, fold: []int64{20}}, {floor: true, fold: []int64{30}}, {floor: true}}
	one := func(enc, dec, copy, wire float64) stageCost {
		return stageCost{enc: []float64{enc}, dec: []float64{dec}, copy: []float64{copy}, wire: []float64{wire}}
	}
	cs := []stageCost{one(0.03, 0, 0.05, 0), one(0.04, 0.06, 0, 0.2), one(0, 0, 0.05, 0)}
	p.addStages(0, stages, cs, 1, 0.5, 0.1, 0.01)
	if !near(p.comm[0], 0.35) || !near(p.quant[0], 0.2) || !near(p.aggr[0], 0.11) || !near(p.local[0], 0) || !near(p.pending[0], 0.66) {
		t.Errorf("comm %v quant %v aggr %v (local %v) pending %v; want 0.35 0.2 0.11 (0) 0.66", p.comm[0], p.quant[0], p.aggr[0], p.local[0], p.pending[0])
	}
	// CPU conserved: 0.4 local + 0.1 copies + 0.05 between + 0.1 codec +
	// 0.01 after, the wire all hidden
	if !near(p.idealWork, 0.5+0.05+0.01) {
		t.Errorf("work %v, want 0.56", p.idealWork)
	}
}

// TestValidateVolumes: volumes beyond the partition they describe (a rank
// with 2^62 edges, more rows than nodes) are refused, naming the entry.
func TestValidateVolumes(t *testing.T) {
	good := []exchange.RankVolume{{Rank: 0, Nodes: 5, LocalEdges: 8, CutEdges: 2,
		Recv: []exchange.PeerRows{{From: 1, Counts: exchange.RowCounts{Pre: 1, Post: 2, Hybrid: 1}, CutEdges: 2}}}, {Rank: 1, Nodes: 5}}
	if err := ValidateVolumes(good, 10, 20); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		edit         func(v []exchange.RankVolume)
		nodes, edges int64
		want         string
	}{
		"2^62 edges":   {func(v []exchange.RankVolume) { v[1].LocalEdges = 1 << 62 }, 10, 20, "volumes[1]"},
		"rows > nodes": {func(v []exchange.RankVolume) { v[0].Recv[0].Counts.Post = 11 }, 10, 20, "volumes[0].recv[0]"},
		"huge graph":   {func([]exchange.RankVolume) {}, 10, 1 << 62, "partition: "},
	} {
		v := append([]exchange.RankVolume(nil), good...)
		v[0].Recv = append([]exchange.PeerRows(nil), good[0].Recv...)
		c.edit(v)
		if err := ValidateVolumes(v, c.nodes, c.edges); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// wires is a Config.Wire of b bits forward (the other roles' defaults).
func wires(b int) quant.Wires { return quant.Wires{quant.Forward: {Bits: b}} }

// TestFlatIntraWire: the flat exchange charges the rows between ranks of
// one node at the Intra wire (fp32 unless set) and the others at the
// role's: in shared memory int2 costs no codec and moves fp32 bytes, so it
// predicts the fp32 epoch; on a network with a rank a node every row is
// int2; with the Intra wire int2 too the shared-memory rows pay the codec.
func TestFlatIntraWire(t *testing.T) {
	shm, _ := ParseNetwork("shm")
	prof := flatProfile()
	cfg := Config{Model: gcn(), Mode: exchange.ModeHybrid, Wire: wires(32), Threads: 1, RanksPerNode: 2, CoresPerNode: 4}
	fp, err := Predict(twoRanks(), prof, shm, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Wire = wires(2)
	q, _ := Predict(twoRanks(), prof, shm, cfg)
	if q.EpochS != fp.EpochS || q.QuantS != 0 || q.TrainBytes != fp.TrainBytes || q.IntraBytes != q.TrainBytes {
		t.Errorf("shm int2: epoch %v quant %v bytes %d (intra %d); fp32 epoch %v bytes %d", q.EpochS, q.QuantS, q.TrainBytes, q.IntraBytes, fp.EpochS, fp.TrainBytes)
	}
	cfg.Wire[quant.Intra] = quant.Wire{Bits: 2}
	qi, _ := Predict(twoRanks(), prof, shm, cfg)
	if !(qi.QuantS > 0) || !(qi.TrainBytes < fp.TrainBytes) {
		t.Errorf("shm int2 inside nodes: quant %v, bytes %d (fp32 %d)", qi.QuantS, qi.TrainBytes, fp.TrainBytes)
	}
	net, _ := ParseNetwork("10gbe")
	cfg.Wire, cfg.RanksPerNode = wires(2), 1
	qn, _ := Predict(twoRanks(), prof, net, cfg)
	if qn.TrainBytes != qi.TrainBytes || qn.IntraBytes != 0 || !(qn.QuantS > 0) {
		t.Errorf("10gbe int2, a rank a node: bytes %d (intra %d), want %d (0); quant %v", qn.TrainBytes, qn.IntraBytes, qi.TrainBytes, qn.QuantS)
	}
}

// TestGraphSizeNote: a profile whose copies held a graph of another size
// than the prediction's machine gets a note naming both; one within a
// factor 2, or without recorded sizes, gets none.
func TestGraphSizeNote(t *testing.T) {
	p := &Profile{Name: "box", Rates: []Rates{{Threads: 1, Copies: 16, AggrNodes: 150_000}, {Threads: 16, Copies: 1, AggrNodes: 150_000}}}
	n := p.GraphSizeNote(2_449_029)
	if !strings.Contains(n, "150000–2400000") || !strings.Contains(n, "puts 2449029 there") {
		t.Errorf("note %q: want the measured range 150000–2400000 and the prediction's 2449029", n)
	}
	even := &Profile{Name: "box", Rates: []Rates{{Threads: 1, Copies: 2, AggrNodes: 1_224_514}, {Threads: 2, Copies: 1, AggrNodes: 2_449_029}}}
	for _, c := range []struct {
		p    *Profile
		host int64
	}{{even, 2_449_029}, {even, 1_300_000}, {&Profile{Name: "old", Rates: []Rates{{Threads: 1, Copies: 1}}}, 2_449_029}, {p, 0}} {
		if n := c.p.GraphSizeNote(c.host); n != "" {
			t.Errorf("%s at %d host nodes: note %q, want none", c.p.Name, c.host, n)
		}
	}
	if n := even.GraphSizeNote(5_000_000); !strings.Contains(n, " 2449029 graph nodes") {
		t.Errorf("even profile at 5000000 host nodes: note %q, want the measured range", n)
	}
	if n := even.GraphSizeNote(600_000); n == "" {
		t.Error("even profile at 600000 host nodes (its larger entry 4× that): no note")
	}
}

// TestStraggle: the straggle of copies is the median over entries of the
// median copy's rate over the slowest's; Predict divides the compute rates
// of a job of several ranks by it, and of one rank not.
func TestStraggle(t *testing.T) {
	base := flatProfile().Rates[0]
	slow := base.Scaled(1 / 1.25)
	fast := base.Scaled(2)
	if s := StraggleOf([]Rates{base}); s != 0 {
		t.Errorf("one copy: straggle %v, want 0 (not measured)", s)
	}
	// copies base, base, slow: median = base, slowest = slow
	if s := StraggleOf([]Rates{base, *slow, base}); math.Abs(s-1.25) > 1e-12 {
		t.Errorf("one copy 1.25× slower: straggle %v, want 1.25", s)
	}
	if s := StraggleOf([]Rates{base, *fast, base}); s != 1 {
		t.Errorf("one copy faster: straggle %v, want 1", s)
	}
	odd := base
	odd.Gemm = nil
	if s := StraggleOf([]Rates{base, odd}); s != 0 {
		t.Errorf("copies of different entries: straggle %v, want 0", s)
	}

	prof := flatProfile()
	shm, _ := ParseNetwork("shm")
	cfg := Config{Model: gcn(), Wire: wires(32), Threads: 1, RanksPerNode: 2, CoresPerNode: 4}
	before, err := Predict(twoRanks(), prof, shm, cfg)
	if err != nil {
		t.Fatal(err)
	}
	prof.Rates[0].Straggle = 1.25
	after, err := Predict(twoRanks(), prof, shm, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if after.Straggle != 1.25 || math.Abs(after.DenseS/before.DenseS-1.25) > 1e-9 || math.Abs(after.AggrS/before.AggrS-1.25) > 0.01 { // aggr: its link time is not compute
		t.Errorf("straggle 1.25: dense %v → %v, aggr %v → %v, reported %v", before.DenseS, after.DenseS, before.AggrS, after.AggrS, after.Straggle)
	}
	alone := twoRanks()[:1]
	alone[0].Recv, alone[0].CutEdges = nil, 0
	one, err := Predict(alone, prof, shm, Config{Model: gcn(), Wire: wires(32), Threads: 1, RanksPerNode: 1, CoresPerNode: 4})
	if err != nil {
		t.Fatal(err)
	}
	if one.Straggle != 0 {
		t.Errorf("one rank: straggle %v applied", one.Straggle)
	}
	prof.Rates[0].Straggle = 0.9
	if err := prof.Validate(); err == nil || !strings.Contains(err.Error(), "straggle") {
		t.Errorf("straggle 0.9: %v, want an error naming it", err)
	}
}

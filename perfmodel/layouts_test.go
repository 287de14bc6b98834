package perfmodel

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/exchange"
	"github.com/supergcn/supergcn/quant"
)

// scaledProfile has entries for 1, 2 and 4 threads of a 4-core node, each
// rate T times flatProfile's: every rank's share of the node grows with
// its threads, the node's throughput does not.
func scaledProfile() *Profile {
	p := flatProfile()
	base := p.Rates[0]
	p.Rates = nil
	for _, t := range []int{1, 2, 4} {
		r := base.Scaled(float64(t))
		r.Threads, r.Copies = t, 4/t
		p.Rates = append(p.Rates, *r)
	}
	return p
}

// TestThreadsNote: a thread count outside the profile's measured ones,
// above or below, is named; inside (measured or between two) it is not.
func TestThreadsNote(t *testing.T) {
	p := scaledProfile()  // 1, 2 and 4 threads
	p.Rates = p.Rates[1:] // 2 and 4
	for threads, want := range map[int]string{1: "not 1", 2: "", 3: "", 4: "", 5: "not 5", 64: "not 64"} {
		n := p.ThreadsNote(threads)
		if (want == "") != (n == "") || !strings.Contains(n, want) || (n != "" && !strings.Contains(n, "measured ranks of 2 to 4 threads")) {
			t.Errorf("%d threads: %q, want %q", threads, n, want)
		}
	}
}

// TestRatesAt: a measured thread count gets its entry; between two
// measured counts every rate is interpolated linearly in the threads; off
// the ends the nearest entry holds.
func TestRatesAt(t *testing.T) {
	p := scaledProfile()
	if r := p.RatesAt(2, 2); r != &p.Rates[1] {
		t.Errorf("2 threads: %+v, want the measured entry", r)
	}
	p.Rates = append(p.Rates[:1], p.Rates[2]) // 1 and 4 threads
	r := p.RatesAt(3, 1)
	// 3 = 1 + ⅔·(4−1): ElemGBs 10 + ⅔·(40−10) = 30, aggregation 1 + ⅔·3 = 3 GUPS
	if r.Threads != 3 || math.Abs(r.ElemGBs-30) > 1e-12 || math.Abs(r.Aggr[0].Forward-3) > 1e-12 || math.Abs(r.Quant[0].DecodeGBs-12) > 1e-12 {
		t.Errorf("3 threads: %d threads, elementwise %v, aggr %v, decode %v; want 3, 30, 3, 12", r.Threads, r.ElemGBs, r.Aggr[0].Forward, r.Quant[0].DecodeGBs)
	}
	if p.Rates[0].ElemGBs != 10 || p.Rates[1].ElemGBs != 40 {
		t.Error("interpolation changed the profile")
	}
	// a thread of a 4-thread rank does half of one of 1-thread ranks:
	// per thread 10 at 1, 5 at 4, so 10 + ⅔·(5−10) at 3, times 3
	p.Rates[1].ElemGBs = 20
	if r := p.RatesAt(3, 1); math.Abs(r.ElemGBs-20) > 1e-12 {
		t.Errorf("3 threads, per-thread rate halving by 4: elementwise %v, want 20", r.ElemGBs)
	}
	p.Rates[1].ElemGBs = 40
	// straggle: a factor, interpolated as it is; one copy's 0 counts as 1
	p.Rates[0].Straggle = 1.3
	if r := p.RatesAt(3, 1); math.Abs(r.Straggle-1.1) > 1e-12 {
		t.Errorf("3 threads between straggle 1.3 and none: %v, want 1.1", r.Straggle)
	}
	p.Rates[0].Straggle = 0
	if r := p.RatesAt(8, 1); r != &p.Rates[1] {
		t.Errorf("above the largest count: %+v", r)
	}
	p.Rates[1].Aggr = p.Rates[1].Aggr[:1] // entries differ: no grid to interpolate on
	if r := p.RatesAt(3, 1); r != &p.Rates[0] {
		t.Errorf("different entries: %+v, want the lower count's", r)
	}
}

// splitVolumes is a graph of 1200 nodes, 120 training nodes and 12 000
// edges cut into ranks ranks with no cut edges.
func splitVolumes(ranks int) (*Volumes, error) {
	if 1200%ranks != 0 {
		return nil, fmt.Errorf("%d ranks: %w", ranks, ErrNoVolumes)
	}
	v := &Volumes{}
	v.Meta.Parts, v.Meta.FeatDim, v.Meta.NumClasses = ranks, 100, 47
	for r := range ranks {
		v.Ranks = append(v.Ranks, exchange.RankVolume{Rank: r, Nodes: int64(1200 / ranks), TrainNodes: int64(120 / ranks), LocalEdges: int64(12000 / ranks)})
	}
	return v, nil
}

// TestLayoutPlan: on one 4-core node the layouts are 1×4, 2×2 and 4×1;
// each row is Predict of its layout; with no exchange and rates that grow
// with the threads as the ranks' work shrinks, every layout's work takes
// the same time but the Adam step, which each rank runs whole on its own
// threads: by hand, epoch(R×T) − epoch(4×1) = 28 B · params · (1/(T·10) −
// 1/10) / 1e9 s, so 1×4 is recommended.
func TestLayoutPlan(t *testing.T) {
	shm, _ := ParseNetwork("shm")
	m := gcn()
	lp := LayoutPlan{Nodes: 1, CoresPerNode: 4, Volumes: splitVolumes, Sweep: Sweep{Profiles: []*Profile{scaledProfile()}, Networks: []Network{shm},
		Modes: []exchange.Mode{exchange.ModeHybrid}, Bits: []int{AutoBits}, Config: Config{Model: m, RanksPerNode: 1}, Scale: 1}}
	rows, best, err := lp.Run()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || best != 0 || !rows[0].Best || rows[1].Best {
		t.Fatalf("%d layouts, best %d: %+v", len(rows), best, rows)
	}
	m.Classes = 47
	adam := func(threads int) float64 { return adamBytes * float64(m.params()) / (float64(threads) * 10e9) }
	for i, want := range []Layout{{1, 4}, {2, 2}, {4, 1}} {
		r := rows[i]
		if r.Layout != want || r.Ranks != want.RanksPerNode || r.Threads != want.Threads || r.Nodes != 1 {
			t.Errorf("row %d: %+v, want %+v on one node", i, r.Layout, want)
		}
		if d, w := r.EpochS-rows[2].EpochS, adam(want.Threads)-adam(1); math.Abs(d-w) > 1e-12 {
			t.Errorf("%d×%d: %v s more than 4×1, want %v", want.RanksPerNode, want.Threads, d, w)
		}
		v, _ := splitVolumes(want.RanksPerNode)
		pr, err := Predict(v.Ranks, lp.Sweep.Profiles[0], shm, Config{Model: m, Mode: exchange.ModeHybrid, Wire: quant.Wires{quant.Forward: {Bits: []int{32, 2, 2}[i]}},
			Threads: want.Threads, RanksPerNode: want.RanksPerNode, CoresPerNode: 4})
		if err != nil || pr.EpochS != r.EpochS {
			t.Errorf("%d×%d: %v s, Predict says %v (%v)", want.RanksPerNode, want.Threads, r.EpochS, pr.EpochS, err)
		}
	}
	// a layout whose rank count the volumes cannot supply is skipped
	lp.CoresPerNode = 16 // layouts 1×16, 2×8, 4×4, 8×2, 16×1
	lp.Volumes = func(ranks int) (*Volumes, error) {
		if ranks == 16 {
			return nil, fmt.Errorf("16 ranks: %w", ErrNoVolumes)
		}
		return splitVolumes(ranks)
	}
	rows, _, err = lp.Run()
	if err != nil || len(rows) != 5 || rows[4].Skipped == "" || rows[4].Row != nil {
		t.Errorf("16 cores: %d rows, last %+v, %v", len(rows), rows[len(rows)-1], err)
	}
	// so is one whose threads a rank the profile did not measure (1, 2, 4):
	// 1×16 and 2×8 would run at 4 threads' rates
	for i, want := range []bool{true, true, false, false} {
		if r := rows[i]; (r.Row == nil) != want || want != strings.Contains(r.Skipped, "measured ranks of 1 to 4 threads") {
			t.Errorf("16 cores, %d×%d: skipped %q, predicted %v", r.RanksPerNode, r.Threads, r.Skipped, r.Row != nil)
		}
	}
	for name, bad := range map[string]LayoutPlan{
		"no nodes":            {Nodes: 0, CoresPerNode: 4, Volumes: splitVolumes, Sweep: lp.Sweep},
		"no cores":            {Nodes: 1, CoresPerNode: 0, Volumes: splitVolumes, Sweep: lp.Sweep},
		"shm, 2 nodes":        {Nodes: 2, CoresPerNode: 4, Volumes: splitVolumes, Sweep: lp.Sweep},
		"2 nodes a host of 1": {Nodes: 1, CoresPerNode: 4, NodesPerHost: 2, Volumes: splitVolumes, Sweep: lp.Sweep},
		"no bits":             {Nodes: 1, CoresPerNode: 4, Volumes: splitVolumes, Sweep: Sweep{Profiles: lp.Sweep.Profiles, Networks: lp.Sweep.Networks, Modes: lp.Sweep.Modes}},
	} {
		if _, _, err := bad.Run(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	tenGbit, _ := ParseNetwork("10gbit")
	// nodes sharing a host: each rank runs at the rates of every rank of
	// the host, as Predict does with RanksPerHost set
	lp.CoresPerNode, lp.Volumes = 4, splitVolumes
	lp.Sweep.Networks, lp.Sweep.Exchange = []Network{tenGbit}, exchange.ExchangeFlat
	lp.Nodes, lp.NodesPerHost = 2, 2
	rows, _, err = lp.Run()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		v, _ := splitVolumes(2 * r.RanksPerNode)
		ls := lp.Sweep
		ls.Config.Threads, ls.Config.RanksPerNode, ls.Config.CoresPerNode, ls.Config.RanksPerHost = r.Threads, r.RanksPerNode, 4, 2*r.RanksPerNode
		pr, err := ls.Run(v)
		if err != nil || pr[0].EpochS != r.EpochS {
			t.Errorf("2 nodes a host, %d×%d: %v s, the sweep with %d ranks a host says %v (%v)", r.RanksPerNode, r.Threads, r.EpochS, 2*r.RanksPerNode, pr, err)
		}
		ls.Config.RanksPerHost = r.RanksPerNode
		if alone, err := ls.Run(v); err != nil || alone[0].EpochS == r.EpochS {
			t.Errorf("2 nodes a host, %d×%d: %v s, as fast as one node a host (%v)", r.RanksPerNode, r.Threads, r.EpochS, err)
		}
	}
	lp.Volumes = func(int) (*Volumes, error) { return nil, errors.New("disk on fire") }
	if _, _, err := lp.Run(); err == nil {
		t.Error("a volume error was skipped")
	}
}

// TestVolumeSource: files are found by the ranks they hold, another rank
// count is ErrNoVolumes naming VolumeSource.Files, and an unreadable file
// is refused at once.
func TestVolumeSource(t *testing.T) {
	v := &Volumes{Ranks: twoRanks()}
	v.Meta.Parts, v.Meta.FeatDim, v.Meta.Nodes, v.Meta.Edges = 2, 100, 2000, 21000
	path := filepath.Join(t.TempDir(), "v2.json")
	if err := v.Write(path); err != nil {
		t.Fatal(err)
	}
	by, err := VolumeSource{Files: []string{" " + path}}.ByRanks()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := by(2); err != nil || len(got.Ranks) != 2 {
		t.Errorf("2 ranks: %v", err)
	}
	if _, err := by(4); !errors.Is(err, ErrNoVolumes) || !strings.Contains(err.Error(), "perfmodel.VolumeSource.Files") {
		t.Errorf("4 ranks: %v", err)
	}
	if _, err := (VolumeSource{Files: []string{path + ".missing"}}).ByRanks(); err == nil {
		t.Error("a missing file accepted")
	}
	if _, err := (VolumeSource{Dir: t.TempDir()}).ByRanks(); err == nil {
		t.Error("a directory without a partition accepted")
	}
}

// TestLayoutPlanBits: with several bits the plan predicts every layout at
// each (Bits[0]'s first), each row as the plan of its bits alone, and
// recommends the fastest row of all.
func TestLayoutPlanBits(t *testing.T) {
	gbit, _ := ParseNetwork("1gbit")
	plan := func(bits ...int) LayoutPlan {
		return LayoutPlan{Nodes: 2, CoresPerNode: 4, Volumes: splitVolumes, Sweep: Sweep{Profiles: []*Profile{scaledProfile()},
			Networks: []Network{gbit}, Modes: []exchange.Mode{exchange.ModeHybrid}, Bits: bits, Exchange: exchange.ExchangeFlat,
			Config: Config{Model: gcn(), RanksPerNode: 1}, Scale: 1}}
	}
	both := plan(32, 2)
	rows, best, err := both.Run()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 3 layouts × 2 bits", len(rows))
	}
	for i, bits := range []int{32, 2} {
		one := plan(bits)
		alone, _, err := one.Run()
		if err != nil {
			t.Fatal(err)
		}
		for j, a := range alone {
			r := rows[3*i+j]
			if r.Layout != a.Layout || r.Bits != bits || r.EpochS != a.EpochS {
				t.Errorf("bits %d, %d×%d: row %+v %d bits %v s, alone %+v %v s", bits, a.RanksPerNode, a.Threads, r.Layout, r.Bits, r.EpochS, a.Layout, a.EpochS)
			}
		}
	}
	for i, r := range rows {
		if r.EpochS < rows[best].EpochS || r.Best != (i == best) {
			t.Errorf("row %d (%d×%d, %d bits): %v s, best %v; recommended %d at %v s", i, r.RanksPerNode, r.Threads, r.Bits, r.EpochS, r.Best, best, rows[best].EpochS)
		}
	}
}

// TestWidened: ranks wider than a profile measured get its widest
// measurement scaled by the threads (copies divided), with the assumption
// in a note; within the measured counts the profile is unchanged.
func TestWidened(t *testing.T) {
	p := scaledProfile() // 1, 2, 4 threads of a 4-core node; rates ∝ threads
	if p.Widened(4) != p || p.Widened(3) != p || p.WidenNote(4) != "" {
		t.Fatal("a measured thread count widened")
	}
	w := p.Widened(16)
	r, exact := w.RatesFor(16, 1)
	if !exact || r.Threads != 16 || r.Copies != 1 || math.Abs(r.ElemGBs-4*p.Rates[2].ElemGBs) > 1e-9 ||
		math.Abs(r.Aggr[0].Forward-4*p.Rates[2].Aggr[0].Forward) > 1e-9 || len(p.Rates) != 3 {
		t.Errorf("16 threads: %+v (exact %v), want 4× the 4-thread rates, 1 copy, the profile unchanged", r, exact)
	}
	if n := p.WidenNote(16); !strings.Contains(n, "scaled by 16/4") || !strings.Contains(n, "bench profile --threads 16") {
		t.Errorf("note %q", n)
	}
}

// TestLayoutPlanWiden: with Widen, the layouts of a 16-core node whose
// ranks are wider than the profile's 4 threads are predicted at widened
// rates and say so; a plan with one predictable layout recommends none.
func TestLayoutPlanWiden(t *testing.T) {
	shm, _ := ParseNetwork("shm")
	lp := LayoutPlan{Nodes: 1, CoresPerNode: 16, Widen: true, Volumes: splitVolumes, Sweep: Sweep{Profiles: []*Profile{scaledProfile()},
		Networks: []Network{shm}, Modes: []exchange.Mode{exchange.ModeHybrid}, Bits: []int{AutoBits}, Config: Config{Model: gcn(), RanksPerNode: 1}, Scale: 1}}
	rows, best, err := lp.Run()
	if err != nil || len(rows) != 5 || best < 0 {
		t.Fatalf("%d rows, best %d, %v", len(rows), best, err)
	}
	for _, r := range rows {
		if r.Row == nil || (r.Assumed != "") != (r.Threads > 4) {
			t.Errorf("%d×%d: predicted %v, assumed %q", r.RanksPerNode, r.Threads, r.Row != nil, r.Assumed)
		}
	}
	lp.Volumes = func(ranks int) (*Volumes, error) {
		if ranks != 2 {
			return nil, fmt.Errorf("%d ranks: %w", ranks, ErrNoVolumes)
		}
		return splitVolumes(ranks)
	}
	rows, best, err = lp.Run()
	if err != nil || best != -1 || rows[1].Row == nil || rows[1].Best {
		t.Errorf("one predictable layout: best %d, %v, rows %+v", best, err, rows)
	}
	lp.Widen = false // 2×8 unmeasured: none predictable
	if _, _, err = lp.Run(); err == nil {
		t.Error("no predictable layout: no error")
	}
}

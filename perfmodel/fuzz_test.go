package perfmodel

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/supergcn/supergcn/exchange"
)

// fuzzPredict runs the predictions a read profile or volumes file feeds
// (every layout of a 4-core node, flat and two-level, two networks) and
// checks that each finishes with finite, non-negative times.
func fuzzPredict(t *testing.T, p *Profile, v *Volumes) {
	shm, _ := ParseNetwork("shm")
	gbit, _ := ParseNetwork("1gbit")
	m := Model{Kind: "gcn", Layers: 2, Hidden: 16, Dropout: true}
	for _, l := range Layouts(4) {
		for _, exch := range []string{exchange.ExchangeFlat, exchange.ExchangeTwoLevel} {
			if len(v.Ranks)%l.RanksPerNode != 0 {
				continue
			}
			sw := Sweep{Profiles: []*Profile{p}, Networks: []Network{shm, gbit}, Modes: []exchange.Mode{exchange.ModeHybrid},
				Bits: []int{AutoBits, 32}, Exchange: exch, Scale: 1,
				Config: Config{Model: m, RanksPerNode: l.RanksPerNode, Threads: l.Threads, CoresPerNode: 4, EvalEvery: 1}}
			rows, err := sw.Run(v)
			if err != nil {
				continue // refused with an error: what the command prints
			}
			for _, r := range rows {
				if e := r.EpochS; math.IsNaN(e) || math.IsInf(e, 0) || e < 0 {
					t.Fatalf("%d×%d %s: epoch %v s", l.RanksPerNode, l.Threads, exch, e)
				}
			}
		}
	}
}

// fuzzFile writes b to a file of its own and returns its path.
func fuzzFile(t *testing.T, b []byte) string {
	path := filepath.Join(t.TempDir(), "in.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// FuzzProfile: a profile file either fails to load with an error or
// gives predictions with finite times (never a panic).
func FuzzProfile(f *testing.F) {
	for _, name := range []string{"profiles/xeon-gold-6148.json", "../docs/data/profile-xeon16-straggle.json", "../docs/data/profile-dev-2c.json"} {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	v, err := ReadVolumes("testdata/volumes-dev-small-p4.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if p, err := LoadProfile(fuzzFile(t, b)); err == nil {
			fuzzPredict(t, p, v)
		}
	})
}

// FuzzVolumes: a volumes file either fails to read with an error or gives
// predictions with finite times (never a panic).
func FuzzVolumes(f *testing.F) {
	if b, err := os.ReadFile("testdata/volumes-dev-small-p4.json"); err == nil {
		f.Add(b)
	}
	p, err := LoadProfile("profiles/xeon-gold-6148.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, err := ReadVolumes(fuzzFile(t, b)); err == nil {
			fuzzPredict(t, p, v)
		}
	})
}

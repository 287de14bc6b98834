package perfmodel

import (
	"strings"
	"testing"
)

// TestProfileAdd: entries of the added profile replace those of the same
// thread count (and copies, for loads) and join the others in order; the
// name and intra-node link stay; another node or kernel is refused and
// leaves the profile as it was.
func TestProfileAdd(t *testing.T) {
	base, err := LoadProfile("../docs/data/profile-xeon16-threads.json")
	if err != nil {
		t.Fatal(err)
	}
	// p: the 1- and 8-thread entries; q: 8 (again) and 16, and a load of 16
	pick := func(p *Profile, threads ...int) *Profile {
		c := *p
		c.Rates, c.Loads = nil, nil
		for _, r := range p.Rates {
			for _, th := range threads {
				if r.Threads == th {
					c.Rates = append(c.Rates, r)
				}
			}
		}
		return &c
	}
	p, q := pick(base, 1, 8), pick(base, 8, 16)
	p.Loads = []Rates{base.Loads[0]} // 1 thread × 1 copy
	p.Source, q.Source, q.Name = "first", "second", "other"
	q.IntraNode = Link{LatencyUS: 9, GBs: 9, Efficiency: 1}
	q.Rates[0].ElemGBs = 123 // the 8-thread entry measured again
	load := q.Rates[1]
	load.Copies = 1
	load.Threads = 8
	q.Loads = []Rates{load}
	if err := p.Add(q); err != nil {
		t.Fatal(err)
	}
	var threads []int
	for _, r := range p.Rates {
		threads = append(threads, r.Threads)
	}
	if len(threads) != 3 || threads[0] != 1 || threads[1] != 8 || threads[2] != 16 || p.Rates[1].ElemGBs != 123 {
		t.Errorf("rates of threads %v (8 threads elementwise %g): want 1, 8 (the added entry), 16", threads, p.Rates[1].ElemGBs)
	}
	if len(p.Loads) != 2 || p.Loads[0].Threads != 1 || p.Loads[1].Threads != 8 {
		t.Errorf("loads %d: want 1 thread × 1 copy, then 8 × 1", len(p.Loads))
	}
	if p.Name != base.Name || p.IntraNode != base.IntraNode || p.Source != "first; and second" {
		t.Errorf("name %q, intra-node %+v, source %q: want the first profile's name and link, both sources", p.Name, p.IntraNode, p.Source)
	}

	before := p.Source
	other := pick(base, 2)
	other.CoresPerNode = 32
	if err := p.Add(other); err == nil || !strings.Contains(err.Error(), "cores") || p.Source != before {
		t.Errorf("another node's profile: %v, source %q", err, p.Source)
	}
	other.CoresPerNode, other.Kernel = base.CoresPerNode, "other"
	if err := p.Add(other); err == nil || !strings.Contains(err.Error(), "kernel") || len(p.Rates) != 3 {
		t.Errorf("another kernel's profile: %v, %d rates", err, len(p.Rates))
	}
}

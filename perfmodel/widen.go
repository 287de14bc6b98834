package perfmodel

import (
	"fmt"
	"slices"
)

// Widened returns p with a measurement of ranks of threads threads, more
// than the most it measured (hi): each measurement of hi threads (in Rates
// and Loads) scaled by threads/hi, its copies by hi/threads (at least 1).
// It assumes that every further thread of a rank works as one of the
// widest measured rank's threads: throughput per core, memory bandwidth
// per core included, as on the measured node (WidenNote says so). It
// returns p itself for a thread count within or below what p measured.
func (p *Profile) Widened(threads int) *Profile {
	hi := p.maxThreads()
	if threads <= hi || hi < 1 {
		return p
	}
	f := float64(threads) / float64(hi)
	widen := func(rs []Rates) []Rates {
		out := slices.Clone(rs)
		for i := range rs {
			if rs[i].Threads == hi {
				w := rs[i].Scaled(f)
				w.Threads, w.Copies = threads, max(1, rs[i].Copies*hi/threads)
				out = append(out, *w)
			}
		}
		return out
	}
	c := *p
	c.Rates, c.Loads = widen(p.Rates), widen(p.Loads)
	return &c
}

// WidenNote is the assumption Widened makes for ranks of threads threads,
// in a line ("" when it makes none).
func (p *Profile) WidenNote(threads int) string {
	hi := p.maxThreads()
	if threads <= hi || hi < 1 {
		return ""
	}
	return fmt.Sprintf("ranks of %d threads: profile %s measured ranks of at most %d threads; their rates are scaled by %d/%d, "+
		"assuming each further core as fast as a measured one (supergcn bench profile --threads %d --add PROFILE on this site's node measures them)",
		threads, p.Name, hi, threads, hi, threads)
}

// maxThreads is the largest thread count of p's measurements.
func (p *Profile) maxThreads() int {
	hi := 0
	for i := range p.Rates {
		hi = max(hi, p.Rates[i].Threads)
	}
	return hi
}

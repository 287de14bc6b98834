package perfmodel

import (
	"fmt"
	"slices"
	"strings"
)

// RatesAt returns the rates of one rank of threads threads with busy ranks
// on its host: a measured thread count's (RatesFor), or, between two
// measured counts t0 < threads < t1, every throughput's share per thread
// interpolated linearly in the thread count between theirs (each measured
// with the node full, so a rank's share of the node grows with its
// threads, and what a thread achieves falls from t0's to t1's as a rank's
// threads synchronise more; the share factors of the exchange are
// interpolated as they are). Below the smallest
// measured count and above the largest, the nearest count's rates hold
// (ThreadsNote says so).
// Rates.Threads is threads when interpolated.
func (p *Profile) RatesAt(threads, busy int) *Rates {
	lo, exact := p.RatesFor(threads, busy)
	if exact || lo.Threads > threads {
		return lo
	}
	var above *Rates
	for i := range p.Rates {
		if p.Rates[i].Threads > threads {
			above = &p.Rates[i]
			break
		}
	}
	if above == nil {
		return lo
	}
	hi, _ := p.RatesFor(above.Threads, busy)
	f := float64(threads-lo.Threads) / float64(hi.Threads-lo.Threads)
	c := lo.Scaled(1) // a deep copy
	ck, cv := c.fields()
	hk, hv := hi.fields()
	if !slices.Equal(ck, hk) {
		return lo // entries measured differently: no common grid
	}
	t0, t1, t := float64(lo.Threads), float64(hi.Threads), float64(threads)
	for i, v := range cv {
		if isFactor(ck[i]) { // factors, not throughputs
			*v += f * (*hv[i] - *v)
			continue
		}
		// A throughput: its share per thread, interpolated.
		*v = t * (*v/t0 + f*(*hv[i]/t1-*v/t0))
	}
	if lo.Straggle > 0 || hi.Straggle > 0 { // one copy: 0, a factor of 1
		a, b := max(1, lo.Straggle), max(1, hi.Straggle)
		c.Straggle = a + f*(b-a)
	}
	c.Threads = threads
	return c
}

// ThreadsNote returns a one-line note when ranks of threads threads lie
// outside the thread counts the profile measured: RatesAt then gives the
// nearest count's rates, which are too slow above the largest (the rank's
// further threads would add nothing) and too fast below the smallest. ""
// inside the measured range.
func (p *Profile) ThreadsNote(threads int) string {
	if len(p.Rates) == 0 {
		return ""
	}
	lo, hi := p.Rates[0].Threads, p.Rates[0].Threads
	for i := range p.Rates {
		lo, hi = min(lo, p.Rates[i].Threads), max(hi, p.Rates[i].Threads)
	}
	if threads >= lo && threads <= hi {
		return ""
	}
	return fmt.Sprintf("profile %s measured ranks of %d to %d threads, not %d", p.Name, lo, hi, threads)
}

// fields lists every rate of r (and the exchange's share factors) with a
// key naming its entry, in a fixed order, for interpolating two
// measurements entry by entry.
func (r *Rates) fields() (keys []string, vals []*float64) {
	add := func(key string, v *float64) {
		keys, vals = append(keys, key), append(vals, v)
	}
	// an optional rate (0: not measured) interpolates only with another
	// measured one
	opt := func(key string, v *float64) {
		if *v == 0 {
			key += "=0"
		}
		add(key, v)
	}
	for i := range r.Aggr {
		a := &r.Aggr[i]
		add(fmt.Sprint("aggr", a.Width), &a.Forward)
		add(fmt.Sprint("aggrT", a.Width), &a.Transpose)
	}
	for i := range r.Gemm {
		g := &r.Gemm[i]
		add(fmt.Sprint("gemm", g.Op, g.K, g.N), &g.GFLOPS)
	}
	quant := func(at string, qs []QuantRate) {
		for i := range qs {
			q := &qs[i]
			add(fmt.Sprint(at, "enc", q.Bits, q.Width), &q.EncodeGBs)
			add(fmt.Sprint(at, "dec", q.Bits, q.Width), &q.DecodeGBs)
		}
	}
	quant("quant", r.Quant)
	for i := range r.Hidden {
		h := &r.Hidden[i]
		add(fmt.Sprint("hidden", h.LayerNorm, h.Dropout), &h.GVs)
	}
	add("elem", &r.ElemGBs)
	add("dropout", &r.DropoutGVs)
	opt("layernorm", &r.LayerNormGVs)
	add("softmax", &r.SoftmaxGVs)
	opt("stream", &r.StreamGBs)
	if x := r.Exchange; x != nil {
		for i := range x.RowRates {
			w := &x.RowRates[i]
			add(fmt.Sprint("gather", w.Width), &w.GatherGBs)
			add(fmt.Sprint("scatter", w.Width), &w.ScatterGBs)
			opt(fmt.Sprint("halo", w.Width), &w.HaloGUPS)
		}
		quant("xquant", x.Quant)
		opt("share", &x.ShareFactor)
		opt("sharemax", &x.ShareFactorMax)
	}
	return keys, vals
}

// isFactor tells the keys of fields whose values are factors (the shared
// window's) from throughputs.
func isFactor(key string) bool {
	return strings.HasPrefix(key, "share")
}

// StraggleOf is the straggle of copies measured at once (Rates.Straggle):
// over the throughputs that every copy measured, the median of the median
// copy's rate over the slowest copy's; 0 for fewer than two copies or
// copies whose entries differ.
func StraggleOf(rs []Rates) float64 {
	if len(rs) < 2 {
		return 0
	}
	keys, _ := rs[0].fields()
	vals := make([][]*float64, len(rs))
	for i := range rs {
		k, v := rs[i].fields()
		if !slices.Equal(k, keys) {
			return 0
		}
		vals[i] = v
	}
	var ratios []float64
	col := make([]float64, len(rs))
	for j, key := range keys {
		if isFactor(key) || strings.HasSuffix(key, "=0") {
			continue
		}
		for i := range rs {
			col[i] = *vals[i][j]
		}
		slow := slices.Min(col)
		if slow <= 0 {
			continue
		}
		ratios = append(ratios, Median(col)/slow)
	}
	if len(ratios) == 0 {
		return 0
	}
	return Median(ratios)
}

// Median is the median of v (v is left as it was).
func Median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Package perfmodel predicts the epoch time of full-batch distributed GNN
// training from three inputs: a machine Profile (kernel rates per thread
// count, measured by `supergcn bench profile` or derived from published
// figures), the partition's per-rank volumes (exchange.Volumes: owned nodes,
// edges, rows per ordered rank pair) and a Network (latency and bandwidth
// per link class). Predict walks the epoch's phases (each boundary exchange
// is a synchronisation point), takes the slowest rank of each phase, and
// reports the components of the critical rank and the parallel efficiency.
//
// The package is pure Go and touches no files except through LoadProfile
// and WriteProfile; perfmodel/measure measures profiles.
package perfmodel

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/supergcn/supergcn/internal/container"
	"github.com/supergcn/supergcn/quant"
)

// Profile is a machine's kernel rates. Every rate is per rank (one process
// using Threads threads) while the whole node is busy: `bench profile`
// measures it with cores/Threads copies running at once, so memory
// bandwidth is shared as it is when every core of a node trains.
type Profile struct {
	Name         string `json:"name"`
	Source       string `json:"source"` // how the figures were obtained (command and machine, or publications)
	CoresPerNode int    `json:"cores_per_node"`
	Kernel       string `json:"kernel,omitempty"` // aggregation kernel measured
	BLAS         string `json:"blas,omitempty"`   // GEMM backend measured
	// IntraNode is MPI between ranks of one node (shared memory).
	IntraNode Link    `json:"intra_node"`
	Rates     []Rates `json:"rates"` // ascending Threads
	// Loads (optional) are more measurements of thread counts of Rates
	// with other numbers of copies running at once (Copies), e.g. one
	// rank alone on the node: memory bandwidth is shared by fewer ranks.
	// RatesFor picks, for a rank count busy on the host, the measurement
	// with the fewest copies that are at least that many. Profiles
	// without them use Rates (the node full) for every rank count.
	Loads []Rates `json:"loads,omitempty"`
}

// Rates are the kernel rates of one rank with Threads threads.
type Rates struct {
	Threads int `json:"threads"`
	Copies  int `json:"copies"` // concurrent ranks when measured (node fully busy)
	// AggrNodes (optional; 0: not recorded): nodes of the graph each copy
	// aggregated. The rates depend on it: a graph whose rows fit the
	// caches aggregates faster than one that does not.
	AggrNodes int `json:"aggr_nodes,omitempty"`
	// Rows (optional; 0: not recorded): rows of each copy's GEMMs, codec
	// blocks and element-wise passes. The rates depend on it too: a dense
	// product of few rows a thread leaves threads idle at its end.
	Rows int `json:"rows,omitempty"`
	// Aggr: sparse aggregation, 1e9 edge·values per second (GUPS) by width.
	Aggr []AggrRate `json:"aggr"`
	// Gemm: GFLOP/s of tall-skinny products (many rows, small K and N).
	Gemm []GemmRate `json:"gemm"`
	// Quant: stochastic quantisation, GB/s of fp32 rows, by bits and width.
	Quant []QuantRate `json:"quant"`
	// ElemGBs: element-wise passes (bias, activation, dropout), GB/s of
	// bytes read plus written.
	ElemGBs float64 `json:"elementwise_gbs"`
	// DropoutGVs, LayerNormGVs: 1e9 values/s of nn.Dropout and
	// nn.LayerNorm, forward and backward together. SoftmaxGVs: 1e9
	// logits/s of nn.SoftmaxCrossEntropy (loss and gradient of a row).
	// LayerNormGVs is needed only without Hidden.
	DropoutGVs   float64 `json:"dropout_gvs"`
	LayerNormGVs float64 `json:"layernorm_gvs,omitempty"`
	SoftmaxGVs   float64 `json:"softmax_gvs"`
	// Hidden (optional; measured by bench profile): the fused stage
	// between two hidden convolutions as training runs it (nn.HiddenStage:
	// bias, LayerNorm, ReLU and dropout in one pass forward, the gradient
	// in one pass backward), one rate for each of the four variants.
	// Without it (older and published profiles) the model charges the
	// stage as the separate passes: bias and ReLU at ElemGBs, LayerNorm
	// and dropout at their own rates.
	Hidden []HiddenRate `json:"hidden,omitempty"`
	// StreamGBs: STREAM triad of this rank (for reference).
	StreamGBs float64 `json:"stream_triad_gbs,omitempty"`
	// Attention (optional; measured by bench profile): the attention
	// kernels (attn.Forward and attn.Backward). Without it the profile
	// predicts no attention model.
	Attention *AttentionRates `json:"attention,omitempty"`
	// Exchange (optional): the boundary exchange's own passes measured as
	// the exchange runs them; without it the model takes the codec from
	// Quant and the buffer rows at the aggregation rate.
	Exchange *ExchangeRates `json:"exchange,omitempty"`
	// Straggle (optional; 0: not measured, as with one copy): how much
	// slower the slowest of the copies ran than the median copy, the
	// median over the entries of median rate / slowest rate (≥ 1). Every
	// exchange waits for the slowest rank, so the model runs each rank at
	// the slowest copy's pace.
	Straggle float64 `json:"straggle,omitempty"`
}

// ExchangeRates are the passes of one boundary exchange, measured in the
// order and on the buffers an exchange uses: Rows rows are gathered by a
// random index from a (cold) feature matrix into the send buffer, encoded
// in Peers blocks (one per peer), decoded block by block into the receive
// buffer and added by a random index into the output rows. Every pass
// moves its buffer once per repetition, so no buffer is cache-hot unless
// it fits in the cache.
type ExchangeRates struct {
	Rows  int `json:"rows"`
	Peers int `json:"peers"`
	// Rows: the gather and the scatter-add, GB/s of fp32 rows, by width.
	RowRates []RowRate `json:"row_rates"`
	// Quant: the codec on those buffers, per peer block, GB/s of fp32 rows.
	Quant []QuantRate `json:"quant"`
	// ShareFactor (optional; 0: none measured, taken
	// as 1): the exchange's shared window as train runs it without a spare
	// core, the local product on its own goroutine while the driver encodes
	// the send blocks, GOMAXPROCS threads+1, every copy at once. It is the
	// window's wall time over the time its two parts take alone (both on
	// the rank's threads: local + encoding); 1 is sharing the cores
	// without loss. The median over the copies; ShareFactorMax is the slowest
	// copy's.
	ShareFactor    float64 `json:"share_factor,omitempty"`
	ShareFactorMax float64 `json:"share_factor_max,omitempty"`
	// HaloFan (optional, with RowRate.HaloGUPS): the cut edges a buffer
	// row of the measured cut-edge product (`bench profile --halo-fan`).
	HaloFan int `json:"halo_fan,omitempty"`
}

// Share is ShareFactor, or 1 when it was not measured.
func (x *ExchangeRates) Share() float64 {
	if x == nil || x.ShareFactor == 0 {
		return 1
	}
	return x.ShareFactor
}

// AttentionRates are the attention kernels on train's local graph, as
// two parts whose sum is a pass: per edge and head the score (the source
// and destination terms' LeakyReLU), the edge softmax and the attention
// dropout (Score, by the number of heads: the per-edge work is shared by
// a row's heads), in 1e9 edge·heads per second; and per edge and value
// the weighted aggregation of the projected rows as the kernels run it
// (Aggr, by the width of one head: Forward the weighted row sum,
// Transpose the backward pass's gradients of the rows and of the
// weights), in 1e9 edge·values per second.
type AttentionRates struct {
	Score []ScoreRate `json:"score"`
	Aggr  []AggrRate  `json:"aggr"`
}

// ScoreRate is the attention scores of Heads heads, forward and backward,
// in 1e9 edge·heads per second.
type ScoreRate struct {
	Heads    int     `json:"heads"`
	Forward  float64 `json:"forward_gehs"`
	Backward float64 `json:"backward_gehs"`
}

// RowRate is the row gather into the send buffer and the scatter-add of
// the receive buffer at one width, GB/s of fp32 rows moved.
//
// HaloGUPS (optional; 0: not measured) is the rate
// of the cut-edge products, in 1e9 entry·values per second: entries that
// read a row at a random position of an exchange buffer (the receive
// buffer in the forward halo product H, the send buffer in the backward
// Sᵀ) and add it into a local row. Their reads scatter over a buffer of
// Rows rows, several times a rank's own features, so they get far less
// from the caches than the local product, whose graph the trainer orders
// for locality; without the rate the model charges them at the
// aggregation rate.
type RowRate struct {
	Width      int     `json:"width"`
	GatherGBs  float64 `json:"gather_gbs"`
	ScatterGBs float64 `json:"scatter_gbs"`
	HaloGUPS   float64 `json:"halo_gups,omitempty"`
}

// HiddenRate is the fused hidden stage with or without its LayerNorm and
// dropout: 1e9 values/s, forward and backward together.
type HiddenRate struct {
	LayerNorm bool    `json:"layernorm"`
	Dropout   bool    `json:"dropout"`
	GVs       float64 `json:"gvs"`
}

// AggrRate is aggregation at one width: Forward (out = Â·x, CSR rows) and
// Transpose (out = Âᵀ·x), in 1e9 edge·values per second.
type AggrRate struct {
	Width     int     `json:"width"`
	Forward   float64 `json:"forward_gups"`
	Transpose float64 `json:"transpose_gups"`
}

// GemmRate is one GEMM shape class: Op "nn" (X·W: rows×K times K×N), "tn"
// (Xᵀ·G: the weight gradient, K×rows times rows×N) or "nt" (G·Wᵀ: rows×K
// times (N×K)ᵀ), with the small dimensions K and N.
type GemmRate struct {
	Op     string  `json:"op"`
	K      int     `json:"k"`
	N      int     `json:"n"`
	GFLOPS float64 `json:"gflops"`
}

// QuantRate is encoding (row range, quantise, pack) and decoding of fp32
// rows of Width values at Bits bits, GB/s of fp32 data.
type QuantRate struct {
	Bits      int     `json:"bits"`
	Width     int     `json:"width"`
	EncodeGBs float64 `json:"encode_gbs"`
	DecodeGBs float64 `json:"decode_gbs"`
}

// maxProfileBytes bounds a profile file (they are a few kB).
const maxProfileBytes = 64 << 20

// LoadProfile reads and validates a profile JSON file. Malformed JSON is
// reported at its line and column.
func LoadProfile(path string) (*Profile, error) {
	b, err := container.ReadInput(path, maxProfileBytes, "machine profile")
	if err != nil {
		return nil, err
	}
	var p Profile
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, jsonPosError(b, err))
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &p, nil
}

// WriteProfile writes p as indented JSON to path (atomically: nothing
// half-written on an error).
func WriteProfile(path string, p *Profile) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return container.WriteBytes(path, 0o644, append(b, '\n'))
}

// jsonPosError prefixes a decoding error of b with the line and column it
// occurred at, when the error knows its offset.
func jsonPosError(b []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 1 || off > int64(len(b)) {
		return err
	}
	// the offset is just past the byte that failed (or the value that
	// did not fit): report that byte's line and column
	line, col := 1, 1
	for _, c := range b[:off-1] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
}

// Validate checks that every rate a prediction needs is present, finite
// and positive, and that the optional measurements (Loads, Exchange) are
// well-formed where present.
func (p *Profile) Validate() error {
	if p.CoresPerNode < 1 {
		return fmt.Errorf("cores_per_node %d, want ≥ 1", p.CoresPerNode)
	}
	if err := p.IntraNode.validate("intra_node"); err != nil {
		return err
	}
	if len(p.Rates) == 0 {
		return fmt.Errorf("no rates")
	}
	for i, r := range p.Rates {
		at := fmt.Sprintf("rates[%d]", i)
		if r.Threads < 1 || (i > 0 && r.Threads <= p.Rates[i-1].Threads) {
			return fmt.Errorf("%s: threads %d, want ≥ 1 and ascending", at, r.Threads)
		}
		if r.Copies < 1 {
			return fmt.Errorf("%s: copies %d, want ≥ 1", at, r.Copies)
		}
		if err := r.validate(at); err != nil {
			return err
		}
	}
	for i, r := range p.Loads {
		at := fmt.Sprintf("loads[%d]", i)
		found := false
		for _, q := range p.Rates {
			found = found || q.Threads == r.Threads
		}
		if !found {
			return fmt.Errorf("%s: threads %d, want a thread count of rates", at, r.Threads)
		}
		if r.Copies < 1 {
			return fmt.Errorf("%s: copies %d, want ≥ 1", at, r.Copies)
		}
		for j, q := range p.Rates {
			if q.Threads == r.Threads && q.Copies == r.Copies {
				return fmt.Errorf("%s: %d threads × %d copies measured again (rates[%d])", at, r.Threads, r.Copies, j)
			}
		}
		for j, q := range p.Loads[:i] {
			if q.Threads == r.Threads && q.Copies == r.Copies {
				return fmt.Errorf("%s: %d threads × %d copies measured again (loads[%d])", at, r.Threads, r.Copies, j)
			}
		}
		if err := r.validate(at); err != nil {
			return err
		}
	}
	return nil
}

// A measured rate (G-units or GB per second) outside [minRate, maxRate] is
// not a measurement: 1e-300 would predict epochs of 10^300 seconds.
const (
	minRate = 1e-6 // a thousand per second
	maxRate = 1e7  // ten peta per second
)

func positive(what string, v float64) error {
	if !(v >= minRate && v <= maxRate) {
		return fmt.Errorf("%s = %v, want a rate in [%g, %g]", what, v, minRate, maxRate)
	}
	return nil
}

// validate checks one measurement's rates (at names it in errors).
func (r *Rates) validate(at string) error {
	if len(r.Aggr) == 0 || len(r.Gemm) == 0 || len(r.Quant) == 0 {
		return fmt.Errorf("%s: needs aggr, gemm and quant rates", at)
	}
	if err := validateAggr(at+".aggr", r.Aggr); err != nil {
		return err
	}
	for j, g := range r.Gemm {
		if g.Op != "nn" && g.Op != "tn" && g.Op != "nt" {
			return fmt.Errorf("%s.gemm[%d]: op %q, want nn, tn or nt", at, j, g.Op)
		}
		if g.K < 1 || g.N < 1 {
			return fmt.Errorf("%s.gemm[%d]: k %d, n %d, want ≥ 1", at, j, g.K, g.N)
		}
		if err := positive(fmt.Sprintf("%s.gemm[%d].gflops", at, j), g.GFLOPS); err != nil {
			return err
		}
	}
	if err := validateQuant(at+".quant", r.Quant); err != nil {
		return err
	}
	for _, v := range []struct {
		name string
		v    float64
	}{{"elementwise_gbs", r.ElemGBs}, {"dropout_gvs", r.DropoutGVs}, {"softmax_gvs", r.SoftmaxGVs}} {
		if err := positive(at+"."+v.name, v.v); err != nil {
			return err
		}
	}
	if err := r.validateHidden(at); err != nil {
		return err
	}
	if r.Straggle != 0 && !(r.Straggle >= 1 && r.Straggle <= 100) {
		return fmt.Errorf("%s.straggle = %v, want a factor in [1, 100] (0: not measured)", at, r.Straggle)
	}
	if err := r.Attention.validate(at + ".attention"); err != nil {
		return err
	}
	if x := r.Exchange; x != nil {
		at := at + ".exchange"
		if x.Rows < 1 || x.Peers < 1 {
			return fmt.Errorf("%s: rows %d, peers %d, want ≥ 1", at, x.Rows, x.Peers)
		}
		if len(x.RowRates) == 0 || len(x.Quant) == 0 {
			return fmt.Errorf("%s: needs row_rates and quant", at)
		}
		if x.HaloFan < 0 {
			return fmt.Errorf("%s.halo_fan: %d, want ≥ 0 (0: not recorded)", at, x.HaloFan)
		}
		if err := rateList(at+".row_rates", len(x.RowRates), "width", "gather_gbs", "scatter_gbs", func(j int) (int, float64, float64) {
			return x.RowRates[j].Width, x.RowRates[j].GatherGBs, x.RowRates[j].ScatterGBs
		}); err != nil {
			return err
		}
		for j, w := range x.RowRates {
			if w.HaloGUPS != 0 {
				if err := positive(fmt.Sprintf("%s.row_rates[%d].halo_gups", at, j), w.HaloGUPS); err != nil {
					return err
				}
			}
		}
		if err := validateQuant(at+".quant", x.Quant); err != nil {
			return err
		}
		for _, v := range []struct {
			name string
			v    float64
		}{{"share_factor", x.ShareFactor}, {"share_factor_max", x.ShareFactorMax}} {
			// below 1 where the copies leave cores free (the two parts then
			// run side by side: about 0.5 at best, less only by noise)
			if v.v != 0 && !(v.v > 0 && v.v <= 100) {
				return fmt.Errorf("%s.%s: %v, want 0 (not measured) or a ratio in (0, 100]", at, v.name, v.v)
			}
		}
	}
	return nil
}

// validate checks the attention rates where present.
func (a *AttentionRates) validate(at string) error {
	if a == nil {
		return nil
	}
	if len(a.Score) == 0 {
		return fmt.Errorf("%s: needs score rates", at)
	}
	if err := rateList(at+".score", len(a.Score), "heads", "forward_gehs", "backward_gehs", func(j int) (int, float64, float64) {
		return a.Score[j].Heads, a.Score[j].Forward, a.Score[j].Backward
	}); err != nil {
		return err
	}
	if len(a.Aggr) == 0 {
		return fmt.Errorf("%s: needs aggr rates", at)
	}
	return validateAggr(at+".aggr", a.Aggr)
}

// validateAggr checks aggregation rates: widths ascending, rates positive.
func validateAggr(at string, as []AggrRate) error {
	return rateList(at, len(as), "width", "forward_gups", "transpose_gups", func(j int) (int, float64, float64) {
		return as[j].Width, as[j].Forward, as[j].Transpose
	})
}

// rateList checks a list of n entries at (entry j: its key and its two
// rates, named n1 and n2): keys ≥ 1 and ascending, rates positive.
func rateList(at string, n int, key, n1, n2 string, entry func(j int) (int, float64, float64)) error {
	prev := 0
	for j := range n {
		k, v1, v2 := entry(j)
		e := fmt.Sprintf("%s[%d]", at, j)
		if k < 1 || k <= prev {
			return fmt.Errorf("%s: %s %d, want ≥ 1 and ascending", e, key, k)
		}
		if err := positive(e+"."+n1, v1); err != nil {
			return err
		}
		if err := positive(e+"."+n2, v2); err != nil {
			return err
		}
		prev = k
	}
	return nil
}

// validateHidden checks the fused stage's rates: none (then LayerNormGVs
// is needed) or each of the four variants once.
func (r *Rates) validateHidden(at string) error {
	if len(r.Hidden) == 0 {
		return positive(at+".layernorm_gvs", r.LayerNormGVs)
	}
	if len(r.Hidden) != 4 {
		return fmt.Errorf("%s.hidden: %d entries, want the four variants (layernorm, dropout) once each", at, len(r.Hidden))
	}
	for j, h := range r.Hidden {
		for _, q := range r.Hidden[:j] {
			if q.LayerNorm == h.LayerNorm && q.Dropout == h.Dropout {
				return fmt.Errorf("%s.hidden[%d]: layernorm %v, dropout %v measured twice", at, j, h.LayerNorm, h.Dropout)
			}
		}
		if err := positive(fmt.Sprintf("%s.hidden[%d].gvs", at, j), h.GVs); err != nil {
			return err
		}
	}
	return nil
}

// hiddenRate is the fused stage's rate of one variant, if measured.
func (r *Rates) hiddenRate(layerNorm, dropout bool) (float64, bool) {
	for _, h := range r.Hidden {
		if h.LayerNorm == layerNorm && h.Dropout == dropout {
			return h.GVs, true
		}
	}
	return 0, false
}

func validateQuant(at string, qs []QuantRate) error {
	for j, q := range qs {
		if w := (quant.Wire{Bits: q.Bits}); w.Exact() || w.Validate() != nil || q.Width < 1 {
			return fmt.Errorf("%s[%d]: bits %d, width %d, want a quantised width (%s) and width ≥ 1", at, j, q.Bits, q.Width, quant.QuantisedList(", "))
		}
		if err := positive(fmt.Sprintf("%s[%d].encode_gbs", at, j), q.EncodeGBs); err != nil {
			return err
		}
		if err := positive(fmt.Sprintf("%s[%d].decode_gbs", at, j), q.DecodeGBs); err != nil {
			return err
		}
	}
	return nil
}

// At returns the rates for threads threads: the measured entry with that
// count, else the largest count below it (none below: the smallest), and
// whether the count was measured.
func (p *Profile) At(threads int) (*Rates, bool) {
	best := &p.Rates[0]
	for i := range p.Rates {
		r := &p.Rates[i]
		if r.Threads == threads {
			return r, true
		}
		if r.Threads < threads {
			best = r
		}
	}
	return best, false
}

// RatesFor returns the rates of threads threads (the thread count At
// picks) measured with busy ranks sharing the host: of that thread count's
// measurements (Rates and Loads), the one with the fewest copies ≥ busy,
// else the one with the most copies. The second result says whether the
// thread count was measured.
func (p *Profile) RatesFor(threads, busy int) (*Rates, bool) {
	r, exact := p.At(threads)
	best := r
	for i := range p.Loads {
		l := &p.Loads[i]
		if l.Threads != r.Threads {
			continue
		}
		switch {
		case best.Copies < busy: // best has too few: take more
			if l.Copies > best.Copies {
				best = l
			}
		case l.Copies >= busy && l.Copies < best.Copies:
			best = l
		}
	}
	return best, exact
}

// Scaled returns a copy of r with every rate multiplied by f (f < 1: a
// share of the cores).
func (r *Rates) Scaled(f float64) *Rates {
	c := *r
	c.Aggr = scaleAggr(r.Aggr, f)
	if a := r.Attention; a != nil {
		c.Attention = &AttentionRates{Score: append([]ScoreRate(nil), a.Score...), Aggr: scaleAggr(a.Aggr, f)}
		for i := range c.Attention.Score {
			c.Attention.Score[i].Forward *= f
			c.Attention.Score[i].Backward *= f
		}
	}
	c.Gemm = append([]GemmRate(nil), r.Gemm...)
	for i := range c.Gemm {
		c.Gemm[i].GFLOPS *= f
	}
	c.Quant = scaleQuant(r.Quant, f)
	c.Hidden = append([]HiddenRate(nil), r.Hidden...)
	for i := range c.Hidden {
		c.Hidden[i].GVs *= f
	}
	c.ElemGBs *= f
	c.DropoutGVs *= f
	c.LayerNormGVs *= f
	c.SoftmaxGVs *= f
	c.StreamGBs *= f
	if r.Exchange != nil {
		x := *r.Exchange
		x.RowRates = append([]RowRate(nil), x.RowRates...)
		for i := range x.RowRates {
			x.RowRates[i].GatherGBs *= f
			x.RowRates[i].ScatterGBs *= f
			x.RowRates[i].HaloGUPS *= f
		}
		x.Quant = scaleQuant(x.Quant, f)
		c.Exchange = &x
	}
	return &c
}

func scaleAggr(as []AggrRate, f float64) []AggrRate {
	c := append([]AggrRate(nil), as...)
	for i := range c {
		c[i].Forward *= f
		c[i].Transpose *= f
	}
	return c
}

func scaleQuant(qs []QuantRate, f float64) []QuantRate {
	c := append([]QuantRate(nil), qs...)
	for i := range c {
		c[i].EncodeGBs *= f
		c[i].DecodeGBs *= f
	}
	return c
}

// AggrSeconds is the time of edges·width edge·values of aggregation,
// forward or transposed, interpolated linearly in log(width) between the
// measured widths (the nearest one outside them).
func (r *Rates) AggrSeconds(edges int64, width int, transpose bool) float64 {
	if edges == 0 || width == 0 {
		return 0
	}
	return aggrSeconds(r.Aggr, edges, width, transpose)
}

// aggrSeconds is edges·width edge·values at the rates as, interpolated
// in log(width).
func aggrSeconds(as []AggrRate, edges int64, width int, transpose bool) float64 {
	gups := interpLog(len(as), func(i int) (int, float64) {
		if transpose {
			return as[i].Width, as[i].Transpose
		}
		return as[i].Width, as[i].Forward
	}, width)
	return float64(edges) * float64(width) / (gups * 1e9)
}

// AttentionSeconds is the time of one attention pass (forward, or its
// backward) over edges edges of heads heads and width values in all:
// edges·heads scores and edges·width weighted values, the latter at the
// rate of width/heads values a head, the former at that of heads heads.
// False when the profile did not
// measure the attention kernels.
func (r *Rates) AttentionSeconds(edges int64, heads, width int, backward bool) (float64, bool) {
	a := r.Attention
	if a == nil {
		return 0, false
	}
	if edges == 0 || width == 0 {
		return 0, true
	}
	agg := aggrSeconds(a.Aggr, edges*int64(heads), width/heads, backward)
	return a.ScoreSeconds(edges, heads, backward) + agg, true
}

// ScoreSeconds is the time of the scores of edges edges of heads heads,
// at the rate interpolated in log(heads) between the measured counts.
func (a *AttentionRates) ScoreSeconds(edges int64, heads int, backward bool) float64 {
	gehs := interpLog(len(a.Score), func(i int) (int, float64) {
		if backward {
			return a.Score[i].Heads, a.Score[i].Backward
		}
		return a.Score[i].Heads, a.Score[i].Forward
	}, heads)
	return float64(edges) * float64(heads) / (gehs * 1e9)
}

// GemmSeconds is the time of a rows×k by k×n product of class op ("nn",
// "tn", "nt"), at the rate of the measured shape of that class nearest in
// (log k, log n).
func (r *Rates) GemmSeconds(op string, rows int64, k, n int) float64 {
	if rows == 0 || k == 0 || n == 0 {
		return 0
	}
	best, bestD := 0.0, math.Inf(1)
	for _, g := range r.Gemm {
		if g.Op != op {
			continue
		}
		d := math.Hypot(math.Log(float64(g.K)/float64(k)), math.Log(float64(g.N)/float64(n)))
		if d < bestD {
			best, bestD = g.GFLOPS, d
		}
	}
	if best == 0 { // class not measured: the nearest shape of any class
		for _, g := range r.Gemm {
			d := math.Hypot(math.Log(float64(g.K)/float64(k)), math.Log(float64(g.N)/float64(n)))
			if d < bestD {
				best, bestD = g.GFLOPS, d
			}
		}
	}
	return 2 * float64(rows) * float64(k) * float64(n) / (best * 1e9)
}

// QuantSeconds is the time to encode (or decode) rows rows of width values
// at wire w; 0 for an exact w (fp32 rows are sent as they are). The rate
// is the exchange pattern's (Exchange.Quant) when measured, else Quant's:
// that of the same bits, interpolated in log(width); bits not measured
// take the nearest measured bits.
func (r *Rates) QuantSeconds(rows int64, width int, w quant.Wire, decode bool) float64 {
	if w.Exact() || rows == 0 || width == 0 {
		return 0
	}
	bits := w.Bits
	qs := r.Quant
	if r.Exchange != nil {
		qs = r.Exchange.Quant
	}
	var pts []QuantRate
	nearest := -1
	for _, q := range qs {
		if nearest < 0 || abs(q.Bits-bits) < abs(nearest-bits) {
			nearest = q.Bits
		}
	}
	for _, q := range qs {
		if q.Bits == nearest {
			pts = append(pts, q)
		}
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].Width < pts[j].Width })
	gbs := interpLog(len(pts), func(i int) (int, float64) {
		if decode {
			return pts[i].Width, pts[i].DecodeGBs
		}
		return pts[i].Width, pts[i].EncodeGBs
	}, width)
	return float64(rows) * float64(width) * 4 / (gbs * 1e9)
}

// RowSeconds is the time to gather rows rows of width values into the
// send buffer (scatter false) or to add them from the receive buffer into
// their rows (scatter true), at Exchange's rates; without them, one
// aggregation entry a row (the exchange's products hold one entry for
// each such row).
func (r *Rates) RowSeconds(rows int64, width int, scatter, transpose bool) float64 {
	if rows == 0 || width == 0 {
		return 0
	}
	if r.Exchange == nil {
		return r.AggrSeconds(rows, width, transpose)
	}
	x := r.Exchange.RowRates
	gbs := interpLog(len(x), func(i int) (int, float64) {
		if scatter {
			return x[i].Width, x[i].ScatterGBs
		}
		return x[i].Width, x[i].GatherGBs
	}, width)
	return float64(rows) * float64(width) * 4 / (gbs * 1e9)
}

// HaloSeconds is the time of the cut-edge products' entries·width
// entry·values (RowRate.HaloGUPS, interpolated in log width) when every
// row rate has it, else AggrSeconds (older profiles).
func (r *Rates) HaloSeconds(entries int64, width int, transpose bool) float64 {
	if entries == 0 || width == 0 {
		return 0
	}
	if r.Exchange == nil || len(r.Exchange.RowRates) == 0 {
		return r.AggrSeconds(entries, width, transpose)
	}
	x := r.Exchange.RowRates
	for _, w := range x {
		if w.HaloGUPS == 0 {
			return r.AggrSeconds(entries, width, transpose)
		}
	}
	gups := interpLog(len(x), func(i int) (int, float64) { return x[i].Width, x[i].HaloGUPS }, width)
	return float64(entries) * float64(width) / (gups * 1e9)
}

// ElemSeconds is the time of element-wise passes moving bytes bytes.
func (r *Rates) ElemSeconds(bytes float64) float64 { return bytes / (r.ElemGBs * 1e9) }

// DropoutSeconds, LayerNormSeconds: forward and backward over values values;
// SoftmaxSeconds: the loss and gradient of values logits.
func (r *Rates) DropoutSeconds(values float64) float64   { return values / (r.DropoutGVs * 1e9) }
func (r *Rates) LayerNormSeconds(values float64) float64 { return values / (r.LayerNormGVs * 1e9) }
func (r *Rates) SoftmaxSeconds(values float64) float64   { return values / (r.SoftmaxGVs * 1e9) }

// HiddenSeconds is the fused hidden stage (forward and backward) over
// values values, with or without its LayerNorm and dropout; false when
// the profile did not measure it (Hidden empty).
func (r *Rates) HiddenSeconds(values float64, layerNorm, dropout bool) (float64, bool) {
	gvs, ok := r.hiddenRate(layerNorm, dropout)
	if !ok {
		return 0, false
	}
	return values / (gvs * 1e9), true
}

// interpLog interpolates the rate y at x linearly in log(x) between n
// points (x ascending), holding the end values outside them.
func interpLog(n int, at func(i int) (int, float64), x int) float64 {
	x0, y0 := at(0)
	if n == 1 || x <= x0 {
		return y0
	}
	for i := 1; i < n; i++ {
		x1, y1 := at(i)
		if x <= x1 {
			t := math.Log(float64(x)/float64(x0)) / math.Log(float64(x1)/float64(x0))
			return y0 + t*(y1-y0)
		}
		x0, y0 = x1, y1
	}
	return y0
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// GraphSizeNote returns a one-line note when the profile's aggregation
// rates were measured on a working set far from the prediction's: the
// graph nodes the copies of each entry held together (AggrNodes·Copies)
// more than twice or less than half hostNodes, the graph nodes one machine
// holds in the prediction. A graph whose rows fit the caches aggregates
// faster, so such rates are too fast for a larger graph and too slow for a
// smaller one. "" when they agree or the profile does not record AggrNodes.
func (p *Profile) GraphSizeNote(hostNodes int64) string {
	lo, hi := int64(0), int64(0)
	for _, rs := range [][]Rates{p.Rates, p.Loads} {
		for i := range rs {
			if rs[i].AggrNodes <= 0 {
				continue
			}
			n := int64(rs[i].AggrNodes) * int64(max(rs[i].Copies, 1))
			if lo == 0 || n < lo {
				lo = n
			}
			hi = max(hi, n)
		}
	}
	if lo == 0 || hostNodes <= 0 || (2*lo >= hostNodes && hi <= 2*hostNodes) {
		return ""
	}
	held := fmt.Sprintf("%d", hi)
	if hi > lo+lo/100 { // copies share the nodes with integer division
		held = fmt.Sprintf("%d–%d", lo, hi)
	}
	return fmt.Sprintf("profile %s measured the aggregation with %s graph nodes on the machine, this prediction puts %d there: its aggregation rates are those of another working set",
		p.Name, held, hostNodes)
}

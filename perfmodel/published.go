package perfmodel

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/supergcn/supergcn/quant"
)

// Hardware is a node described by published figures, from which
// FromHardware derives a Profile with the stated efficiency assumptions.
type Hardware struct {
	Name         string
	Source       string
	CoresPerNode int
	// Domains: memory domains per node (A64FX CMGs, Xeon sockets); each
	// has CoresPerNode/Domains cores and StreamGBs of bandwidth.
	Domains   int
	StreamGBs float64 // STREAM triad per domain, GB/s
	GHz       float64 // sustained clock under vector load
	// FP32FlopsPerCycle per core (FMA pipes × lanes × 2).
	FP32FlopsPerCycle float64
	// Encode/Decode: bytes of fp32 rows the quantisation codec handles
	// per core cycle (an assumption: the codec is Go with small SIMD
	// kernels; see docs/SCALING.md).
	EncodeBytesPerCycle, DecodeBytesPerCycle float64
	Threads                                  []int // thread counts to tabulate (each divides a domain's cores)
}

// Efficiency assumptions of FromHardware (docs/SCALING.md states them):
const (
	// aggrStreamFraction: the row gather of sparse aggregation reaches
	// this fraction of STREAM triad bandwidth.
	aggrStreamFraction = 0.5
	// gemmPeakFraction: the best tall-skinny GEMM reaches this fraction of
	// peak FP32; below it the roofline of the shape limits it.
	gemmPeakFraction = 0.7
	// elemStreamFraction: element-wise passes reach this fraction of STREAM.
	elemStreamFraction = 0.8
	// intraStreamFraction: MPI shared-memory copies between ranks reach
	// this fraction of the rank's STREAM share.
	intraStreamFraction = 0.5
	intraLatencyUS      = 1.0
)

var profileWidths = []int{16, 32, 64, 128, 256}

// hardware holds the published nodes.
var hardware = map[string]Hardware{
	"a64fx": {
		Name: "a64fx",
		Source: "Fujitsu A64FX (Fugaku): 48 compute cores in 4 CMGs of 12, 2.0 GHz (2.2 GHz boost), two 512-bit SVE FMA pipes " +
			"(64 FP32 flop/cycle/core), HBM2 256 GB/s per CMG (Fujitsu A64FX Microarchitecture Manual; Sato et al., SC20, " +
			"\"Co-design for A64FX manycore processor and Fugaku\"); STREAM triad taken as 80% of HBM2 peak (205 GB/s per CMG, " +
			"~820 GB/s per node as reported for Fugaku). Codec 0.4 / 0.8 B/cycle/core encode/decode assumed (NEON kernels, " +
			"narrower out-of-order core than Xeon).",
		CoresPerNode: 48, Domains: 4, StreamGBs: 205, GHz: 2.0, FP32FlopsPerCycle: 64,
		EncodeBytesPerCycle: 0.4, DecodeBytesPerCycle: 0.8, Threads: []int{1, 2, 3, 4, 6, 12},
	},
	"xeon-gold-6148": {
		Name: "xeon-gold-6148",
		Source: "2-socket Intel Xeon Gold 6148 node: 2×20 cores, 2.4 GHz base (AVX-512 sustained ~2.0 GHz assumed), two AVX-512 FMA " +
			"units (64 FP32 flop/cycle/core), 6 DDR4-2666 channels per socket = 128 GB/s peak (Intel ARK); STREAM triad taken " +
			"as 80% of peak (102 GB/s per socket). Codec 1.0 / 2.0 B/cycle/core encode/decode assumed (about what one thread " +
			"of the 16-core Xeon profile reaches at width 100: docs/RESULTS.md).",
		CoresPerNode: 40, Domains: 2, StreamGBs: 102, GHz: 2.0, FP32FlopsPerCycle: 64,
		EncodeBytesPerCycle: 1.0, DecodeBytesPerCycle: 2.0, Threads: []int{1, 2, 4, 5, 10, 20},
	},
}

// PublishedNames lists the hardware FromPublished knows.
func PublishedNames() []string {
	var n []string
	for k := range hardware {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// FromPublished derives the profile of a published node (PublishedNames).
func FromPublished(name string) (*Profile, error) {
	h, ok := hardware[name]
	if !ok {
		return nil, fmt.Errorf("unknown hardware %q (known: %s)", name, strings.Join(PublishedNames(), ", "))
	}
	return FromHardware(h), nil
}

// FromHardware derives a Profile: each rank with T threads while the node
// is full has T/(cores per domain) of its domain's STREAM bandwidth and T
// cores' peak. Aggregation moves 4 bytes a value plus an index and a weight
// a edge (4+8/width bytes an edge·value) at aggrStreamFraction of STREAM;
// a GEMM of small dimensions K, N over many rows runs at the roofline
// min(gemmPeakFraction·peak, intensity·STREAM) with intensity
// 2KN/(4(K+N)) flops a byte; element-wise passes at elemStreamFraction of
// STREAM; the codec at its bytes per cycle, capped by the bandwidth.
func FromHardware(h Hardware) *Profile {
	perDomain := h.CoresPerNode / h.Domains
	p := &Profile{Name: h.Name, Source: "derived from published figures (perfmodel.FromHardware): " + h.Source,
		CoresPerNode: h.CoresPerNode,
		IntraNode: Link{LatencyUS: intraLatencyUS, GBs: intraStreamFraction * h.StreamGBs / float64(perDomain),
			Efficiency: 1}}
	for _, t := range h.Threads {
		stream := h.StreamGBs * float64(t) / float64(perDomain)
		peak := float64(t) * h.GHz * h.FP32FlopsPerCycle
		r := Rates{Threads: t, Copies: h.CoresPerNode / t, ElemGBs: elemStreamFraction * stream, StreamGBs: stream}
		// dropout (18 bytes a value, forward and backward, and a 16-bit
		// random draw) and LayerNorm (40 bytes a value) at the element-wise
		// bandwidth or one value per core cycle, whichever is slower; the
		// loss at 20 cycles a logit (exponential, row maximum and sum).
		cycles := float64(t) * h.GHz
		r.DropoutGVs = math.Min(r.ElemGBs/18, cycles)
		r.LayerNormGVs = math.Min(r.ElemGBs/40, cycles)
		r.SoftmaxGVs = cycles / 20
		for _, w := range profileWidths {
			g := aggrStreamFraction * stream / (4 + 8/float64(w))
			r.Aggr = append(r.Aggr, AggrRate{Width: w, Forward: g, Transpose: g})
		}
		for _, op := range []string{"nn", "tn", "nt"} {
			for _, k := range []int{32, 128, 256} {
				for _, n := range []int{32, 128, 256} {
					ai := 2 * float64(k) * float64(n) / (4 * float64(k+n))
					r.Gemm = append(r.Gemm, GemmRate{Op: op, K: k, N: n, GFLOPS: math.Min(gemmPeakFraction*peak, ai*stream)})
				}
			}
		}
		for _, b := range quant.QuantisedWidths() {
			for _, w := range profileWidths {
				enc := math.Min(float64(t)*h.GHz*h.EncodeBytesPerCycle, stream)
				dec := math.Min(float64(t)*h.GHz*h.DecodeBytesPerCycle, stream)
				r.Quant = append(r.Quant, QuantRate{Bits: b, Width: w, EncodeGBs: enc, DecodeGBs: dec})
			}
		}
		p.Rates = append(p.Rates, r)
	}
	return p
}

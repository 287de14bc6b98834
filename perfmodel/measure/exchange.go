package measure

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/perfmodel"
	"github.com/supergcn/supergcn/quant"
)

// windowWidth is the width of the shared-window measurement (the GCN
// rows' first layer aggregates 100 features; 128 is a profile width).
const windowWidth = 128

// measureWindow times the exchange's shared window as train runs it with
// no spare core (perfmodel.ExchangeRates.ShareFactor): the local product
// (op at windowWidth, t threads) on its own goroutine while this
// goroutine, the exchange's driver, encodes sz.ExchangeRows int2 rows in
// sz.Peers blocks as often as it takes to last about as long, with
// GOMAXPROCS t+1 as train sets it. The codec splits its blocks over t
// threads as the local product does, so the ideal window is local +
// encoding, the two measured alone just before. It returns the median over
// the repetitions of the window's wall time over that: 1 when the cores
// are shared without loss.
func measureWindow(t int, sz Sizes, op *aggr.Op, f filler, st *Stepper) (float64, error) {
	n, w, xr := op.CSR().NumRows, windowWidth, sz.ExchangeRows
	c, err := quant.NewCodec(quant.Format{Bits: defaultBits(), Params: quant.ParamsBlock}, t, "")
	if err != nil {
		return 0, err
	}
	x, y, sbuf := f.fill(dense.New(n, w)), dense.New(n, w), f.fill(dense.New(xr, w))
	off := make([]int, sz.Peers+1)
	enc := make([][]byte, sz.Peers)
	for q := range enc {
		off[q+1] = (q + 1) * xr / sz.Peers
		d, p := c.Size(off[q+1]-off[q], w)
		enc[q] = make([]byte, d+p)
	}
	seed := uint64(0)
	encode := func() {
		for q := range enc {
			seed++
			c.Encode(enc[q], sbuf.Data[off[q]*w:off[q+1]*w], off[q+1]-off[q], w, seed)
		}
	}
	local := func() { op.Apply(x, y, false) }
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GC()
	var ratios []float64
	for rep := 0; rep <= sz.Reps; rep++ { // rep 0 warms up
		runtime.GOMAXPROCS(t)
		st.Sync()
		t0 := time.Now()
		local()
		tl := time.Since(t0).Seconds()
		st.Sync()
		t0 = time.Now()
		encode()
		te := time.Since(t0).Seconds()
		k := max(1, int(math.Round(tl/te)))
		runtime.GOMAXPROCS(t + 1)
		done := make(chan struct{})
		st.Sync() // every copy's window at once, as every rank's in train
		t0 = time.Now()
		go func() {
			defer close(done)
			local()
		}()
		for range k {
			encode()
		}
		<-done
		wall := time.Since(t0).Seconds()
		if rep > 0 {
			ratios = append(ratios, wall/(tl+float64(k)*te)) // both on t threads: their CPU over t cores
		}
	}
	return perfmodel.Median(ratios), nil
}

// xbuffers are one exchange pattern's index sets: sz.ExchangeRows buffer
// rows in sz.Peers blocks (off), gathered from feature rows src and added
// into output rows dst, both ascending within a block.
type xbuffers struct {
	off      []int
	src, dst []int32
}

func newXBuffers(sz Sizes, rng *rand.Rand) xbuffers {
	n, xr := sz.Rows, sz.ExchangeRows
	b := xbuffers{off: make([]int, sz.Peers+1), src: make([]int32, xr), dst: make([]int32, xr)}
	for q := range b.off {
		b.off[q] = q * xr / sz.Peers
	}
	for q := 0; q < sz.Peers; q++ {
		for i := b.off[q]; i < b.off[q+1]; i++ {
			b.src[i], b.dst[i] = int32(rng.IntN(n)), int32(rng.IntN(n))
		}
		slices.Sort(b.src[b.off[q]:b.off[q+1]])
		slices.Sort(b.dst[b.off[q]:b.off[q+1]])
	}
	return b
}

// exchangeRates times one boundary exchange's passes in the order an
// exchange runs them, on buffers of its sizes (perfmodel.ExchangeRates):
// sz.ExchangeRows send-buffer rows gathered by the aggregation engine (one
// entry a row, as the send product holds for a post row) from a feature
// matrix of sz.Rows rows, encoded in sz.Peers blocks, decoded block by
// block into the receive buffer, and added by the engine into sz.Rows
// output rows. Within a peer's block the rows are ascending, as the
// exchange plans them. Each repetition walks every buffer once, so none is
// cache-hot unless it fits in the cache; the medians are kept.
func exchangeRates(t int, sz Sizes, f filler, st *Stepper) (*perfmodel.ExchangeRates, error) {
	n, xr := sz.Rows, sz.ExchangeRows
	xb := newXBuffers(sz, f.rng)
	eng, err := aggr.New(t, "")
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	ptr := make([]int64, xr+1)
	for i := range ptr {
		ptr[i] = int64(i)
	}
	gather := eng.Prepare(&graph.CSR{NumRows: xr, NumCols: n, Ptr: ptr, Idx: xb.src})
	rows := make([]int32, xr)
	for i := range rows {
		rows[i] = int32(i)
	}
	scatter := eng.PrepareIndexAdd(xb.dst, rows, n, xr)
	halo := eng.Prepare(haloCSR(n, xr, sz.HaloFan, f.rng))
	bits := quant.QuantisedWidths()
	codecs := make([]*quant.Codec, len(bits))
	for i, b := range bits {
		if codecs[i], err = quant.NewCodec(quant.Format{Bits: b, Params: quant.ParamsBlock}, t, ""); err != nil {
			return nil, err
		}
	}
	x := &perfmodel.ExchangeRates{Rows: xr, Peers: sz.Peers, HaloFan: sz.HaloFan}
	for _, w := range Widths {
		p := xpass{xb: xb, w: w, feat: f.fill(dense.New(n, w)), out: dense.New(n, w),
			sbuf: dense.New(xr, w), rbuf: dense.New(xr, w), gather: gather, scatter: scatter, halo: halo}
		tm, err := p.time(codecs, sz.Reps, st)
		if err != nil {
			return nil, err
		}
		gb := float64(xr) * float64(w) * 4 / 1e9
		x.RowRates = append(x.RowRates, perfmodel.RowRate{Width: w, GatherGBs: gb / perfmodel.Median(tm.gather), ScatterGBs: gb / perfmodel.Median(tm.scatter),
			HaloGUPS: float64(len(halo.CSR().Idx)) * float64(w) / perfmodel.Median(tm.halo) / 1e9})
		for i, b := range bits {
			x.Quant = append(x.Quant, perfmodel.QuantRate{Bits: b, Width: w, EncodeGBs: gb / perfmodel.Median(tm.enc[i]), DecodeGBs: gb / perfmodel.Median(tm.dec[i])})
		}
	}
	return x, nil
}

// xpass is the exchange pattern at one width.
type xpass struct {
	xb                    xbuffers
	w                     int
	feat, out, sbuf, rbuf *dense.Matrix
	gather, scatter, halo *aggr.Op
}

// xtimes are the seconds of each timed repetition, per pass (and codec).
type xtimes struct {
	gather, scatter, halo []float64
	enc, dec              [][]float64
}

// time runs the pattern reps+1 times with every codec (the first a
// warm-up) and returns the timed repetitions' seconds.
func (p *xpass) time(codecs []*quant.Codec, reps int, st *Stepper) (xtimes, error) {
	w, off := p.w, p.xb.off
	tm := xtimes{enc: make([][]float64, len(codecs)), dec: make([][]float64, len(codecs))}
	encs := make([][][]byte, len(codecs)) // per codec and peer, reused as the exchange reuses its buffers
	for i, c := range codecs {
		encs[i] = make([][]byte, len(off)-1)
		for q := range encs[i] {
			d, pb := c.Size(off[q+1]-off[q], w)
			encs[i][q] = make([]byte, d+pb)
		}
	}
	seed := uint64(0)
	runtime.GC()
	for rep := 0; rep <= reps; rep++ { // rep 0 warms up
		for i, c := range codecs {
			enc := encs[i]
			st.Sync()
			t0 := time.Now()
			p.gather.Apply(p.feat, p.sbuf, false)
			t1 := time.Now()
			for q := range enc {
				seed++
				c.Encode(enc[q], p.sbuf.Data[off[q]*w:off[q+1]*w], off[q+1]-off[q], w, seed)
			}
			t2 := time.Now()
			for q := range enc {
				if err := c.Decode(p.rbuf.Data[off[q]*w:off[q+1]*w], enc[q], off[q+1]-off[q], w); err != nil {
					return tm, err
				}
			}
			t3 := time.Now()
			p.scatter.Apply(p.rbuf, p.out, true)
			t4 := time.Now()
			p.halo.Apply(p.rbuf, p.out, true)
			t5 := time.Now()
			if rep > 0 {
				tm.gather = append(tm.gather, t1.Sub(t0).Seconds())
				tm.enc[i] = append(tm.enc[i], t2.Sub(t1).Seconds())
				tm.dec[i] = append(tm.dec[i], t3.Sub(t2).Seconds())
				tm.scatter = append(tm.scatter, t4.Sub(t3).Seconds())
				tm.halo = append(tm.halo, t5.Sub(t4).Seconds())
			}
		}
	}
	return tm, nil
}

// haloCSR is the cut-edge product of an exchange (the halo product H of
// the forward pass, or the send product's transpose Sᵀ of the backward):
// n local rows, each adding rows read from a buffer of xr exchange rows,
// fan·xr entries in all (Sizes.HaloFan; a 16-part products partition has
// 2.4 cut edges per hybrid row, 1.53 M for 0.64 M rows a rank, and 1.8
// per post row), at random positions (ascending within a row, as the
// exchange plans them). Unlike the local graph, which train orders for
// locality, these reads scatter over the whole buffer.
func haloCSR(n, xr, fan int, rng *rand.Rand) *graph.CSR {
	h := &graph.CSR{NumRows: n, NumCols: xr, Ptr: make([]int64, n+1), Idx: make([]int32, fan*xr)}
	for i := range h.Idx {
		h.Idx[i] = int32(rng.IntN(xr))
	}
	per := make([]int, n)
	for i := 0; i < fan*xr; i++ {
		per[rng.IntN(n)]++
	}
	for v := 0; v < n; v++ {
		h.Ptr[v+1] = h.Ptr[v] + int64(per[v])
		slices.Sort(h.Idx[h.Ptr[v]:h.Ptr[v+1]])
	}
	return h
}

// defaultBits is the width training sends boundary rows at by default with
// several ranks (quant.AutoBits): the codec of the shared window and of a
// profile's headline line.
func defaultBits() int { return quant.AutoBits(2) }

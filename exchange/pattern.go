package exchange

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/quant"
)

// The exchange patterns the automatic choice picks from (ChooseExchange);
// every pattern is a row of the pattern table (patterns.go).
const (
	ExchangeFlat     = "flat"
	ExchangeTwoLevel = "two-level"
	// ExchangeTwoLevelPaired is two-level with NodePairOptions.Paired: each
	// rank sends to and receives from one rank of every other node.
	ExchangeTwoLevelPaired = "two-level-paired"
)

// ChooseExchange is the exchange that runs for kind (a ParseExchange
// result) on the node layout: kind itself, or for "" the automatic rule,
// two-level when the ranks span several nodes and some node has several,
// flat otherwise. New and the performance model both resolve through it.
func ChooseExchange(kind string, nodes *comm.Nodes) string {
	if kind != "" {
		return kind
	}
	big := false
	for _, rs := range nodes.Ranks {
		big = big || len(rs) > 1
	}
	if nodes.NumNodes() > 1 && big {
		return ExchangeTwoLevel
	}
	return ExchangeFlat
}

// pattern is how a rank's boundary rows move: the flat exchange (one
// all-to-all of every rank pair's rows, flat.go) or the two-level one
// (cut edges planned per node pair, rows inside nodes through the node
// communicator, twolevel.go). The Propagator is the driver every pattern
// shares: it scales the rows, runs the local product on its own goroutine
// while the pattern moves the rows on the driver's (transferRows, with its
// timers and codecs), and adds the received rows, scaled (Forward,
// Backward).
type pattern interface {
	// describe is the plan's one-line summary for Options.Logf.
	describe(plan PlanStats) string
	// sendForward writes the rows to send from xs = R∘x, before the local
	// product starts (aggregation time).
	sendForward(xs *dense.Matrix)
	// moveForward moves them on the driver goroutine; done closes when the
	// local product has finished.
	moveForward(d *Propagator, ps nn.Pass, done <-chan struct{}) error
	// addForward adds the received rows, scaled by left (L; nil: ones),
	// into out.
	addForward(out *dense.Matrix, left []float32)
	// sendBackward, moveBackward and addBackward are the transpose: the
	// gradient rows g = L∘gout go back the way the rows came.
	sendBackward(g *dense.Matrix)
	moveBackward(d *Propagator, ps nn.Pass, done <-chan struct{}) error
	addBackward(gx *dense.Matrix, right []float32)
}

// finishPass is the tail of every Forward and Backward, flat or two-level:
// add adds the received rows (scaled) into the output; the time counts as
// aggregation, and *count (Forwards or Backwards) goes up.
func (p *Propagator) finishPass(count *int, add func()) {
	t := p.c.Wtime()
	add()
	p.lap(t, &p.stats.AggrSeconds)
	*count++
}

// codecFor returns the codec of pass ps in the given direction (nil for
// float32 rows: no codec set, or an exact pass) and its random stream (see
// passSeed): evaluation has its own codec and streams.
func (p *Propagator) codecFor(ps nn.Pass, backward bool) (RowCodec, uint64) {
	role, stream := quant.Forward, uint64(0)
	if backward {
		role, stream = quant.Backward, 1
	}
	if !ps.Train {
		role, stream = quant.Eval, stream+2
	}
	if ps.Exact {
		return nil, stream
	}
	return p.codecs[role], stream
}

// peerCodecs is codecFor per peer of a transfer on the world
// communicator: ranks of this rank's node (sameNode) get intraCodec's, the
// others the pass's. It returns nil (float32 for every peer) when no peer
// has a codec.
func (p *Propagator) peerCodecs(ps nn.Pass, backward bool, sameNode []bool) ([]RowCodec, uint64) {
	codec, stream := p.codecFor(ps, backward)
	intra := p.intraCodec(ps, backward)
	if codec == nil && intra == nil {
		return nil, stream
	}
	cs := make([]RowCodec, len(sameNode))
	for q, same := range sameNode {
		cs[q] = codec
		if same || q == p.c.Rank() { // nothing goes to this rank itself
			cs[q] = intra
		}
	}
	return cs, stream
}

// uniformCodecs is one codec for each of n peers (nil: float32 rows).
func uniformCodecs(codec RowCodec, n int) []RowCodec {
	if codec == nil {
		return nil
	}
	cs := make([]RowCodec, n)
	for q := range cs {
		cs[q] = codec
	}
	return cs
}

// intraCodec is the codec of the rows between ranks of this rank's node in
// pass ps: the Intra codec when the pass's role has a codec, nil (float32)
// when it has none (a float32 pass, or an exact one, stays float32
// throughout).
func (p *Propagator) intraCodec(ps nn.Pass, backward bool) RowCodec {
	if codec, _ := p.codecFor(ps, backward); codec == nil {
		return nil
	}
	return p.codecs[quant.Intra]
}

// pollInterval is how often the exchange drives MPI's progress engine.
const pollInterval = 50 * time.Microsecond

// overlap runs local on its own goroutine while stages runs on this one
// (done closes when local has finished), then waits for local.
func (p *Propagator) overlap(local func(), stages func(done <-chan struct{}) error) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		local()
	}()
	err := stages(done)
	t := p.c.Wtime()
	<-done
	p.lap(t, &p.stats.AggrSeconds)
	return err
}

// overlapPosted is overlap with the local product held back until the
// driver has posted its first transfer (or stages has returned). Encoding
// the rows then runs alone on the rank's threads and the rows leave as soon
// as they can. Run beside the local product, the codec would share the
// cores with it and the link would idle until both were through.
func (p *Propagator) overlapPosted(local func(), stages func(done <-chan struct{}) error) error {
	start := make(chan struct{})
	p.posted = sync.OnceFunc(func() { close(start) })
	defer func() { p.posted = nil }()
	return p.overlap(func() {
		<-start
		local()
	}, func(done <-chan struct{}) error {
		err := stages(done)
		p.posted()
		return err
	})
}

// transferRows moves tr's rows (float32, or through their peers' codecs)
// on the driver goroutine while the local product runs on its own (done
// closes when it has finished; under overlapPosted it starts once the rows
// are posted): the rows are encoded, posted, driven
// through MPI (polling, when the request is a comm.Tester, since MPI moves
// a non-blocking collective mostly inside MPI calls) and decoded as soon
// as they land.
//
// Time is that of the driver, the critical path: encoding and decoding in
// quant_s, posting the all-to-all (which waits for the last rank to
// arrive) in sync_s, moving rows in comm_s; what is left of the local
// product after all the pattern's transfers is aggr_s (overlap).
func (p *Propagator) transferRows(tr *transfer, ps nn.Pass, stream uint64, done <-chan struct{}) error {
	t := p.c.Wtime()
	var (
		req  comm.Request
		enc  *encoded
		sent sentBytes
		err  error
	)
	if !tr.coded() {
		req, sent, err = tr.startF32()
	} else {
		req, enc, sent, err = p.startCoded(tr, ps, stream, &t)
	}
	if p.posted != nil {
		p.posted()
	}
	if err != nil {
		return fmt.Errorf("all-to-all: %w", err)
	}
	p.stats.DataBytes += sent.data
	p.stats.ParamBytes += sent.param
	p.stats.CommBytes += sent.data + sent.param
	p.stats.IntraBytes += sent.intra
	t = p.lap(t, &p.stats.SyncSeconds)

	if err := complete(req, done); err != nil {
		return err
	}
	t = p.lap(t, &p.stats.CommSeconds)
	if enc != nil {
		err = tr.decode(enc)
		p.lap(t, &p.stats.QuantSeconds)
	}
	return err
}

// startCoded posts a coded transfer: a split one's float32 rows first,
// straight from the rows (they move while the codec runs), then the
// encoded blocks; the encoding time goes to quant_s (from *t, which moves
// on).
func (p *Propagator) startCoded(tr *transfer, ps nn.Pass, stream uint64, t *float64) (comm.Request, *encoded, sentBytes, error) {
	var (
		plain comm.Request
		sent  sentBytes
		err   error
	)
	if tr.split() {
		if plain, sent, err = tr.startF32(); err != nil {
			return nil, nil, sent, err
		}
		*t = p.lap(*t, &p.stats.SyncSeconds) // posting waits for every rank, as startBytes does
	}
	seed := func(peer int) uint64 {
		return passSeed(ps, uint64(p.c.Rank()), uint64(peer), stream)
	}
	enc, coded := tr.encode(seed, &p.byteSend, &p.byteRec)
	sent.data, sent.param, sent.intra = sent.data+coded.data, sent.param+coded.param, sent.intra+coded.intra
	*t = p.lap(*t, &p.stats.QuantSeconds)
	req, err := tr.startBytes(enc)
	if plain == nil {
		return req, enc, sent, err
	}
	if err != nil {
		return nil, nil, sent, errors.Join(err, plain.Wait())
	}
	return allOf(plain, req), enc, sent, nil
}

// requests completes several requests as one: Test is true once each has
// tested complete (a request that cannot be tested waits in Wait); Wait
// waits for those left and returns the first error.
type requests struct {
	rs   []comm.Request
	done []bool
}

// allOf is the requests rs completed as one.
func allOf(rs ...comm.Request) *requests {
	return &requests{rs: rs, done: make([]bool, len(rs))}
}

func (r *requests) Test() (bool, error) {
	all := true
	for i, q := range r.rs {
		if r.done[i] {
			continue
		}
		tq, ok := q.(comm.Tester)
		if !ok {
			all = false
			continue
		}
		fin, err := tq.Test()
		if err != nil {
			return false, err
		}
		r.done[i], all = fin, all && fin
	}
	return all, nil
}

func (r *requests) Wait() error {
	var first error
	for i, q := range r.rs {
		if r.done[i] {
			continue
		}
		if err := q.Wait(); err != nil && first == nil {
			first = err
		}
		r.done[i] = true
	}
	return first
}

// complete finishes req: polling it (comm.Tester) while the local product
// runs, then, once that is done, waiting inside MPI.
func complete(req comm.Request, done <-chan struct{}) error {
	t, ok := req.(comm.Tester)
	if !ok {
		return req.Wait()
	}
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return req.Wait()
		case <-tick.C:
			finished, err := t.Test()
			if err != nil || finished {
				return err
			}
		}
	}
}

// passSeed mixes pass, rank, peer and stream (0/1: training forward/backward,
// 2/3: evaluation) into one random-stream seed
// (splitmix64 finalizer over a running hash).
func passSeed(ps nn.Pass, rank, peer, dir uint64) uint64 {
	h := uint64(0x9e3779b97f4a7c15)
	for _, v := range []uint64{uint64(ps.Epoch), uint64(ps.Layer), rank, peer, dir} {
		h ^= v + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2)
		h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9
		h = (h ^ (h >> 27)) * 0x94d049bb133111eb
		h ^= h >> 31
	}
	return h
}

// lap adds the time since t to *acc and returns the current time.
func (p *Propagator) lap(t float64, acc *float64) float64 {
	now := p.c.Wtime()
	*acc += now - t
	return now
}

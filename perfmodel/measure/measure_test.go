package measure

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/perfmodel"
)

// TestMeasureRates: one worker's measurement on tiny sizes gives a rate
// for every entry a prediction needs, and the median of copies is a valid
// profile.
func TestMeasureRates(t *testing.T) {
	r, err := Rates(1, Sizes{Nodes: 2000, Degree: 8, Rows: 512, Reps: 1, ExchangeRows: 2048, Peers: 3, HaloFan: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Aggr) != len(Widths) || len(r.Gemm) != 27 || len(r.Quant) != 3*len(Widths) {
		t.Fatalf("%d aggr, %d gemm, %d quant rates", len(r.Aggr), len(r.Gemm), len(r.Quant))
	}
	if len(r.Hidden) != 4 || r.LayerNormGVs != 0 {
		t.Fatalf("fused hidden stage: %+v (LayerNorm alone %v): want its four variants, no separate LayerNorm", r.Hidden, r.LayerNormGVs)
	}
	if a := r.Attention; a == nil || len(a.Score) != len(attnScoreHeads) || !(a.Score[0].Forward > 0 && a.Score[0].Backward > 0) || len(a.Aggr) != len(attnWidths) || !(a.Aggr[0].Forward > 0 && a.Aggr[0].Transpose > 0) {
		t.Fatalf("attention rates: %+v", a)
	}
	if x := r.Exchange; x == nil || x.Rows != 2048 || x.Peers != 3 || x.HaloFan != 2 || len(x.RowRates) != len(Widths) || len(x.Quant) != 3*len(Widths) {
		t.Fatalf("exchange pattern: %+v", x)
	}
	if err := r.Exchange.Quant[0].EncodeGBs; !(err > 0) {
		t.Errorf("exchange-pattern encode rate %v", err)
	}
	for _, w := range r.Exchange.RowRates {
		if !(w.HaloGUPS > 0) {
			t.Errorf("width %d: halo rate %v, want measured (positive)", w.Width, w.HaloGUPS)
		}
	}
	if x := r.Exchange; !(x.ShareFactor > 0) || x.ShareFactorMax != x.ShareFactor {
		t.Errorf("shared window: factor %v, max %v (one copy: want both the same, positive)", x.ShareFactor, x.ShareFactorMax)
	}
	// the median below must be a valid profile, whatever the tiny timing gave
	r.Exchange.ShareFactor, r.Exchange.ShareFactorMax = 1.1, 1.1
	if n, err := Rates(1, Sizes{Nodes: 2000, Degree: 8, Rows: 512, Reps: 1}, nil); err != nil || n.Exchange != nil {
		t.Errorf("--exchange-rows 0: exchange %+v, %v", n.Exchange, err)
	}
	r2 := r
	r2.ElemGBs *= 3
	x2 := *r.Exchange
	x2.RowRates = append([]perfmodel.RowRate(nil), x2.RowRates...)
	x2.RowRates[0].GatherGBs *= 5
	x2.RowRates[0].HaloGUPS *= 5
	x2.ShareFactor, x2.ShareFactorMax = 1.7, 1.7
	r2.Exchange = &x2
	m := MedianRates([]perfmodel.Rates{r, r2, r})
	if m.ElemGBs != r.ElemGBs || m.Exchange.RowRates[0].GatherGBs != r.Exchange.RowRates[0].GatherGBs ||
		m.Exchange.RowRates[0].HaloGUPS != r.Exchange.RowRates[0].HaloGUPS {
		t.Errorf("median of %v, %v, %v = %v", r.ElemGBs, r2.ElemGBs, r.ElemGBs, m.ElemGBs)
	}
	if x := m.Exchange; x.ShareFactor != 1.1 || x.ShareFactorMax != 1.7 {
		t.Errorf("shared window over copies 1.1, 1.7, 1.1: median %v, max %v; want 1.1, 1.7", x.ShareFactor, x.ShareFactorMax)
	}
	if m.Straggle != 1 { // the slowest copy is the median one in every entry
		t.Errorf("straggle of copies r, r2 (faster), r: %v, want 1", m.Straggle)
	}
	if m.Exchange == r.Exchange || &m.Exchange.RowRates[0] == &r.Exchange.RowRates[0] {
		t.Error("the median shares the copies' exchange rates")
	}
	m.Copies = 1 // set by bench profile from the job's layout
	p := &perfmodel.Profile{Name: "t", CoresPerNode: 1, IntraNode: perfmodel.Link{LatencyUS: 1, GBs: 1, Efficiency: 0.5}, Rates: []perfmodel.Rates{m}}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "p.json")
	if err := perfmodel.WriteProfile(path, p); err != nil {
		t.Fatal(err)
	}
	if _, err := perfmodel.LoadProfile(path); err != nil {
		t.Fatal(err)
	}
}

// TestTrainLayout: the profile's aggregation graph is the generated graph
// renumbered (the same multiset of degrees, every edge kept), with a
// self-loop at the end of every row and no weights, as the exchange's GCN
// local product holds it.
func TestTrainLayout(t *testing.T) {
	spec, err := graph.ParseGenSpec("nodes=3000,degree=12,classes=5,feat=0,threads=1")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := graph.Generate(spec)
	if err != nil {
		t.Fatal(err)
	}
	g := ds.Graph
	n, nnz := g.NumRows, g.NNZ()
	degs := make([]int64, n)
	for v := range degs {
		degs[v] = g.Degree(v)
	}
	a, err := TrainLayout(ds)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	if a.NumRows != n || a.NNZ() != nnz+int64(n) || a.Val != nil {
		t.Fatalf("%d rows, %d entries, weights %v; want %d, %d + %d self-loops, none", a.NumRows, a.NNZ(), a.Val != nil, n, nnz, n)
	}
	got := make([]int64, n)
	for v := 0; v < n; v++ {
		if a.Idx[a.Ptr[v+1]-1] != int32(v) {
			t.Fatalf("row %d does not end with its self-loop", v)
		}
		got[v] = a.Degree(v) - 1
	}
	slices.Sort(degs)
	slices.Sort(got)
	if !slices.Equal(degs, got) {
		t.Error("the degrees are not those of the generated graph renumbered")
	}
}

// TestLockstep: no copy passes a step before every copy has reached it
// (each copy counts its arrivals; after a sync every copy has arrived),
// and when a copy ends early the others go on alone instead of waiting.
func TestLockstep(t *testing.T) {
	const copies, steps = 4, 50
	ready, next := make([]*os.File, copies), make([]*os.File, copies)
	sts := make([]*Stepper, copies)
	for i := range sts {
		rr, rw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		nr, nw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		ready[i], next[i], sts[i] = rr, nw, &Stepper{ready: rw, next: nr}
	}
	stepped := make(chan struct{})
	go func() { defer close(stepped); stepCopies(ready, next) }()
	var arrived [steps]atomic.Int32
	var wg sync.WaitGroup
	bad := make(chan string, copies*steps)
	for i, st := range sts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := steps
			if i == 0 {
				n = steps / 2 // ends early
			}
			for k := 0; k < n; k++ {
				arrived[k].Add(1)
				st.Sync()
				if k < steps/2 && arrived[k].Load() != copies {
					bad <- fmt.Sprintf("copy %d passed step %d with %d of %d copies there", i, k, arrived[k].Load(), copies)
				}
			}
			st.ready.Close() // the copy exits
		}()
	}
	wg.Wait()
	<-stepped
	close(bad)
	for m := range bad {
		t.Error(m)
	}
	for k := steps / 2; k < steps; k++ {
		if arrived[k].Load() != copies-1 {
			t.Fatalf("step %d: %d copies, want %d (the others go on after copy 0 ends)", k, arrived[k].Load(), copies-1)
		}
	}
	var none *Stepper
	none.Sync() // alone: returns at once
}

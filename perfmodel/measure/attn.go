package measure

import (
	"errors"
	"runtime"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/attn"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/perfmodel"
)

// The attention kernels are timed on the first rows of the aggregation
// graph holding at most attnEdges edges (every column kept), at head
// widths attnWidths in rows of attnRow values (attnRow/width heads, at
// least one: the narrow widths run the kernels' path for several narrow
// heads), with training's attention dropout.
const (
	attnEdges = 1 << 21
	attnRow   = 64
	attnDrop  = 0.5
	attnSlope = 0.2
)

var attnWidths = []int{8, 16, 32, 64, 128}

// attnScoreHeads are the head counts of the score rates.
var attnScoreHeads = []int{1, 2, 4, 8}

// attnRates times the attention kernels (attn.Forward, attn.Backward) on
// a's first rows and splits a pass into its two parts
// (perfmodel.AttentionRates): the scores, from passes one value wide a
// head at each count of attnScoreHeads (their one weighted value a head
// counted with the score), and the weighted aggregation at each head
// width, the rest of a pass once its scores at that head count are taken
// out (at least a tenth of the pass, a floor against the noise of the
// subtraction).
func attnRates(r *perfmodel.Rates, a *graph.CSR, eng *aggr.Engine, sz Sizes, st *Stepper, f filler) error {
	rows := 0
	for rows < a.NumRows && a.Ptr[rows+1] <= attnEdges {
		rows++
	}
	rows = max(rows, 1)
	g, err := attn.NewGraph(rows, a.NumCols, a.Ptr[:rows+1], a.Idx[:a.Ptr[rows]])
	if err != nil {
		return err
	}
	e := int64(g.Edges())
	if e == 0 {
		return nil
	}
	kern := eng.RowsW()
	spec := func(h, w int) attn.Spec {
		return attn.Spec{Heads: h, Width: w, Slope: attnSlope, Drop: attnDrop, Seed: 1}
	}
	at := &perfmodel.AttentionRates{}
	for _, h := range attnScoreHeads {
		fwd, bwd, err := attnPass(g, spec(h, 1), kern, sz.Reps, st, f)
		if err != nil {
			return err
		}
		n := float64(e) * float64(h)
		at.Score = append(at.Score, perfmodel.ScoreRate{Heads: h, Forward: n / fwd / 1e9, Backward: n / bwd / 1e9})
	}
	for _, w := range attnWidths {
		h := max(1, attnRow/w)
		fwd, bwd, err := attnPass(g, spec(h, w), kern, sz.Reps, st, f)
		if err != nil {
			return err
		}
		rest := func(s float64, backward bool) float64 {
			return float64(e) * float64(h*w) / max(s-at.ScoreSeconds(e, h, backward), s/10) / 1e9
		}
		at.Aggr = append(at.Aggr, perfmodel.AggrRate{Width: w, Forward: rest(fwd, false), Transpose: rest(bwd, true)})
	}
	r.Attention = at
	return nil
}

// attnPass times one forward and one backward pass of sp over g, in
// seconds (medians of reps).
func attnPass(g *attn.Graph, sp attn.Spec, kern attn.RowsW, reps int, st *Stepper, f filler) (fwd, bwd float64, err error) {
	hf := sp.Heads * sp.Width
	vec := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(f.rng.NormFloat64())
		}
		return v
	}
	z, src, dst := vec(g.Cols*hf), vec(g.Cols*sp.Heads), vec(g.Rows*sp.Heads)
	gp, cd := vec(g.Rows*hf), vec(g.Rows*sp.Heads)
	gz, gsrc, gdst := make([]float32, len(z)), make([]float32, len(src)), make([]float32, len(dst))
	var s attn.State
	var sc attn.Scratch
	runtime.GC()
	var ferr, berr error
	fwd = st.timeStep(func() { ferr = attn.Forward(g, sp, z, src, dst, attn.Ids{}, kern, &s) }, reps)
	bwd = st.timeStep(func() {
		if ferr == nil {
			berr = attn.Backward(g, sp, z, src, dst, gp, cd, kern, &s, &sc, gz, gsrc, gdst)
		}
	}, reps)
	return fwd / 1e3, bwd / 1e3, errors.Join(ferr, berr)
}

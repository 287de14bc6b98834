package exchange

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
	"github.com/supergcn/supergcn/quant"
)

// TestExactPassIgnoresCodecs: a pass with nn.Pass.Exact sends float32 rows
// whatever the codecs, so it equals the codec-free exchange bit for bit,
// flat and two-level.
func TestExactPassIgnoresCodecs(t *testing.T) {
	const n, p, w = 200, 4, 12
	rng := rand.New(rand.NewPCG(21, 22))
	ds := randomDataset(rng, n, 4, 0)
	owner := ownerKinds(rng, n, 0, p)["random"]
	x := randomMatrix(rng, n, w)
	for _, ex := range []string{ExchangeFlat, ExchangeTwoLevel} {
		run := func(o Options, pass nn.Pass) (fwd, bwd *dense.Matrix, err error) {
			o.Exchange = ex
			return gatheredNodes(ds, owner, p, 2, nn.OpMean, o, ex, pass, x)
		}
		base := Options{Mode: "hybrid"}
		q := base
		q.Codecs = roleCodecs(quantBits{bits: 2}, quantBits{bits: 2}, nil, quantBits{bits: 2})
		wantF, wantB, err := run(base, nn.Pass{Train: true})
		if err != nil {
			t.Fatal(ex, err)
		}
		gotF, gotB, err := run(q, nn.Pass{Train: true, Exact: true})
		if err != nil {
			t.Fatal(ex, err)
		}
		if !slices.Equal(gotF.Data, wantF.Data) || !slices.Equal(gotB.Data, wantB.Data) {
			t.Fatalf("%s: exact pass through 2-bit codecs differs from the float32 exchange", ex)
		}
		lossyF, _, err := run(q, nn.Pass{Train: true})
		if err != nil {
			t.Fatal(ex, err)
		}
		if slices.Equal(lossyF.Data, wantF.Data) {
			t.Fatalf("%s: 2-bit codec gave the exact result: codec not used", ex)
		}
	}
}

// TestModelEvalCacheDistributed: at several ranks, evaluation logits with
// the first-layer aggregate cached (nn.Model.SetEvalInput) equal those
// computed every pass, bit for bit with a float32 exchange, for GCN and
// SAGE with and without LayerNorm, over several weight updates, with one
// exchange forward fewer per evaluation after the first; with an int2
// evaluation codec the aggregate is still exact (the first layer's output
// equals the float32 exchange's).
func TestModelEvalCacheDistributed(t *testing.T) {
	const n, p, in = 150, 3, 6
	rng := rand.New(rand.NewPCG(23, 24))
	ds := randomDataset(rng, n, 5, in)
	owner := ownerKinds(rng, n, 0, p)["random"]
	for _, model := range []string{"gcn", "sage"} {
		for _, norm := range []string{"none", "layer"} {
			t.Run(model+"/"+norm, func(t *testing.T) {
				kind, err := nn.ModelOp(model)
				if err != nil {
					t.Fatal(err)
				}
				cfg := nn.Config{Model: model, Layers: 3, In: in, Hidden: 16, Out: 4, Norm: norm, Seed: 9}
				err = comm.RunGroupNodes(p, 1, func(c comm.Comm) error { // a node a rank: the codecs apply
					s := partition.Split(ds, owner, c.Rank(), p)
					prop, err := New(s, c, testEngine(), kind, Options{Mode: "hybrid"})
					if err != nil {
						return err
					}
					ref, err := nn.NewModel(cfg, prop)
					if err != nil {
						return err
					}
					got, err := nn.NewModel(cfg, prop)
					if err != nil {
						return err
					}
					x := &dense.Matrix{Rows: len(s.Global), Cols: in, Data: graph.DenseData(s.Features)}
					got.SetEvalInput(x)
					for epoch := range 3 {
						for _, m := range []*nn.Model{ref, got} {
							for _, pr := range m.Params() {
								for i := range pr.W {
									pr.W[i] *= 1 + 0.01*float32(epoch)
								}
							}
						}
						want, err := ref.Forward(nn.Pass{Epoch: epoch}, x)
						if err != nil {
							return err
						}
						want = cloneM(want)
						fwd := prop.Stats().Forwards
						have, err := got.Forward(nn.Pass{Epoch: epoch}, x)
						if err != nil {
							return err
						}
						if !slices.Equal(have.Data, want.Data) {
							return fmt.Errorf("rank %d epoch %d: cached evaluation logits differ", c.Rank(), epoch)
						}
						if calls, wantCalls := prop.Stats().Forwards-fwd, 3-min(epoch, 1); calls != wantCalls {
							return fmt.Errorf("rank %d epoch %d: %d exchange forwards, want %d", c.Rank(), epoch, calls, wantCalls)
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				// With a lossy evaluation codec the aggregate is exact.
				err = comm.RunGroupNodes(p, 1, func(c comm.Comm) error { // a node a rank: the codecs apply
					s := partition.Split(ds, owner, c.Rank(), p)
					codec, err := quant.NewCodec(quant.Format{Bits: 2}, 1, "")
					if err != nil {
						return err
					}
					lossy, err := New(s, c, testEngine(), kind, Options{Mode: "hybrid", Codecs: roleCodecs(nil, nil, codec, nil)})
					if err != nil {
						return err
					}
					exact, err := New(s, c, testEngine(), kind, Options{Mode: "hybrid"})
					if err != nil {
						return err
					}
					x := &dense.Matrix{Rows: len(s.Global), Cols: in, Data: graph.DenseData(s.Features)}
					// A one-layer model's evaluation output is the first
					// layer's: through the aggregate on the lossy exchange
					// it equals the float32 exchange's.
					one := cfg
					one.Layers, one.Out = 1, 16
					a, err := nn.NewModel(one, lossy)
					if err != nil {
						return err
					}
					b, err := nn.NewModel(one, exact)
					if err != nil {
						return err
					}
					a.SetEvalInput(x)
					la, err := a.Forward(nn.Pass{}, x)
					if err != nil {
						return err
					}
					la = cloneM(la)
					lb, err := b.Forward(nn.Pass{}, x)
					if err != nil {
						return err
					}
					if !slices.Equal(la.Data, lb.Data) {
						return fmt.Errorf("rank %d: first layer with a 2-bit evaluation codec differs from the float32 exchange: aggregate not exact", c.Rank())
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

func cloneM(m *dense.Matrix) *dense.Matrix {
	return &dense.Matrix{Rows: m.Rows, Cols: m.Cols, Data: slices.Clone(m.Data)}
}

package train

import (
	"cmp"
	"os"
	"testing"

	"github.com/supergcn/supergcn/comm"
	"github.com/supergcn/supergcn/graph"
	"github.com/supergcn/supergcn/nn"
	"github.com/supergcn/supergcn/partition"
)

// BenchmarkEvalPass times the evaluation pass after the first (which
// computes the evaluation aggregate when it is kept) of one process on a
// products-like graph ($SUPERGCN_BENCH_SPEC, default
// "products,nodes=200000"), GCN 2×128 and SAGE 3×256 LayerNorm, with
// the evaluation aggregate kept (EvalCacheOn) and without (EvalCacheOff),
// on 2 threads; -count N repeats the four one after the other:
//
//	go test -tags "$TAGS" -run '^$' -bench EvalPass -benchtime 5x -count 5 ./train/
func BenchmarkEvalPass(b *testing.B) {
	spec, err := graph.ParseGenSpec(cmp.Or(os.Getenv("SUPERGCN_BENCH_SPEC"), "products,nodes=200000"))
	if err != nil {
		b.Fatal(err)
	}
	ds, err := graph.Generate(spec)
	if err != nil {
		b.Fatal(err)
	}
	models := []struct {
		name string
		mc   nn.Config
	}{
		{"gcn2x128", nn.Config{Model: "gcn", Layers: 2, Hidden: 128, Dropout: 0.5, Norm: "none"}},
		{"sage3x256ln", nn.Config{Model: "sage", Layers: 3, Hidden: 256, Dropout: 0.5, Norm: "layer"}},
	}
	for _, m := range models {
		for _, cache := range []string{EvalCacheOn, EvalCacheOff} {
			b.Run(m.name+"/"+cache, func(b *testing.B) {
				cfg := Config{Model: m.mc, LR: 0.01, Epochs: 1, Seed: 1, Threads: 2, AggrMode: "hybrid", Exchange: "auto", EvalCache: cache, Quiet: true}
				tr, err := newTrainer(cfg, partition.Split(ds, make([]int32, ds.NumNodes()), 0, 1), comm.Single())
				if err != nil {
					b.Fatal(err)
				}
				if _, _, err := tr.evaluate(1); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for range b.N {
					if _, _, err := tr.evaluate(1); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

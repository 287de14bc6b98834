package train

import (
	"math"
	"testing"
)

// TestCoraBF16 trains Cora with bfloat16 products (GCN and SAGE; the
// tile unit where the CPU has it, else emulated): the model still reaches
// the float32 model's accuracy, its losses follow the float32 run's
// closely, and they are not the float32 run's bits (the precision is in
// effect). With 2 ranks and no dropout it is the same computation as with
// one (the dense products' operands are rounded the same way; only the
// aggregation's float32 sums are split differently): losses agree to 1e-4.
func TestCoraBF16(t *testing.T) {
	ds := cora(t)
	for _, model := range []string{"gcn", "sage"} {
		epochs := 200 // GCN: Kipf & Welling's run, whose accuracy is known
		if model == "sage" {
			epochs = 40
		}
		cfg := kipfConfig(model, 1, epochs, 0.5)
		ref := single(t, ds, cfg)
		cfg.Model.Precision = "bf16"
		got := single(t, ds, cfg)
		t.Logf("%s: fp32 test %.4f, bf16 test %.4f; last loss %.4f / %.4f", model,
			ref.Final.LastTest, got.Final.LastTest, ref.Epochs[len(ref.Epochs)-1].Loss, got.Epochs[len(got.Epochs)-1].Loss)
		if model == "gcn" && got.Final.LastTest < ref.Final.LastTest-0.02 {
			t.Errorf("%s: bf16 test accuracy %.4f, fp32 %.4f", model, got.Final.LastTest, ref.Final.LastTest)
		}
		same := true
		for e := range ref.Epochs {
			a, b := ref.Epochs[e].Loss, got.Epochs[e].Loss
			if a != b {
				same = false
			}
			if e < 20 && math.Abs(a-b) > 0.01*a {
				t.Errorf("%s epoch %d: loss fp32 %.6f, bf16 %.6f", model, e+1, a, b)
			}
		}
		if same {
			t.Errorf("%s: bf16 losses are the fp32 losses bit for bit: the precision had no effect", model)
		}
		// Two ranks, no dropout: the same computation as one rank.
		cfg.Model.Dropout = 0
		cfg.Epochs = 10
		one := single(t, ds, cfg)
		owner := make([]int32, ds.NumNodes())
		for i := range owner {
			owner[i] = int32(i % 2)
		}
		two := distributed(t, ds, owner, 2, cfg)
		for e := range one.Epochs {
			if a, b := one.Epochs[e].Loss, two.Epochs[e].Loss; math.Abs(a-b) > 1e-4*a {
				t.Errorf("%s epoch %d: bf16 loss one rank %.6f, two ranks %.6f", model, e+1, a, b)
			}
		}
	}
}

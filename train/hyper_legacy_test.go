package train

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/supergcn/supergcn/internal/container"
)

// Checkpoints of older builds held k, alpha and train-eps as the model's
// fields K, Alpha and TrainEps: such a file (a checkpoint of this build
// with its header rewritten to that form) loads with the hyperparameters
// in nn.Config.Hyper, and resuming it continues exactly as resuming the
// file of this build does.
func TestCheckpointOlderHyperFields(t *testing.T) {
	ds := cora(t)
	for _, c := range []struct {
		model string
		hyper map[string]float64
		old   map[string]any
	}{
		{"appnp", map[string]float64{"k": 5, "alpha": 0.2}, map[string]any{"K": 5, "Alpha": 0.2}},
		{"gin", map[string]float64{"train-eps": 1}, map[string]any{"TrainEps": true}},
	} {
		t.Run(c.model, func(t *testing.T) {
			dir := t.TempDir()
			cfg := kipfConfig(c.model, 3, 3, 0.5)
			cfg.Model.Hyper = c.hyper
			cfg.SavePath = filepath.Join(dir, "new.ckpt")
			single(t, ds, cfg)
			old := filepath.Join(dir, "old.ckpt")
			writeOlderHeader(t, cfg.SavePath, old, c.old)
			ck, err := LoadCheckpoint(old)
			if err != nil {
				t.Fatal(err)
			}
			want := cfg.Model
			want.In, want.Out = ck.Model.In, ck.Model.Out // filled from the data
			if !ck.Model.Equal(want) || len(ck.Model.Hyper) != len(c.hyper) {
				t.Fatalf("older header decoded as %+v, want %+v", ck.Model, cfg.Model)
			}
			var res [2]*Result
			for i, path := range []string{cfg.SavePath, old} {
				r := cfg
				r.Epochs, r.SavePath, r.ResumePath = 5, "", path
				res[i] = single(t, ds, r)
			}
			for i, m := range res[1].Epochs {
				if r := res[0].Epochs[i]; m.Loss != r.Loss || m.ValAcc != r.ValAcc {
					t.Fatalf("epoch %d resumed from the older header: loss %v val %v; from this build's: %v %v", m.Epoch, m.Loss, m.ValAcc, r.Loss, r.ValAcc)
				}
			}
		})
	}
}

// writeOlderHeader copies checkpoint from to to with the model's Hyper
// replaced by fields (the form of older builds), checksummed again.
func writeOlderHeader(t *testing.T, from, to string, fields map[string]any) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	off := container.PrefixSize
	n := int(binary.LittleEndian.Uint32(b[off:]))
	var h map[string]any
	if err := json.Unmarshal(b[off+4:off+4+n], &h); err != nil {
		t.Fatal(err)
	}
	model := h["model"].(map[string]any)
	delete(model, "Hyper")
	for k, v := range fields {
		model[k] = v
	}
	js, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	out.Write(b[:off])
	out.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(js))))
	out.Write(js)
	out.Write(b[off+4+n : len(b)-4])
	out.Write(binary.LittleEndian.AppendUint32(nil, container.Checksum(out.Bytes())))
	if err := os.WriteFile(to, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

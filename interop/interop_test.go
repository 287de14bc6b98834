package interop

import (
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/supergcn/supergcn/nn"
)

func sample() ([]Tensor, map[string]string) {
	ts := []Tensor{
		{Name: "b.weight", Shape: []int{2, 3}, Data: []float32{1, 2, 3, 4, 5, -6.5}},
		{Name: "a.bias", Shape: []int{3}, Data: []float32{0.25, -1, 7}},
		{Name: "att", Shape: []int{1, 2, 1}, Data: []float32{3, 4}},
		{Name: "empty", Shape: []int{0, 4}, Data: []float32{}},
	}
	return ts, map[string]string{"model": "gcn", "note": "ünïcode ✓"}
}

// TestRoundTrip: safetensors and npz files decode to the tensors (in
// order) and the metadata written, through WriteFile and ReadFile.
func TestRoundTrip(t *testing.T) {
	ts, meta := sample()
	dir := t.TempDir()
	for _, name := range []string{"m.safetensors", "m.npz"} {
		path := filepath.Join(dir, name)
		if err := WriteFile(path, ts, meta); err != nil {
			t.Fatal(err)
		}
		got, gm, err := ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, ts) {
			t.Errorf("%s: tensors %+v, want %+v", name, got, ts)
		}
		if !reflect.DeepEqual(gm, meta) {
			t.Errorf("%s: metadata %v, want %v", name, gm, meta)
		}
		if _, err := os.Stat(path + ".tmp"); err == nil {
			t.Errorf("%s: temporary left", name)
		}
	}
	if err := WriteFile(filepath.Join(dir, "m.pt"), ts, meta); err == nil || !strings.Contains(err.Error(), "m.pt") {
		t.Errorf("bad extension: %v", err)
	}
	bad := append(ts[:1:1], Tensor{Name: "x", Shape: []int{2}, Data: []float32{1}})
	if err := WriteFile(filepath.Join(dir, "bad.npz"), bad, nil); err == nil {
		t.Error("short tensor written")
	}
}

// TestSafetensorsLayout: the file is the format's: an 8-byte little-endian
// header length, JSON with F32 entries, data at the offsets.
func TestSafetensorsLayout(t *testing.T) {
	ts, meta := sample()
	b, err := EncodeSafetensors(ts, meta)
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(b)
	if (8+n)%8 != 0 {
		t.Errorf("header length %d leaves the data unaligned", n)
	}
	var h map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &h); err != nil {
		t.Fatal(err)
	}
	var e stEntry
	json.Unmarshal(h["a.bias"], &e)
	if e.Dtype != "F32" || !reflect.DeepEqual(e.Shape, []int{3}) || e.Offsets != [2]int64{24, 36} {
		t.Errorf("a.bias entry %+v", e)
	}
	if v := binary.LittleEndian.Uint32(b[8+n+24:]); v != 0x3e800000 { // 0.25
		t.Errorf("a.bias[0] bits %#x", v)
	}
	for _, cut := range []int{0, 7, 8 + int(n) - 1, len(b) - 1} {
		if _, _, err := DecodeSafetensors(b[:cut]); err == nil {
			t.Errorf("truncated at %d decoded", cut)
		}
	}
}

// TestExportImport: every model's parameters come out under their PyG
// names in PyTorch's layouts (a linear weight transposed, GAT's attention
// vectors 1×heads×width, vectors flat) and Import maps them back exactly.
func TestExportImport(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []nn.Config{
		{Model: "gcn", Layers: 2, In: 5, Hidden: 4, Out: 3, Norm: "layer"},
		{Model: "sage", Layers: 2, In: 5, Hidden: 4, Out: 3},
		{Model: "gin", Layers: 2, In: 5, Hidden: 4, Out: 3, Hyper: map[string]float64{"train-eps": 1}},
		{Model: "sgc", Layers: 1, In: 5, Out: 3},
		{Model: "appnp", Layers: 2, In: 5, Hidden: 4, Out: 3},
		{Model: "gat", Layers: 2, In: 5, Hidden: 4, Out: 3, Heads: 2, OutHeads: 3},
	} {
		shapes, err := c.ParamShapes()
		if err != nil {
			t.Fatal(err)
		}
		m := Model{Config: c, FeatNorm: "row", Params: map[string][]float32{}}
		for _, s := range shapes {
			w := make([]float32, s.Rows*s.Cols)
			for i := range w {
				w[i] = r.Float32()
			}
			m.Params[s.Name] = w
		}
		ts, meta, err := Export(m)
		if err != nil {
			t.Fatal(err)
		}
		if meta["model"] != c.Model || meta["feat_norm"] != "row" || meta["in_dim"] != "5" || meta["classes"] != "3" {
			t.Errorf("%s: metadata %v", c.Model, meta)
		}
		want := map[string][]int{
			"gcn":   {4, 5}, // conv0.lin.weight [out, in]
			"sage":  {4, 5},
			"gin":   {4, 5},
			"sgc":   {3, 5},
			"appnp": {4, 5},
			"gat":   {4, 5},
		}[c.Model]
		if !reflect.DeepEqual(ts[0].Shape, want) {
			t.Errorf("%s: %s shape %v, want %v", c.Model, ts[0].Name, ts[0].Shape, want)
		}
		// [out, in] holds W[in][out]: element (o, i) is W[i*out+o]
		s0 := shapes[0]
		if got, w := ts[0].Data[1*s0.Rows+2], m.Params[s0.Name][2*s0.Cols+1]; got != w {
			t.Errorf("%s: exported (1,2) = %g, W(2,1) = %g", c.Model, got, w)
		}
		for i, tn := range ts {
			if tn.Name != shapes[i].Name {
				t.Errorf("%s: tensor %d is %s, parameter %s", c.Model, i, tn.Name, shapes[i].Name)
			}
			if len(tn.Shape) == 2 && tn.Shape[0] == 1 {
				t.Errorf("%s: %s exported as %v, not flat", c.Model, tn.Name, tn.Shape)
			}
		}
		if c.Model == "gat" {
			if !reflect.DeepEqual(ts[1].Shape, []int{1, 2, 2}) || meta["heads"] != "2" || meta["out_heads"] != "3" {
				t.Errorf("gat: att_src %v, metadata %v", ts[1].Shape, meta)
			}
		}
		back, err := Import(c, ts)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, m.Params) {
			t.Errorf("%s: import differs from the exported parameters", c.Model)
		}
	}
}

// TestImportErrors: a missing, extra or misshapen tensor is one error
// naming it; PyG's older lin_src name and 1×n vectors are accepted.
func TestImportErrors(t *testing.T) {
	c := nn.Config{Model: "gat", Layers: 2, In: 5, Hidden: 4, Out: 3, Heads: 2}
	shapes, _ := c.ParamShapes()
	m := Model{Config: c, Params: map[string][]float32{}}
	for _, s := range shapes {
		m.Params[s.Name] = make([]float32, s.Rows*s.Cols)
	}
	ts, _, err := Export(m)
	if err != nil {
		t.Fatal(err)
	}
	alias := append([]Tensor(nil), ts...)
	alias[0].Name = "conv0.lin_src.weight"
	alias[3].Shape = []int{1, 4} // conv0.bias as 1×4
	if _, err := Import(c, alias); err != nil {
		t.Errorf("lin_src and a 1×n bias refused: %v", err)
	}
	for _, tc := range []struct {
		ts   []Tensor
		want string
	}{
		{ts[1:], "conv0.lin.weight (shape [4 5]) is missing"},
		{append(append([]Tensor(nil), ts...), Tensor{Name: "extra", Shape: []int{1}, Data: []float32{0}}), "tensor extra is not a parameter"},
		{append([]Tensor{{Name: "conv0.lin.weight", Shape: []int{5, 4}, Data: make([]float32, 20)}}, ts[1:]...), "tensor conv0.lin.weight has shape [5 4], the model's needs [4 5]"},
	} {
		_, err := Import(c, tc.ts)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("error %v, want one line with %q", err, tc.want)
		}
	}
	if _, _, err := Export(Model{Config: c, LabelProp: 0.5, Params: m.Params}); err == nil {
		t.Error("label propagation exported")
	}
}

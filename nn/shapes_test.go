package nn

import "testing"

// TestParamShapes: ParamShapes lists NewModel's parameters (names, shapes,
// weight flags, order) without building the model, and sums to NumParams.
func TestParamShapes(t *testing.T) {
	for _, c := range []Config{
		{Model: "gcn", Layers: 2, In: 5, Hidden: 4, Out: 3},
		{Model: "gcn", Layers: 3, In: 5, Hidden: 4, Out: 3, Norm: "layer"},
		{Model: "sage", Layers: 2, In: 5, Hidden: 4, Out: 3, Norm: "layer"},
		{Model: "gin", Layers: 2, In: 5, Hidden: 4, Out: 3, Hyper: map[string]float64{"train-eps": 1}},
		{Model: "sgc", Layers: 1, In: 5, Out: 3, Hyper: map[string]float64{"k": 3}},
		{Model: "appnp", Layers: 2, In: 5, Hidden: 4, Out: 3},
		{Model: "gat", Layers: 2, In: 5, Hidden: 4, Out: 3, Heads: 2, OutHeads: 3},
	} {
		shapes, err := c.ParamShapes()
		if err != nil {
			t.Fatalf("%s: %v", c.Model, err)
		}
		var n int64
		for _, s := range shapes {
			n += int64(s.Rows * s.Cols)
		}
		if n != c.NumParams() {
			t.Errorf("%s: shapes hold %d values, NumParams %d", c.Model, n, c.NumParams())
		}
		if c.Model == "gat" { // needs an Attention operator: the plan is the model's
			if shapes[1].Name != "conv0.att_src" || shapes[1].Rows != 2 || shapes[1].Cols != 2 || shapes[5].Rows != 3 || shapes[5].Cols != 3 {
				t.Errorf("gat shapes %+v", shapes)
			}
			continue
		}
		m, err := NewModel(c, &denseProp{a: gcnAdj(4, [][2]int{{0, 1}})})
		if err != nil {
			t.Fatal(err)
		}
		ps := m.Params()
		if len(ps) != len(shapes) {
			t.Fatalf("%s: %d shapes, %d params", c.Model, len(shapes), len(ps))
		}
		for i, p := range ps {
			s := shapes[i]
			if s.Name != p.Name || s.Rows != p.Rows || s.Cols != p.Cols || s.Weight != p.weight {
				t.Errorf("%s: shape %d is %+v, param %s %d×%d weight %v", c.Model, i, s, p.Name, p.Rows, p.Cols, p.weight)
			}
		}
	}
	if _, err := (Config{Model: "nope", Layers: 1, In: 1, Out: 1}).ParamShapes(); err == nil {
		t.Error("unknown model accepted")
	}
	if k, a := (Config{Model: "appnp"}).Steps(), (Config{Model: "appnp", Hyper: map[string]float64{"alpha": 0.2}}).Teleport(); k != 10 || a != 0.2 {
		t.Errorf("appnp steps %d, teleport %g", k, a)
	}
	if k, a := (Config{Model: "gcn"}).Steps(), (Config{Model: "gcn"}).Teleport(); k != 0 || a != 0 {
		t.Errorf("gcn steps %d, teleport %g", k, a)
	}
}

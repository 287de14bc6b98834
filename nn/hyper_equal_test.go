package nn

import "testing"

func TestConfigEqual(t *testing.T) {
	a := Config{Model: "gcnii", Layers: 4, In: 8, Hidden: 16, Out: 3}
	b := a
	b.Norm, b.JK, b.Precision = "none", "none", "fp32"
	b.Hyper = map[string]float64{"theta": 0.5} // the declared default
	if !a.Equal(b) {
		t.Fatalf("%+v and %+v differ only by defaults", a, b)
	}
	b.Hyper = map[string]float64{"theta": 0.6}
	if a.Equal(b) {
		t.Fatal("a different θ compared equal")
	}
	c := a
	c.JK = "cat"
	if a.Equal(c) {
		t.Fatal("--jk cat compared equal to none")
	}
}

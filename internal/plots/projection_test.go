package plots

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

func TestProjectionRendersAndRejects(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.png")
	s := []ProjectionSeries{
		{Name: "a", Ranks: []float64{64, 256, 1024}, EpochS: []float64{4, 1.5, 0.6}, Efficiency: []float64{0.5, 0.4, 0.2}},
		{Name: "b", Ranks: []float64{64, 1024}, EpochS: []float64{3, 0.5}, Efficiency: []float64{0.7, 0.3}},
	}
	if err := Projection(path, "t", s, []ProjectionRef{{Name: "paper", Ranks: 768, EpochS: 0.823}}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	// One partition predicted: one rank count and one time per series (the
	// log axes' range is empty; it panicked in gonum).
	one := []ProjectionSeries{{Name: "one", Ranks: []float64{1}, EpochS: []float64{0.01}, Efficiency: []float64{0.5}}}
	if err := Projection(filepath.Join(dir, "one.png"), "t", one, nil); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string][]ProjectionSeries{
		"none":        nil,
		"short":       {{Name: "x", Ranks: []float64{64, 128}, EpochS: []float64{1}, Efficiency: []float64{1, 1}}},
		"zero time":   {{Name: "x", Ranks: []float64{64}, EpochS: []float64{0}, Efficiency: []float64{1}}},
		"zero ranks":  {{Name: "x", Ranks: []float64{0}, EpochS: []float64{1}, Efficiency: []float64{1}}},
		"empty ranks": {{Name: "x"}},
	} {
		if err := Projection(filepath.Join(dir, name+".png"), "t", bad, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

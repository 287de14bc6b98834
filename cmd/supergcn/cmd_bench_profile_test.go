package main

import (
	"path/filepath"
	"testing"

	"github.com/supergcn/supergcn/perfmodel"
)

// TestMeasureRates: one worker's measurement on tiny sizes gives a rate
// for every entry a prediction needs, and the median of copies is a valid
// profile.
func TestMeasureRates(t *testing.T) {
	r, err := measureRates(1, profileSizes{nodes: 2000, degree: 8, rows: 512, reps: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Aggr) != len(profileWidths) || len(r.Gemm) != 27 || len(r.Quant) != 3*len(profileWidths) {
		t.Fatalf("%d aggr, %d gemm, %d quant rates", len(r.Aggr), len(r.Gemm), len(r.Quant))
	}
	r2 := r
	r2.ElemGBs *= 3
	m := medianRates([]perfmodel.Rates{r, r2, r})
	if m.ElemGBs != r.ElemGBs {
		t.Errorf("median of %v, %v, %v = %v", r.ElemGBs, r2.ElemGBs, r.ElemGBs, m.ElemGBs)
	}
	p := &perfmodel.Profile{Name: "t", CoresPerNode: 1, IntraNode: perfmodel.Link{LatencyUS: 1, GBs: 1, Efficiency: 0.5}, Rates: []perfmodel.Rates{m}}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "p.json")
	if err := writeProfile(path, p); err != nil {
		t.Fatal(err)
	}
	if _, err := perfmodel.LoadProfile(path); err != nil {
		t.Fatal(err)
	}
	if err := benchProfile([]string{"--published", "cray-1", "--out", path}); err == nil {
		t.Error("unknown published hardware accepted")
	}
	if err := benchProfile([]string{"--threads", "99", "--cores", "2", "--out", path}); err == nil {
		t.Error("--threads above --cores accepted")
	}
}

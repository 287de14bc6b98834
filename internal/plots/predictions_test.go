package plots

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestPredictions: predict --json lines parse into rows, one PNG per label
// with a series per profile × network × exchange; a bad line is refused
// with FILE:LINE.
func TestPredictions(t *testing.T) {
	lines := `{"label":"g","profile":"p","network":"n","aggr_mode":"hybrid","bits":2,"ranks":8,"epoch_s":0.5,"efficiency":0.4}

{"label":"g","profile":"p","network":"n","aggr_mode":"hybrid","bits":2,"ranks":2,"epoch_s":1.5,"efficiency":0.8}
{"profile":"p","network":"n","aggr_mode":"post","bits":32,"ranks":4,"epoch_s":1,"efficiency":0.6}
`
	rows, err := ParsePredictions("f.jsonl", []byte(lines))
	if err != nil || len(rows) != 3 || rows[1].Ranks != 2 || rows[2].Label != "" {
		t.Fatalf("%v: %+v", err, rows)
	}
	dir := t.TempDir()
	written, err := Projections(dir, rows, nil)
	want := []string{filepath.Join(dir, "projection-g.png"), filepath.Join(dir, "projection-predicted.png")}
	if err != nil || strings.Join(written, " ") != strings.Join(want, " ") {
		t.Errorf("wrote %v (%v), want %v", written, err, want)
	}
	for bad, msg := range map[string]string{
		"{}\n":  "f.jsonl:1: not a supergcn predict --json line",
		"\n[\n": "f.jsonl:2: ",
		`{"label":"a/b","ranks":1,"epoch_s":1,"efficiency":0.5}`: `f.jsonl:1: label "a/b" cannot name a PNG file`,
		`{"ranks":1,"epoch_s":1,"efficiency":-1}`:                "f.jsonl:1: efficiency -1",
	} {
		if _, err := ParsePredictions("f.jsonl", []byte(bad)); err == nil || !strings.HasPrefix(err.Error(), msg) {
			t.Errorf("%q: %v, want %q", bad, err, msg)
		}
	}
	if !ValidLabel("products-16") || ValidLabel(`a\b`) {
		t.Error("ValidLabel")
	}
}

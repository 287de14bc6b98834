package testdataset

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
)

// MetricsRecords reads a train --metrics file: its epoch records as JSON
// objects (the header and final records left out) and its last final
// record.
func MetricsRecords(t testing.TB, path string) (epochs []map[string]any, final map[string]any) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		switch {
		case m["final"] == true:
			final = m
		case m["header"] != true:
			epochs = append(epochs, m)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return epochs, final
}

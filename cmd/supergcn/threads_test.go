package main

import (
	"strings"
	"testing"
)

func TestThreadsFlag(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
		bad  bool
	}{{"auto", 0, false}, {"AUTO", 0, false}, {"Auto", 0, false}, {"3", 3, false}, {"0", 0, true}, {"-1", 0, true}, {"x", 0, true}} {
		var v threadsFlag = 7
		err := v.Set(c.in)
		if (err != nil) != c.bad || (!c.bad && int(v) != c.want) {
			t.Errorf("Set(%q) = %d, %v", c.in, v, err)
		}
	}
	if _, err := parseTrain([]string{"--threads", "0"}); err == nil || !strings.Contains(err.Error(), `"0" is not auto or a count ≥ 1`) {
		t.Errorf("train --threads 0: %v", err)
	}
}

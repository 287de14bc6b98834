package progress

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuf is a strings.Builder safe for the reporter's goroutine.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Not a terminal: one line per tick, with the elapsed time of an opaque
// step, and the fraction, rate and ETA of a counted one.
func TestLines(t *testing.T) {
	var out syncBuf
	tick := make(chan time.Time)
	r := &Reporter{W: &out, Tick: tick}
	s := r.Start("partition: METIS into 64 parts", 0, "")
	tick <- s.start.Add(30 * time.Second)
	tick <- s.start.Add(40 * time.Second)
	s.Done()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || lines[0] != "partition: METIS into 64 parts: running, 30s elapsed" || !strings.Contains(lines[1], "40s elapsed") {
		t.Fatalf("opaque step lines %q", lines)
	}

	out = syncBuf{}
	c := r.Start("load", 200, "parts")
	c.Add(50)
	tick <- c.start.Add(10 * time.Second)
	c.Done()
	c.Done()
	got := strings.TrimSpace(out.String())
	if got != "load  25% 50/200 parts, 5 parts/s, ETA 30s, 10s elapsed" {
		t.Fatalf("counted step line %q", got)
	}
}

// On a terminal the bar is redrawn in place and cleared at the end.
func TestTTYBar(t *testing.T) {
	var out syncBuf
	tick := make(chan time.Time)
	r := &Reporter{W: &out, TTY: true, Tick: tick}
	s := r.Start("train", 100, "epochs")
	s.Set(50)
	tick <- s.start.Add(5 * time.Second)
	s.Done()
	got := out.String()
	if !strings.HasPrefix(got, "\r\033[Ktrain [============            ]  50% 50/100 epochs, 10 epochs/s, ETA 5s") || !strings.HasSuffix(got, "\r\033[K") {
		t.Fatalf("bar %q", got)
	}
	if strings.Contains(got, "\n") {
		t.Fatalf("bar wrote a newline: %q", got)
	}
}

// A nil Reporter (quiet) reports nothing and its steps are no-ops.
func TestNilReporter(t *testing.T) {
	var r *Reporter
	s := r.Start("x", 10, "y")
	s.Add(3)
	s.Done()
}

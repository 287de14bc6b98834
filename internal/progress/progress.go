// Package progress reports long steps (loading, generating, partitioning)
// while they run: on a terminal a bar redrawn in place, with the rate and
// the time left when the step knows its total; otherwise (a job's output
// file) one line every Interval, so a 72-second METIS run is not silence.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Reporter writes the progress of one step at a time to W.
type Reporter struct {
	W        io.Writer
	TTY      bool          // redraw a bar in place (W is a terminal)
	Interval time.Duration // between lines when not a TTY (redraws on a TTY: Interval/50)
	// Tick, when set, replaces the wall-clock ticker (tests): every value
	// received is "now".
	Tick <-chan time.Time
}

// ForStderr returns a Reporter on standard error, as a bar when it is a
// terminal, otherwise a line every 10 s; nil (reports nothing) when quiet.
func ForStderr(quiet bool) *Reporter {
	if quiet {
		return nil
	}
	_, err := unix.IoctlGetTermios(int(os.Stderr.Fd()), unix.TCGETS)
	return &Reporter{W: os.Stderr, TTY: err == nil, Interval: 10 * time.Second}
}

// Step is one running step; Add and Set may be called from any goroutine.
type Step struct {
	r     *Reporter
	name  string
	unit  string
	total int64
	start time.Time

	mu   sync.Mutex
	done int64

	stop chan struct{}
	wg   sync.WaitGroup
}

// Start begins reporting the step name. total > 0 is the amount of work
// (in unit, e.g. "epochs", "parts"), 0 when unknown (only the elapsed
// time is shown). A nil Reporter returns a Step that reports nothing.
func (r *Reporter) Start(name string, total int64, unit string) *Step {
	s := &Step{r: r, name: name, unit: unit, total: total, start: time.Now(), stop: make(chan struct{})}
	if r == nil {
		return s
	}
	tick := r.Tick
	var t *time.Ticker
	if tick == nil {
		every := r.Interval
		if r.TTY {
			every = max(r.Interval/50, 100*time.Millisecond)
		}
		t = time.NewTicker(every)
		tick = t.C
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if t != nil {
			defer t.Stop()
		}
		for {
			select {
			case <-s.stop:
				return
			case now := <-tick:
				s.report(now)
			}
		}
	}()
	return s
}

// Add records n more units done.
func (s *Step) Add(n int64) {
	s.mu.Lock()
	s.done += n
	s.mu.Unlock()
}

// Set records the units done so far.
func (s *Step) Set(n int64) {
	s.mu.Lock()
	s.done = n
	s.mu.Unlock()
}

// Done ends the step (clearing the bar on a terminal). Safe on a nil
// Reporter's Step and when called twice.
func (s *Step) Done() {
	if s.r == nil {
		return
	}
	select {
	case <-s.stop:
		return
	default:
	}
	close(s.stop)
	s.wg.Wait()
	if s.r.TTY {
		fmt.Fprint(s.r.W, "\r\033[K")
	}
}

// Line is the report of the step at time now: name, elapsed time and, with
// a total, the fraction done, the rate and the time left.
func (s *Step) Line(now time.Time) string {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	el := now.Sub(s.start)
	if el < 0 {
		el = 0
	}
	var b strings.Builder
	b.WriteString(s.name)
	if s.total > 0 {
		frac := min(float64(done)/float64(s.total), 1)
		if s.r != nil && s.r.TTY {
			const width = 24
			n := int(frac * width)
			fmt.Fprintf(&b, " [%s%s]", strings.Repeat("=", n), strings.Repeat(" ", width-n))
		}
		fmt.Fprintf(&b, " %3.0f%% %d/%d %s", 100*frac, done, s.total, s.unit)
		if sec := el.Seconds(); sec > 0 && done > 0 {
			rate := float64(done) / sec
			left := time.Duration(float64(s.total-done) / rate * float64(time.Second))
			fmt.Fprintf(&b, ", %.3g %s/s, ETA %s", rate, s.unit, left.Round(time.Second))
		}
		fmt.Fprintf(&b, ", %s elapsed", el.Round(time.Second))
	} else {
		fmt.Fprintf(&b, ": running, %s elapsed", el.Round(time.Second))
	}
	return b.String()
}

func (s *Step) report(now time.Time) {
	line := s.Line(now)
	if s.r.TTY {
		fmt.Fprintf(s.r.W, "\r\033[K%s", line)
		return
	}
	fmt.Fprintln(s.r.W, line)
}

//go:build cgo

package metis

import (
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/supergcn/supergcn/graph"
)

// TestSignalDuringMetis: a SIGTERM from outside while METIS runs neither
// crashes the process (GKlib's longjmp handler on another thread) nor fails
// the call: it is held back and delivered to the Go runtime when METIS
// returns.
func TestSignalDuringMetis(t *testing.T) {
	s := graph.DefaultSpec
	s.Nodes, s.Degree, s.Feat, s.Seed = 120000, 12, 1, 3
	ds, err := graph.Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM)
	defer signal.Stop(sigs)
	type result struct {
		owner []int32
		err   error
	}
	done := make(chan result, 1)
	go func() {
		owner, err := Metis(ds.Graph, 16, Options{Seed: 1})
		done <- result{owner, err}
	}()
	time.Sleep(300 * time.Millisecond) // METIS runs for seconds on this graph
	syscall.Kill(syscall.Getpid(), syscall.SIGTERM)
	r := <-done
	if r.err != nil {
		t.Fatalf("METIS with a SIGTERM on the way: %v", r.err)
	}
	if len(r.owner) != ds.NumNodes() {
		t.Fatalf("%d owners for %d nodes", len(r.owner), ds.NumNodes())
	}
	select {
	case <-sigs:
	case <-time.After(10 * time.Second):
		t.Fatal("the SIGTERM held during METIS never reached the Go runtime")
	}
	// The Go runtime's handler is back: another SIGTERM is notified, not fatal.
	syscall.Kill(syscall.Getpid(), syscall.SIGTERM)
	select {
	case <-sigs:
	case <-time.After(10 * time.Second):
		t.Fatal("a SIGTERM after METIS was not notified")
	}
}

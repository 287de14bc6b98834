package procsig

import (
	"os"
	"syscall"
	"testing"
)

// TestHubQueues: signals delivered while no handler is set wait for the
// next one, in order; a nil handler keeps them queued; Handle returns the
// handler it replaced.
func TestHubQueues(t *testing.T) {
	hb := &hub{}
	hb.deliver(syscall.SIGTERM)
	hb.deliver(syscall.SIGUSR1)
	old := the
	defer func() { the = old }()
	the = hb
	if prev := Handle(nil); prev != nil {
		t.Fatal("a handler before any was set")
	}
	var got []os.Signal
	h := func(s os.Signal) { got = append(got, s) }
	Handle(h)
	if len(got) != 2 || got[0] != syscall.SIGTERM || got[1] != syscall.SIGUSR1 {
		t.Fatalf("queued signals: %v", got)
	}
	the.deliver(syscall.SIGHUP)
	if len(got) != 3 || got[2] != syscall.SIGHUP {
		t.Fatalf("delivered to the handler: %v", got)
	}
	if prev := Handle(nil); prev == nil {
		t.Fatal("Handle did not return the handler it replaced")
	}
	the.deliver(syscall.SIGINT)
	if len(got) != 3 || len(the.queue) != 1 {
		t.Fatalf("with no handler the signal is queued: %v, queue %v", got, the.queue)
	}
}

func TestStatus(t *testing.T) {
	if Status(syscall.SIGTERM) != 143 || Status(syscall.SIGUSR1) != 138 {
		t.Fatal(Status(syscall.SIGTERM), Status(syscall.SIGUSR1))
	}
}

// TestHold: while held, signals queue even with a handler; release hands
// them over.
func TestHold(t *testing.T) {
	old := the
	defer func() { the = old }()
	the = &hub{}
	var got []os.Signal
	Handle(func(s os.Signal) { got = append(got, s) })
	release := Hold()
	the.deliver(syscall.SIGUSR1)
	if len(got) != 0 {
		t.Fatalf("delivered while held: %v", got)
	}
	release()
	release()
	the.deliver(syscall.SIGTERM)
	if len(got) != 2 || got[0] != syscall.SIGUSR1 || got[1] != syscall.SIGTERM {
		t.Fatalf("after release: %v", got)
	}
}

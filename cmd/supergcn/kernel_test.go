package main

import (
	"strings"
	"testing"
	"time"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/internal/dispatch"
)

// TestCLIKernelNames: --kernel and SUPERGCN_KERNEL accept "auto" and any
// case of every kernel this CPU runs (in aggr and quant alike, so training
// starts), and an unknown or unavailable name is a one-line error naming
// the flag or the variable, before any data is read.
func TestCLIKernelNames(t *testing.T) {
	tiny := []string{"train", "--synthetic", "nodes=300,degree=4,classes=3,feat=8,seed=1", "--epochs", "1",
		"--hidden", "8", "--quiet", "--mpi", "off"}
	trainWith := func(extra ...string) result {
		t.Helper()
		return run(t, 2*time.Minute, nil, append(append([]string{}, tiny...), extra...)...)
	}
	oneLine := func(r result) bool { return strings.Count(strings.TrimSpace(r.stderr), "\n") == 0 }

	names := []string{"auto", "AUTO", " Auto "}
	for _, n := range aggr.Kernels() {
		names = append(names, n, strings.ToUpper(n))
	}
	for _, n := range names {
		if r := trainWith("--kernel", n); r.code != 0 {
			t.Errorf("--kernel %q: exit %d\n%s", n, r.code, r.stderr)
		}
	}
	best := aggr.Kernels()[0]
	t.Setenv(dispatch.Env, strings.ToUpper(best))
	if r := trainWith(); r.code != 0 {
		t.Errorf("%s=%s: exit %d\n%s", dispatch.Env, strings.ToUpper(best), r.code, r.stderr)
	}
	if r := run(t, time.Minute, nil, "info"); r.code != 0 || !strings.Contains(r.stdout, "aggregation kernel: "+best) ||
		!strings.Contains(r.stdout, "quantisation kernel: ") || !strings.Contains(r.stdout, "dense micro-kernels (") ||
		!strings.Contains(r.stdout, "attention kernels (gat, gatv2): ") {
		t.Errorf("info with %s=%s: exit %d\n%s%s", dispatch.Env, strings.ToUpper(best), r.code, r.stdout, r.stderr)
	}
	t.Setenv(dispatch.Env, dispatch.Generic)
	if r := run(t, time.Minute, nil, "info"); r.code != 0 || !strings.Contains(r.stdout, "attention kernels (gat, gatv2): generic") ||
		!strings.Contains(r.stdout, "(X·W and G·Wᵀ with W up to 256×256, bias gradients): generic") {
		t.Errorf("info with %s=generic: exit %d\n%s%s", dispatch.Env, r.code, r.stdout, r.stderr)
	}
	t.Setenv(dispatch.Env, "Auto")
	if r := trainWith(); r.code != 0 {
		t.Errorf("%s=Auto: exit %d\n%s", dispatch.Env, r.code, r.stderr)
	}

	var missing string // a known kernel this CPU cannot run, if any
	for _, n := range dispatch.Known() {
		if !dispatch.Supported(n) {
			missing = n
			break
		}
	}
	bad := []struct{ flag, env, want string }{
		{"avx9", "", "--kernel: unknown kernel \"avx9\""},
		{"", "Bogus", dispatch.Env + ": unknown kernel \"bogus\""},
	}
	if missing != "" {
		bad = append(bad,
			struct{ flag, env, want string }{strings.ToUpper(missing), "", "--kernel: kernel \"" + missing + "\" is not available"},
			struct{ flag, env, want string }{"", missing, dispatch.Env + ": kernel \"" + missing + "\" is not available"})
	}
	for _, c := range bad {
		t.Setenv(dispatch.Env, c.env)
		args := []string{"train", "--data", "/nonexistent/never-read", "--epochs", "1"}
		if c.flag != "" {
			args = append(args, "--kernel", c.flag)
		}
		r := run(t, time.Minute, nil, args...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || !oneLine(r) || strings.Contains(r.stderr, "never-read") {
			t.Errorf("--kernel %q %s=%q: exit %d, stderr %q, want %q", c.flag, dispatch.Env, c.env, r.code, r.stderr, c.want)
		}
	}
}

package dispatch

import (
	"errors"
	"strings"
	"testing"
)

// testFamily has an implementation for every known name, each returning
// its own name, plus an alias from sve to neon.
func testFamily(alias map[string]string) *Family[string] {
	var impls []Impl[string]
	for _, n := range Known() {
		impls = append(impls, Impl[string]{Name: n, Impl: n})
	}
	return NewFamily(impls, alias)
}

func TestFamily(t *testing.T) {
	f := testFamily(nil)
	names := f.Names()
	if names[len(names)-1] != Generic || f.Best().Name != names[0] {
		t.Fatalf("Names() = %v, Best %q", names, f.Best().Name)
	}
	for _, n := range names {
		if !Supported(n) {
			t.Fatalf("%s offered but not supported", n)
		}
	}
	for _, n := range Known() {
		im, err := f.Lookup(" " + strings.ToUpper(n))
		var de *Error
		switch {
		case Supported(n) && (err != nil || im.Impl != n):
			t.Fatalf("Lookup(%s) = %q, %v", n, im.Impl, err)
		case !Supported(n) && (!errors.As(err, &de) || de.Unknown || de.Source != Field || de.Name != n):
			t.Fatalf("Lookup(%s) on a CPU without it: %v", n, err)
		}
	}
	for _, n := range []string{"auto", "AUTO", " Auto"} {
		if im, err := f.Lookup(n); err != nil || im.Impl != names[0] {
			t.Fatalf("Lookup(%q) = %q, %v", n, im.Impl, err)
		}
	}
	var de *Error
	if _, err := f.Lookup("avx9"); !errors.As(err, &de) || !de.Unknown || !strings.Contains(err.Error(), `kernel: unknown kernel "avx9"`) {
		t.Fatalf("Lookup(avx9): %v", err)
	}
	t.Setenv(Env, "")
	if im, err := f.Lookup(""); err != nil || im.Impl != names[0] || f.Default() != names[0] {
		t.Fatalf("empty %s: %q, %v", Env, im.Impl, err)
	}
	t.Setenv(Env, "GENERIC")
	if im, err := f.Lookup(""); err != nil || im.Impl != Generic || f.Default() != Generic {
		t.Fatalf("%s=GENERIC: %q, %v", Env, im.Impl, err)
	}
	t.Setenv(Env, "nope")
	if _, err := f.Lookup(""); !errors.As(err, &de) || de.Source != Env || f.Default() != names[0] {
		t.Fatalf("%s=nope: %v, default %s", Env, err, f.Default())
	}
}

// TestAlias: a family without an sve implementation serves sve with neon
// where the CPU has SVE, and refuses it elsewhere.
func TestAlias(t *testing.T) {
	var impls []Impl[string]
	for _, n := range []string{"neon", Generic} {
		impls = append(impls, Impl[string]{Name: n, Impl: n})
	}
	f := NewFamily(impls, map[string]string{"sve": "neon"})
	im, err := f.Lookup("sve")
	if Supported("sve") && (err != nil || im.Impl != "neon") {
		t.Fatalf("sve → %q, %v", im.Impl, err)
	}
	if !Supported("sve") && err == nil {
		t.Fatalf("sve accepted on a CPU without it: %q", im.Impl)
	}
}

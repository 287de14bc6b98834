// Package dispatch is the one registry of SIMD kernel families (aggr's
// aggregation micro-kernels, quant's pack/unpack/minmax sets, any future
// family): the kernel names and how they are spelled, "auto", the
// SUPERGCN_KERNEL environment variable, and which instruction sets this CPU
// and OS can run (golang.org/x/sys/cpu on every architecture).
//
// A family registers its implementations by name; it is offered, best
// first, the ones the CPU supports, generic last. A name is matched
// case-insensitively after trimming space; "" and "auto" mean the best.
package dispatch

import (
	"fmt"
	"os"
	"strings"
)

// Env is the environment variable that forces a kernel in every family.
const Env = "SUPERGCN_KERNEL"

// Auto asks for the best kernel this CPU runs.
const Auto = "auto"

// Generic is the pure-Go kernel every family has.
const Generic = "generic"

// Field names the Lookup argument in a *Error (the CLI's --kernel).
const Field = "kernel"

// known lists every kernel name on any architecture, best first within an
// architecture; generic is last.
var known = [...]string{"avx512", "avx2", "sve", "neon", Generic}

// Known returns every kernel name, on any architecture, generic last.
func Known() []string { return known[:] }

// Normalize returns the canonical spelling of a kernel name: trimmed and
// lower-cased ("AVX2 " → "avx2", "Auto" → "auto").
func Normalize(name string) string { return strings.ToLower(strings.TrimSpace(name)) }

// Supported reports whether this CPU and OS can run kernel name (generic
// always; unknown names never).
func Supported(name string) bool {
	if name == Generic {
		return true
	}
	return cpuSupports(name)
}

// Error is a kernel name that cannot be used: unknown, or not runnable on
// this CPU (or build). Source is Field when the name was an argument and
// Env when it came from the environment.
type Error struct {
	Source    string
	Name      string
	Unknown   bool
	Available []string // this family's kernels on this CPU
}

func (e *Error) Error() string {
	if e.Unknown {
		return fmt.Sprintf("%s: unknown kernel %q (known: %s, %s)", e.Source, e.Name, Auto, strings.Join(Known(), ", "))
	}
	return fmt.Sprintf("%s: kernel %q is not available on this CPU or build (available: %s)",
		e.Source, e.Name, strings.Join(e.Available, ", "))
}

// isKnown reports whether name (canonical) is a kernel name on any architecture.
func isKnown(name string) bool {
	for _, k := range known {
		if k == name {
			return true
		}
	}
	return false
}

// Impl is one implementation of a family's kernels.
type Impl[T any] struct {
	Name string
	Impl T
}

// Family is the kernels of one family that this CPU runs, best first.
// It is built once (at package initialisation) and read-only afterwards.
type Family[T any] struct {
	impls []Impl[T]
	alias map[string]string
}

// NewFamily returns the family of the implementations impls (one of them
// named generic) that this CPU supports, ordered best first. alias maps a
// kernel name the family has no implementation for to the one that serves
// it (quant: "sve" → "neon"), so one SUPERGCN_KERNEL value steers every
// family.
func NewFamily[T any](impls []Impl[T], alias map[string]string) *Family[T] {
	f := &Family[T]{alias: alias}
	for _, name := range known {
		for _, im := range impls {
			if im.Name == name && Supported(name) {
				f.impls = append(f.impls, im)
			}
		}
	}
	if len(f.impls) == 0 || f.impls[len(f.impls)-1].Name != Generic {
		panic("dispatch.NewFamily: no generic implementation") // a programming error, not input
	}
	return f
}

// Names returns the family's kernels on this CPU, best first, generic last.
func (f *Family[T]) Names() []string {
	n := make([]string, len(f.impls))
	for i, im := range f.impls {
		n[i] = im.Name
	}
	return n
}

// Impls returns the family's implementations on this CPU, best first.
func (f *Family[T]) Impls() []T {
	out := make([]T, len(f.impls))
	for i, im := range f.impls {
		out[i] = im.Impl
	}
	return out
}

// Best returns the best implementation this CPU runs.
func (f *Family[T]) Best() Impl[T] { return f.impls[0] }

// Lookup resolves a kernel name: "" means the value of $SUPERGCN_KERNEL;
// an empty value or "auto" (any case) the best kernel. A known name this
// family lacks but aliases is served by the alias. Anything else is a
// *Error naming the source (Field, or Env for the environment).
func (f *Family[T]) Lookup(name string) (Impl[T], error) {
	src := Field
	if name == "" {
		name, src = os.Getenv(Env), Env
	}
	name = Normalize(name)
	if name == "" || name == Auto {
		return f.impls[0], nil
	}
	if !isKnown(name) {
		return Impl[T]{}, &Error{Source: src, Name: name, Unknown: true, Available: f.Names()}
	}
	want := name
	if a, ok := f.alias[name]; ok && Supported(name) {
		want = a
	}
	for _, im := range f.impls {
		if im.Name == want {
			return im, nil
		}
	}
	return Impl[T]{}, &Error{Source: src, Name: name, Available: f.Names()}
}

// Default names the kernel Lookup("") gives, or the best one when
// $SUPERGCN_KERNEL cannot be used.
func (f *Family[T]) Default() string {
	im, err := f.Lookup("")
	if err != nil {
		return f.impls[0].Name
	}
	return im.Name
}

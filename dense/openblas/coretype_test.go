package openblas

import (
	"strings"
	"testing"
)

func TestCoreFor(t *testing.T) {
	for _, c := range []struct {
		f         Features
		core, why string
	}{
		{Features{Arch: "amd64", AVX512: true, AVX2FMA: true, AVX: true}, "SkylakeX", "avx512f+cd+bw+dq+vl"},
		{Features{Arch: "amd64", AVX2FMA: true, AVX: true}, "Haswell", "avx2+fma"},
		{Features{Arch: "amd64", AVX: true}, "Sandybridge", "avx"},
		{Features{Arch: "amd64"}, "", ""},
		{Features{Arch: "arm64", SVE: true, ASIMD: true}, "NeoverseV1", "sve"},
		{Features{Arch: "arm64", ASIMD: true}, "NeoverseN1", "asimd"},
		{Features{Arch: "riscv64"}, "", ""},
	} {
		core, why := CoreFor(c.f)
		if core != c.core || why != c.why {
			t.Errorf("CoreFor(%+v) = %q, %q; want %q, %q", c.f, core, why, c.core, c.why)
		}
	}
}

func TestSatisfies(t *testing.T) {
	avx512 := Features{Arch: "amd64", AVX512: true, AVX2FMA: true, AVX: true}
	avx2 := Features{Arch: "amd64", AVX2FMA: true, AVX: true}
	for _, c := range []struct {
		f       Features
		running string
		want    bool
	}{
		{avx512, "Prescott", false}, // the lent Xeon under Debian's 0.3.21
		{avx512, "Haswell", false},
		{avx512, "SkylakeX", true},
		{avx512, "cooperlake", true},
		{avx2, "Zen", true},
		{avx2, "Haswell", true},
		{avx2, "SkylakeX", true},
		{avx2, "Sandybridge", false},
		{avx2, "", false},
		{Features{Arch: "amd64"}, "Prescott", true}, // no class: nothing better to ask for
	} {
		if got := Satisfies(c.f, c.running); got != c.want {
			t.Errorf("Satisfies(%+v, %q) = %v, want %v", c.f, c.running, got, c.want)
		}
	}
}

func TestPlan(t *testing.T) {
	avx512 := Features{Arch: "amd64", AVX512: true, AVX2FMA: true, AVX: true}
	for _, c := range []struct {
		name                    string
		f                       Features
		coretype, auto, running string
		dynamic                 bool
		restart, choice         string // choice: a substring
	}{
		{"unknown model falls back", avx512, "", "", "Prescott", true, "SkylakeX", ""},
		{"after the restart", avx512, "SkylakeX", "SkylakeX,Prescott", "SkylakeX", true, "",
			"chosen by supergcn from CPU features avx512f+cd+bw+dq+vl (OPENBLAS_CORETYPE=SkylakeX); OpenBLAS's own detection picked Prescott"},
		{"library lacks the core: no loop", avx512, "SkylakeX", "SkylakeX,Prescott", "Prescott", true, "",
			"asked for SkylakeX"},
		{"user wins", avx512, "Haswell", "", "Haswell", true, "", "set in the environment"},
		{"user wins over a stale marker", avx512, "Prescott", "SkylakeX,Prescott", "Prescott", true, "", "set in the environment"},
		{"inherited on a weaker CPU", Features{Arch: "amd64", AVX2FMA: true, AVX: true}, "Sandybridge", "Sandybridge,Core2", "Sandybridge", true, "Haswell", ""},
		{"detection already right", avx512, "", "", "SkylakeX", true, "", "OpenBLAS's own detection"},
		{"no DYNAMIC_ARCH", avx512, "", "", "Prescott", false, "", "no DYNAMIC_ARCH"},
		{"no mapped feature", Features{Arch: "amd64"}, "", "", "Prescott", true, "", "own detection"},
	} {
		restart, choice := plan(c.f, c.coretype, c.auto, c.running, c.dynamic)
		if restart != c.restart || !strings.Contains(choice, c.choice) || (restart == "") == (choice == "") {
			t.Errorf("%s: plan = %q, %q; want %q, …%q…", c.name, restart, choice, c.restart, c.choice)
		}
	}
}

func TestRestartThreads(t *testing.T) {
	for _, c := range []struct {
		parallel, loaded int
		env              string
		want             bool
	}{
		{parallelPthread, 64, "", true},
		{parallelPthread, 2, "8", true}, // the server is never used: 1 wins
		{parallelPthread, 2, " 1 ", false},
		{parallelPthread, 1, "", false},
		{parallelOpenMP, 64, "", false},
		{parallelNone, 64, "", false},
	} {
		if got := restartThreads(c.parallel, c.loaded, c.env); got != c.want {
			t.Errorf("restartThreads(%d, %d, %q) = %v, want %v", c.parallel, c.loaded, c.env, got, c.want)
		}
		if note := threadsNote(c.parallel, c.loaded); note == "" {
			t.Errorf("threadsNote(%d, %d) is empty", c.parallel, c.loaded)
		}
	}
}

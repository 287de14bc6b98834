package openblas

import (
	"runtime"
	"strings"

	"golang.org/x/sys/cpu"
)

// Features are the CPU features the choice of OpenBLAS core type depends
// on. HostFeatures reads them; tests build them by hand.
type Features struct {
	Arch string // runtime.GOARCH

	// amd64. AVX512 is the Skylake-X subset (F, CD, BW, DQ, VL) with the
	// operating system saving the ZMM state; AVX2FMA is AVX2 and FMA3.
	AVX512, AVX2FMA, AVX bool

	// arm64: the scalable vector extension and Advanced SIMD (NEON).
	SVE, ASIMD bool
}

// HostFeatures returns the features of the CPU this process runs on
// (golang.org/x/sys/cpu, which checks the OS support of the vector state).
func HostFeatures() Features {
	x, a := cpu.X86, cpu.ARM64
	return Features{Arch: runtime.GOARCH,
		AVX512:  x.HasAVX512F && x.HasAVX512CD && x.HasAVX512BW && x.HasAVX512DQ && x.HasAVX512VL,
		AVX2FMA: x.HasAVX2 && x.HasFMA,
		AVX:     x.HasAVX,
		SVE:     a.HasSVE && a.HasASIMD,
		ASIMD:   a.HasASIMD,
	}
}

// coreClass is an ISA class of OpenBLAS single-precision kernels: a core
// type of class c runs (and is tuned for) the instructions of c.
type coreClass struct {
	target string   // the OPENBLAS_CORETYPE to ask for
	why    string   // the features that select it
	cores  []string // OpenBLAS core names (openblas_get_corename, upper case) of this class or better
}

// classes, best first per architecture. The choice is made from CPU
// features, never from the CPU model: OpenBLAS's own detection matches
// family/model numbers (or, on arm64, MIDR part numbers) and falls back to
// its slowest kernels on CPUs newer than the library (Debian's 0.3.21 runs
// Prescott SSE3 kernels on Sapphire Rapids-class Xeons).
var classes = map[string][]coreClass{
	"amd64": {
		{"SkylakeX", "avx512f+cd+bw+dq+vl", []string{"SKYLAKEX", "COOPERLAKE", "SAPPHIRERAPIDS"}},
		{"Haswell", "avx2+fma", []string{"SKYLAKEX", "COOPERLAKE", "SAPPHIRERAPIDS", "HASWELL", "ZEN"}},
		{"Sandybridge", "avx", []string{"SKYLAKEX", "COOPERLAKE", "SAPPHIRERAPIDS", "HASWELL", "ZEN",
			"SANDYBRIDGE", "BULLDOZER", "PILEDRIVER", "STEAMROLLER", "EXCAVATOR"}},
	},
	"arm64": {
		{"NeoverseV1", "sve", []string{"NEOVERSEV1", "NEOVERSEN2", "A64FX", "ARMV8SVE"}},
		{"NeoverseN1", "asimd", []string{"NEOVERSEV1", "NEOVERSEN2", "A64FX", "ARMV8SVE", "NEOVERSEN1",
			"CORTEXA57", "CORTEXA72", "CORTEXA73", "THUNDERX2T99", "THUNDERX3T110", "TSV110", "EMAG8180", "FALKOR"}},
	},
}

// has reports whether f has the features named by a class's why.
func (f Features) has(why string) bool {
	switch why {
	case "avx512f+cd+bw+dq+vl":
		return f.AVX512
	case "avx2+fma":
		return f.AVX2FMA
	case "avx":
		return f.AVX
	case "sve":
		return f.SVE
	case "asimd":
		return f.ASIMD
	}
	return false
}

// CoreFor returns the OpenBLAS core type that runs f's best
// single-precision kernels and the features that chose it; core is ""
// when f has none of the features a class needs (OpenBLAS's own choice
// then stands).
func CoreFor(f Features) (core, why string) {
	if c, ok := classFor(f); ok {
		return c.target, c.why
	}
	return "", ""
}

func classFor(f Features) (coreClass, bool) {
	for _, c := range classes[f.Arch] {
		if f.has(c.why) {
			return c, true
		}
	}
	return coreClass{}, false
}

// Satisfies reports whether OpenBLAS core running (as openblas_get_corename
// names it, any case) is of the class CoreFor(f) selects or a better one,
// so that asking for CoreFor's core would gain nothing. With no class for
// f every core satisfies.
func Satisfies(f Features, running string) bool {
	c, ok := classFor(f)
	if !ok {
		return true
	}
	running = strings.ToUpper(strings.TrimSpace(running))
	for _, n := range c.cores {
		if n == running {
			return true
		}
	}
	return false
}

// CoreTypeEnv is the variable OpenBLAS reads, once, when the library is
// loaded (before any Go code runs), to override its core detection.
const CoreTypeEnv = "OPENBLAS_CORETYPE"

// AutoEnv marks an OPENBLAS_CORETYPE that supergcn set itself, as
// "TARGET,DETECTED": the core it asked for and the one OpenBLAS's own
// detection had picked. A user's OPENBLAS_CORETYPE has no marker and always
// wins.
const AutoEnv = "SUPERGCN_OPENBLAS_AUTO"

// plan decides the core type for a process on a CPU with features f, given
// the environment's OPENBLAS_CORETYPE (coretype) and AutoEnv (auto), the
// core OpenBLAS runs (running) and whether it was built with DYNAMIC_ARCH.
// It returns the core to restart the process with ("" to keep running) and
// one line saying which core runs and why.
func plan(f Features, coretype, auto, running string, dynamic bool) (restart, choice string) {
	autoTarget, detected, _ := strings.Cut(auto, ",")
	ours := auto != "" && coretype == autoTarget
	if coretype != "" && !ours {
		return "", "OPENBLAS_CORETYPE=" + coretype + " set in the environment (the user's choice wins)"
	}
	if !dynamic {
		return "", "OpenBLAS built for one core type (no DYNAMIC_ARCH), nothing to choose"
	}
	target, why := CoreFor(f)
	switch {
	case target == "":
		return "", "OpenBLAS's own detection (no CPU feature supergcn maps to a core type)"
	case Satisfies(f, running) && ours:
		return "", "chosen by supergcn from CPU features " + why + " (OPENBLAS_CORETYPE=" + coretype +
			"); OpenBLAS's own detection picked " + detected
	case Satisfies(f, running):
		return "", "OpenBLAS's own detection, a core of the class the CPU features " + why + " select"
	case coretype == target:
		return "", "asked for " + target + " (CPU features " + why + ") but this OpenBLAS runs " + running +
			" (it has no such core type)"
	}
	return target, ""
}

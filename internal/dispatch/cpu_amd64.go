package dispatch

import "golang.org/x/sys/cpu"

// cpuSupports: x/sys/cpu checks that the OS enables the register state
// (XCR0) as well as CPUID. Every kernel with AVX2 also uses FMA3.
func cpuSupports(name string) bool {
	x := cpu.X86
	switch name {
	case "avx512":
		return x.HasAVX512F && x.HasAVX2 && x.HasFMA
	case "avx2":
		return x.HasAVX2 && x.HasFMA
	}
	return false
}

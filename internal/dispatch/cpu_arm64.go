package dispatch

import "golang.org/x/sys/cpu"

// cpuSupports: the features come from the kernel's HWCAP, so SVE is offered
// only where the OS has enabled it; NEON (ASIMD) every arm64 Linux CPU has.
func cpuSupports(name string) bool {
	a := cpu.ARM64
	switch name {
	case "sve":
		return a.HasSVE && a.HasASIMD
	case "neon":
		return a.HasASIMD
	}
	return false
}

package aggr

import (
	"fmt"
	"os"
	"strings"
)

// kernel is one implementation of the micro-kernel contract
//
//	accumRows:  out[j] += Σ_k x[int(idx[k])*stride + j]          for j < len(out)
//	accumRowsW: out[j] += Σ_k w[k] * x[int(idx[k])*stride + j]   for j < len(out)
//
// Callers guarantee stride ≥ len(out), every row idx[k] lies inside x, len(w)
// ≥ len(idx), and out does not overlap x. Empty idx leaves out unchanged.
type kernel struct {
	name   string
	rows   func(out, x []float32, stride int, idx []int32)
	rowsW  func(out, x []float32, stride int, idx []int32, w []float32)
	native bool // SIMD assembly (false for the pure-Go twin)
}

// KernelEnv is the environment variable that forces a kernel.
const KernelEnv = "SUPERGCN_KERNEL"

// knownKernels are every name SUPERGCN_KERNEL accepts, on any architecture.
var knownKernels = []string{"generic", "avx2", "avx512", "neon", "sve"}

var genericKernel = kernel{name: "generic", rows: accumRowsGeneric, rowsW: accumRowsWGeneric}

// kernelTable lists the kernels this CPU can run, best first; generic is
// always last. Computed once at init from the CPU features and read-only
// afterwards (platformKernels lives in dispatch_<arch>.go, or kernels_noasm.go
// under the noasm tag).
var kernelTable = append(platformKernels(), genericKernel)

// Kernels returns the names of the kernels available on this CPU, best first.
func Kernels() []string {
	names := make([]string, len(kernelTable))
	for i, k := range kernelTable {
		names[i] = k.name
	}
	return names
}

// KernelName returns the kernel a New engine would use: the one forced by
// SUPERGCN_KERNEL when set and available, else the best available one.
func KernelName() string {
	k, err := lookupKernel("")
	if err != nil {
		return kernelTable[0].name
	}
	return k.name
}

// lookupKernel resolves a kernel name; "" means $SUPERGCN_KERNEL, and an empty
// or "auto" value the best available kernel.
func lookupKernel(name string) (kernel, error) {
	src := "kernel"
	if name == "" {
		name = os.Getenv(KernelEnv)
		src = KernelEnv
	}
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" || name == "auto" {
		return kernelTable[0], nil
	}
	for _, k := range kernelTable {
		if k.name == name {
			return k, nil
		}
	}
	for _, n := range knownKernels {
		if n == name {
			return kernel{}, fmt.Errorf("aggr: %s %q is not available on this CPU (available: %s)",
				src, name, strings.Join(Kernels(), ", "))
		}
	}
	return kernel{}, fmt.Errorf("aggr: unknown %s %q (known: auto, %s)", src, name, strings.Join(knownKernels, ", "))
}

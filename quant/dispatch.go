package quant

import (
	"fmt"
	"os"
)

// EnvKernel forces a kernel set, as for package aggr.
const EnvKernel = "SUPERGCN_KERNEL"

// available lists the kernel sets this CPU runs, best first; generic last.
// It is computed once at start-up and never modified.
var available = append(archKernels(), genericKernels())

// Kernels names the available kernel sets, best first.
func Kernels() []string {
	n := make([]string, len(available))
	for i, k := range available {
		n[i] = k.name
	}
	return n
}

// KernelName names the kernel set used by default (SUPERGCN_KERNEL honoured
// when it names an available set).
func KernelName() string {
	k, err := selectKernels("")
	if err != nil {
		return available[0].name
	}
	return k.name
}

// selectKernels returns the named set; "" means $SUPERGCN_KERNEL, else the best.
// A name that package aggr knows but quant has no kernel for (e.g. "sve")
// falls back to the best set below it, so one variable steers both packages.
func selectKernels(name string) (kernels, error) {
	if name == "" {
		name = os.Getenv(EnvKernel)
	}
	if name == "" {
		return available[0], nil
	}
	for _, k := range available {
		if k.name == name {
			return k, nil
		}
	}
	if fb, ok := fallback[name]; ok {
		return selectKernels(fb)
	}
	return kernels{}, fmt.Errorf("%s=%s: no such quantisation kernel on this CPU (available: %v)", EnvKernel, name, Kernels())
}

// fallback maps kernel names without a quant implementation to one that has.
var fallback = map[string]string{"sve": "neon"}

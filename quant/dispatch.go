package quant

import "github.com/supergcn/supergcn/internal/dispatch"

// family is the kernel sets this CPU runs, best first, generic last
// (internal/dispatch picks them from the CPU features). SVE CPUs run the
// NEON set: SUPERGCN_KERNEL=sve selects it, so one variable steers aggr and
// quant. Read-only after init.
var family = newFamily()

func newFamily() *dispatch.Family[kernels] {
	var impls []dispatch.Impl[kernels]
	for _, k := range append(archKernels(), genericKernels()) {
		impls = append(impls, dispatch.Impl[kernels]{Name: k.name, Impl: k})
	}
	return dispatch.NewFamily(impls, map[string]string{"sve": "neon"})
}

// available lists the kernel sets this CPU runs, best first; generic last.
var available = family.Impls()

// Kernels names the available kernel sets, best first.
func Kernels() []string { return family.Names() }

// KernelName names the kernel set used by default (SUPERGCN_KERNEL honoured
// when it names an available set).
func KernelName() string { return family.Default() }

// selectKernels returns the named set (see dispatch.Family.Lookup): ""
// means $SUPERGCN_KERNEL, an empty value or "auto" (any case) the best.
func selectKernels(name string) (kernels, error) {
	im, err := family.Lookup(name)
	return im.Impl, err
}

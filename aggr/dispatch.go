package aggr

import "github.com/supergcn/supergcn/internal/dispatch"

// kernel is one implementation of the micro-kernel contract
//
//	accumRows:  out[j] += Σ_k x[int(idx[k])*stride + j]          for j < len(out)
//	accumRowsW: out[j] += Σ_k w[k] * x[int(idx[k])*stride + j]   for j < len(out)
//	maxRows:    for k in order, where x[int(idx[k])*stride + j] > out[j]:
//	            out[j], arg[j] = that value, base + idx[k]        for j < len(out)
//	scatter:    dst[(arg[r*w+j]-lo)*w + j] += g[r*w+j]  where lo ≤ arg[r*w+j] < lo+n,
//	            for r < rows, j < cols (cols ≤ w; n*w < 2³¹)
//
// Callers guarantee stride ≥ len(out), every row idx[k] lies inside x, len(w)
// ≥ len(idx), len(arg) ≥ len(out), and out (and arg) do not overlap x or
// each other (dst neither g nor arg). Empty idx leaves out (and arg)
// unchanged.
type kernel struct {
	name    string
	rows    func(out, x []float32, stride int, idx []int32)
	rowsW   func(out, x []float32, stride int, idx []int32, w []float32)
	maxRows func(out []float32, arg []int32, x []float32, stride int, idx []int32, base int32)
	scatter func(dst, g []float32, arg []int32, rows, cols, w int, lo, n int32)
	native  bool   // SIMD assembly (false for the pure-Go twin)
	route   string // the kernel set whose scatter this is (generic where no scatter store exists)
}

var genericKernel = kernel{name: dispatch.Generic, rows: accumRowsGeneric, rowsW: accumRowsWGeneric, maxRows: maxRowsGeneric, scatter: scatterMaxGeneric, route: dispatch.Generic}

// family is the aggregation kernels this CPU runs (internal/dispatch picks
// them from the CPU features; platformKernels lives in dispatch_<arch>.go,
// or kernels_noasm.go under the noasm tag). Read-only after init.
var family = newFamily()

func newFamily() *dispatch.Family[kernel] {
	var impls []dispatch.Impl[kernel]
	for _, k := range append(platformKernels(), genericKernel) {
		impls = append(impls, dispatch.Impl[kernel]{Name: k.name, Impl: k})
	}
	return dispatch.NewFamily(impls, nil)
}

// kernelTable lists the kernels this CPU runs, best first, generic last.
var kernelTable = family.Impls()

// Kernels returns the names of the kernels available on this CPU, best first.
func Kernels() []string { return family.Names() }

// KernelName returns the kernel a New engine would use: the one forced by
// SUPERGCN_KERNEL when set and available, else the best available one.
func KernelName() string { return family.Default() }

// RoutingKernel returns the kernel that routes the max gradients
// (Op.ScatterMax) when kernel name runs the products (resolved as by New),
// or "" when New would refuse the name: that kernel where it has a scatter
// store, else generic.
func RoutingKernel(name string) string {
	k, err := lookupKernel(name)
	if err != nil {
		return ""
	}
	return k.route
}

// lookupKernel resolves a kernel name (see dispatch.Family.Lookup): ""
// means $SUPERGCN_KERNEL, and an empty value or "auto" the best kernel.
func lookupKernel(name string) (kernel, error) {
	im, err := family.Lookup(name)
	return im.Impl, err
}

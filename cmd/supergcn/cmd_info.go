package main

import (
	"fmt"
	"runtime"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/quant"
)

func init() {
	register("info", "print the build, the CPU, and which kernels and BLAS run", cmdInfo)
}

func cmdInfo(args []string) error {
	fs := newFlagSet("info", "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Printf("supergcn on %s/%s, %s, %d CPUs\n", runtime.GOOS, runtime.GOARCH, runtime.Version(), runtime.NumCPU())
	kernel, err := checkKernel("")
	if err != nil {
		return err
	}
	fmt.Printf("aggregation kernel: %s (available: %v; force with SUPERGCN_KERNEL or --kernel)\n", kernel, aggr.Kernels())
	fmt.Printf("quantisation kernel: %s (available: %v)\n", quant.KernelName(), quant.Kernels())
	fmt.Printf("dense BLAS: %s\n", dense.Backend())
	fmt.Printf("MPI: %s\n", mpiLibraryVersion())
	return nil
}

// checkKernel returns the aggregation kernel that runs for the --kernel
// value (or $SUPERGCN_KERNEL when empty), or an error when this CPU has no
// such kernel, so a bad choice fails before any data is read.
func checkKernel(kernel string) (string, error) {
	e, err := aggr.NewWithKernel(1, kernel)
	if err != nil {
		if kernel != "" {
			return "", usageError{fmt.Sprintf("--kernel: %v", err)}
		}
		return "", err
	}
	defer e.Close()
	if _, err := quant.NewCodec(quant.Format{Bits: 2}, 1, kernel); err != nil {
		return "", err
	}
	return e.KernelName(), nil
}

package main

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/dispatch"
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
	fmt.Printf("aggregation kernel: %s (available: %v; force with SUPERGCN_KERNEL or --kernel, any case; auto = best)\n", kernel, aggr.Kernels())
	fmt.Printf("quantisation kernel: %s (available: %v)\n", quant.KernelName(), quant.Kernels())
	fmt.Printf("dense BLAS: %s\n", dense.Backend())
	fmt.Printf("MPI: %s\n", mpiLibraryVersion())
	return nil
}

// kernelHelp is the help of every --kernel flag.
var kernelHelp = "SIMD kernel for aggregation and quantisation: auto|" + strings.Join(dispatch.Known(), "|") +
	", any case (default: $" + dispatch.Env + ", else auto = the best this CPU runs)"

// checkKernel returns the aggregation kernel that runs for the --kernel
// value (or $SUPERGCN_KERNEL when empty; any case, "auto" the best), or a
// one-line error naming --kernel or the variable when this CPU has no such
// kernel in either family, so a bad choice fails before any data is read.
func checkKernel(kernel string) (string, error) {
	e, err := aggr.New(1, kernel)
	if err == nil {
		e.Close()
		_, err = quant.NewCodec(quant.Format{Bits: 2}, 1, kernel)
	}
	if err != nil {
		return "", kernelError(err)
	}
	return e.KernelName(), nil
}

// kernelError names the --kernel flag in a kernel error of a library.
func kernelError(err error) error {
	var de *dispatch.Error
	if errors.As(err, &de) && de.Source == dispatch.Field {
		flagged := *de
		flagged.Source = "--kernel"
		return usageError{flagged.Error()}
	}
	return err
}

package main

import (
	"fmt"
	"runtime"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/dense"
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
	fmt.Printf("aggregation kernel: %s (available: %v; force with SUPERGCN_KERNEL)\n", aggr.KernelName(), aggr.Kernels())
	fmt.Printf("dense BLAS: %s\n", dense.Backend())
	fmt.Printf("MPI: %s\n", mpiLibraryVersion())
	return nil
}

func kernelName(forced string) string {
	if forced != "" {
		return forced
	}
	return aggr.KernelName()
}

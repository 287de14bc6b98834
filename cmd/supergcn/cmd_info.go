package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/cmd/internal/sysinfo"
	"github.com/supergcn/supergcn/internal/dispatch"
	"github.com/supergcn/supergcn/internal/rowk"
	"github.com/supergcn/supergcn/quant"
)

func init() {
	register("info", "print the build, the CPU, and which kernels, BLAS, partitioners and MPI run", cmdInfo)
}

// buildInfo is what `supergcn info` reports (--json prints it as is).
type buildInfo = sysinfo.Info

func cmdInfo(args []string) error {
	fs := newFlagSet("info", "[--json]")
	asJSON := fs.Bool("json", false, "print the information as one JSON object")
	noMPI := fs.Bool("no-mpi", false, "do not initialise MPI (the thread level is then not reported)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	kernel, err := checkKernel("")
	if err != nil {
		return err
	}
	bi := sysinfo.Collect(version, buildCommit(), kernel, !*noMPI)
	if bi.Threads, bi.ThreadsWhy, err = aloneThreads(0); err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(bi)
	}
	fmt.Printf("%s on %s/%s, %s, %d CPUs\n", versionLine(), bi.OS, bi.Arch, bi.Go, bi.CPUs)
	fmt.Printf("CPU: %s\n", bi.CPUModel)
	fmt.Printf("aggregation kernel: %s (available: %v; force with SUPERGCN_KERNEL or --kernel, any case; auto = best)\n", bi.AggrKernel, bi.AggrKernels)
	fmt.Printf("  sums and max products: %s; max gradient routing: %s\n", bi.AggrKernel, orDash(bi.AggrRouting))
	fmt.Printf("quantisation kernel: %s (available: %v)\n", bi.QuantKernel, bi.QuantKerns)
	fmt.Printf("row kernels (hidden stages, LayerNorm, evaluation loss, GCN/mean row scaling): %s (available: %v)\n", bi.RowKernel, bi.RowKernels)
	fmt.Printf("dense micro-kernels (X·W and G·Wᵀ with W up to 256×256, bias gradients): %s (available: %v; generic: the BLAS)\n", bi.DenseKernel, bi.DenseKerns)
	fmt.Printf("attention kernels (gat, gatv2): %s (available: %v)\n", bi.AttnKernel, bi.AttnKerns)
	fmt.Printf("dense BLAS: %s (%s), core %s; %s\n", bi.BLAS, bi.BLASConfig, orDash(bi.BLASCore), bi.BLASUse)
	if bi.BLASChoice != "" {
		fmt.Printf("BLAS core choice: %s\n", bi.BLASChoice)
	}
	if bi.BLASThreads != "" {
		fmt.Printf("BLAS threads: %s\n", bi.BLASThreads)
	}
	fmt.Printf("dense products with --precision bf16: %s\n", bi.BF16Gemm)
	fmt.Printf("partitioners: METIS %s; ParMETIS API: %s\n", bi.METIS, bi.ParMETIS)
	fmt.Printf("MPI: %s\n", firstLineOf(bi.MPI))
	fmt.Printf("MPI thread level: %s\n", bi.MPIThread)
	fmt.Printf("threads auto: %d (%s); affinity mask CPUs %s\n", bi.Threads, bi.ThreadsWhy, bi.CPUMask)
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func firstLineOf(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// kernelHelp is the help of every --kernel flag.
var kernelHelp = "SIMD kernel for aggregation, quantisation and the fused hidden stages: auto|" + strings.Join(dispatch.Known(), "|") +
	", any case (default: $" + dispatch.Env + ", else auto = the best this CPU runs)"

// checkKernel returns the aggregation kernel that runs for the --kernel
// value (or $SUPERGCN_KERNEL when empty; any case, "auto" the best), or a
// one-line error naming --kernel or the variable when this CPU has no such
// kernel in either family, so a bad choice fails before any data is read.
func checkKernel(kernel string) (string, error) {
	e, err := aggr.New(1, kernel)
	if err == nil {
		e.Close()
		_, err = quant.NewCodec(quant.Format{Bits: quant.QuantisedWidths()[0]}, 1, kernel)
	}
	if err == nil {
		_, err = rowk.Lookup(kernel)
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
		return usageError(flagged.Error())
	}
	return err
}

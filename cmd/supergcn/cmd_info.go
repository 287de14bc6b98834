package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/affinity"
	"github.com/supergcn/supergcn/internal/dispatch"
	"github.com/supergcn/supergcn/internal/rowk"
	"github.com/supergcn/supergcn/mpi"
	"github.com/supergcn/supergcn/partition/metis"
	"github.com/supergcn/supergcn/quant"
)

func init() {
	register("info", "print the build, the CPU, and which kernels, BLAS, partitioners and MPI run", cmdInfo)
}

// buildInfo is what `supergcn info` reports (--json prints it as is).
type buildInfo struct {
	Version     string   `json:"version"`
	Commit      string   `json:"commit"`
	OS          string   `json:"os"`
	Arch        string   `json:"arch"`
	Go          string   `json:"go"`
	CPUs        int      `json:"cpus"`
	CPUModel    string   `json:"cpu_model"`
	AggrKernel  string   `json:"aggr_kernel"`
	AggrKernels []string `json:"aggr_kernels"`
	QuantKernel string   `json:"quant_kernel"`
	QuantKerns  []string `json:"quant_kernels"`
	RowKernel   string   `json:"row_kernel"` // the fused hidden stage's (bias + LayerNorm + ReLU + dropout) row kernels
	RowKernels  []string `json:"row_kernels"`
	BLAS        string   `json:"blas"`
	BLASConfig  string   `json:"blas_config"`
	BLASCore    string   `json:"blas_core"`
	BLASChoice  string   `json:"blas_core_choice"` // which core runs and why
	BLASThreads string   `json:"blas_threads"`     // the BLAS library's own threads in this process
	BF16Gemm    string   `json:"bf16_gemm"`        // what runs the dense products under --precision bf16
	BLASUse     string   `json:"blas_use"`
	METIS       string   `json:"metis"`
	ParMETIS    string   `json:"parmetis"`
	MPI         string   `json:"mpi"`
	MPIThread   string   `json:"mpi_thread_level"` // provided for MPI_THREAD_SERIALIZED, or why unknown
	Threads     int      `json:"threads_auto"`     // what --threads auto gives this process
	ThreadsWhy  string   `json:"threads_auto_source"`
	CPUMask     string   `json:"affinity_mask"`
}

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
	bi := buildInfo{Version: version, Commit: buildCommit(), OS: runtime.GOOS, Arch: runtime.GOARCH, Go: runtime.Version(),
		CPUs: runtime.NumCPU(), CPUModel: affinity.CPUModel(os.DirFS("/")), AggrKernel: kernel, AggrKernels: aggr.Kernels(),
		QuantKernel: quant.KernelName(), QuantKerns: quant.Kernels(), BLASUse: dense.Backend(),
		RowKernel: rowk.KernelName(), RowKernels: rowk.Kernels(),
		METIS: metis.MetisVersion(), ParMETIS: metis.ParMetisLibrary(),
		MPI: strings.TrimSpace(mpi.LibraryVersion()), MPIThread: "not initialised (--no-mpi)"}
	bi.BLAS, bi.BLASConfig, bi.BLASCore = dense.BLAS()
	bi.BLASChoice = dense.BLASChoice()
	bi.BLASThreads = dense.BLASThreads()
	bi.BF16Gemm = dense.BF16Kernel()
	if !*noMPI {
		bi.MPIThread = mpiThreadLevel()
	}
	if bi.Threads, bi.ThreadsWhy, err = aloneThreads(0); err != nil {
		return err
	}
	if mask, err := affinity.Self(); err == nil {
		bi.CPUMask = mask.String()
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(bi)
	}
	fmt.Printf("%s on %s/%s, %s, %d CPUs\n", versionLine(), bi.OS, bi.Arch, bi.Go, bi.CPUs)
	fmt.Printf("CPU: %s\n", bi.CPUModel)
	fmt.Printf("aggregation kernel: %s (available: %v; force with SUPERGCN_KERNEL or --kernel, any case; auto = best)\n", bi.AggrKernel, bi.AggrKernels)
	fmt.Printf("quantisation kernel: %s (available: %v)\n", bi.QuantKernel, bi.QuantKerns)
	fmt.Printf("hidden-stage row kernel: %s (available: %v)\n", bi.RowKernel, bi.RowKernels)
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

// mpiThreadLevel initialises MPI as training does (MPI_THREAD_SERIALIZED)
// and reports the level the library provides.
func mpiThreadLevel() string {
	provided, err := mpi.InitThread(mpi.ThreadSerialized)
	if mpi.Initialized() {
		defer mpi.Finalize()
	}
	if err != nil {
		return fmt.Sprintf("%v (%v)", provided, err)
	}
	return fmt.Sprintf("%v (requested %v)", provided, mpi.ThreadSerialized)
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
		_, err = quant.NewCodec(quant.Format{Bits: 2}, 1, kernel)
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
		return usageError{flagged.Error()}
	}
	return err
}

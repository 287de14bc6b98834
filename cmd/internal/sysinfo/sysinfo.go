// Package sysinfo gathers what `supergcn info` reports: the build, the CPU,
// and which kernels, BLAS, partitioners and MPI this process runs.
package sysinfo

import (
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/supergcn/supergcn/aggr"
	"github.com/supergcn/supergcn/attn"
	"github.com/supergcn/supergcn/dense"
	"github.com/supergcn/supergcn/internal/affinity"
	"github.com/supergcn/supergcn/internal/rowk"
	"github.com/supergcn/supergcn/mpi"
	"github.com/supergcn/supergcn/partition/metis"
	"github.com/supergcn/supergcn/quant"
)

// Info is what `supergcn info` reports (--json prints it as is).
type Info struct {
	Version     string   `json:"version"`
	Commit      string   `json:"commit"`
	OS          string   `json:"os"`
	Arch        string   `json:"arch"`
	Go          string   `json:"go"`
	CPUs        int      `json:"cpus"`
	CPUModel    string   `json:"cpu_model"`
	AggrKernel  string   `json:"aggr_kernel"`
	AggrKernels []string `json:"aggr_kernels"`
	AggrRouting string   `json:"aggr_routing_kernel"` // what routes the max aggregation's gradients under AggrKernel
	QuantKernel string   `json:"quant_kernel"`
	QuantKerns  []string `json:"quant_kernels"`
	RowKernel   string   `json:"row_kernel"` // the row kernels of the fused hidden stage (bias + LayerNorm + ReLU + dropout), of the evaluation loss (softmax) and of the graph operators' row scaling
	RowKernels  []string `json:"row_kernels"`
	DenseKernel string   `json:"dense_kernel"` // the narrow products' micro-kernels (generic: the BLAS)
	DenseKerns  []string `json:"dense_kernels"`
	AttnKernel  string   `json:"attention_kernel"` // GAT's and GATv2's attention kernels
	AttnKerns   []string `json:"attention_kernels"`
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

// Collect gathers the Info of this process running aggregation kernel
// kernel; with initMPI it initialises MPI as training does to learn the
// thread level (and finalises it). Threads and ThreadsWhy are the caller's.
func Collect(version, commit, kernel string, initMPI bool) Info {
	bi := Info{Version: version, Commit: commit, OS: runtime.GOOS, Arch: runtime.GOARCH, Go: runtime.Version(),
		CPUs: runtime.NumCPU(), CPUModel: affinity.CPUModel(os.DirFS("/")), AggrKernel: kernel, AggrKernels: aggr.Kernels(), AggrRouting: aggr.RoutingKernel(kernel),
		QuantKernel: quant.KernelName(), QuantKerns: quant.Kernels(), BLASUse: dense.Backend(),
		RowKernel: rowk.KernelName(), RowKernels: rowk.Kernels(),
		DenseKernel: dense.KernelName(), DenseKerns: dense.Kernels(), AttnKernel: attn.KernelName(), AttnKerns: attn.Kernels(),
		METIS: metis.MetisVersion(), ParMETIS: metis.ParMetisLibrary(),
		MPI: strings.TrimSpace(mpi.LibraryVersion()), MPIThread: "not initialised (--no-mpi)"}
	bi.BLAS, bi.BLASConfig, bi.BLASCore = dense.BLAS()
	bi.BLASChoice = dense.BLASChoice()
	bi.BLASThreads = dense.BLASThreads()
	bi.BF16Gemm = dense.BF16Kernel()
	if initMPI {
		bi.MPIThread = mpiThreadLevel()
	}
	if mask, err := affinity.Self(); err == nil {
		bi.CPUMask = mask.String()
	}
	return bi
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

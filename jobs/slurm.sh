#!/bin/bash
# Slurm: full-batch training, by default one MPI rank per node with all the
# node's cores as its threads (the fastest layout on a cluster network:
# docs/LAYOUT.md). Give the node count and time at submission, the input and
# the training flags as arguments:
#   sbatch --nodes=4 --time=2:00:00 jobs/slurm.sh /path/to/partitions-dir --model gcn --layers 3 --hidden 256 --epochs 500
#   sbatch --nodes=4 jobs/slurm.sh --data ogbn-products.sgb --model sage ...      # partitioned in memory (ParMETIS)
#   RANKS_PER_NODE=numa sbatch --nodes=4 jobs/slurm.sh PDIR ...                   # one rank per NUMA domain
#   sbatch --nodes=4 --ntasks-per-node=2 --cpus-per-task=28 jobs/slurm.sh PDIR ... # an explicit shape
# Partition once beforehand (any multiple of the rank count works):
#   supergcn partition --data ogbn-products/ --parts 64 --method metis --out products-64
# The job asks for whole nodes (--exclusive below). On shared nodes, delete
# that line and give --ntasks-per-node and --cpus-per-task.
#
# Layout: RANKS_PER_NODE ranks on each node (default: the job's
# --ntasks-per-node, 1 unless given; "numa": one per NUMA domain of the
# first node), each bound to --cpus-per-task cores (default: the node's
# allocated CPUs divided among its ranks), which supergcn's --threads auto
# turns into its threads. srun gets --cpus-per-task itself: since Slurm
# 22.05 it does not inherit sbatch's, and a rank would be bound to one core.
#
# At the time limit: Slurm sends SIGUSR1 (--signal, 120 s before); every
# rank finishes its epoch, the checkpoint is written and supergcn exits 75;
# this script then requeues the job (same job id, same run directory),
# which resumes from the checkpoint. A finished run exits 0.
# Environment (sbatch passes it on):
#   SUPERGCN       the binary (default: bin/supergcn in the submission directory)
#   RUN_DIR        where checkpoint, metrics and output go (default: runs/JOBNAME-JOBID)
#   SUPERGCN_MPI   srun's --mpi plugin (default pmix; `srun --mpi=list`)
#   SAVE_EVERY     also checkpoint every N epochs (default 50)
#   RANKS_PER_NODE ranks per node: a count, or numa (above)
#   DRY_RUN=1      the same as --dry-run
# Options, before the training flags: --help prints this; --dry-run (before
# or after the input) prints the srun line and the layout (ranks, per node,
# threads per rank, run directory, resume or not) and submits, runs and
# creates nothing. It needs no Slurm: outside a job it stands in
# SLURM_JOB_NUM_NODES=1, SLURM_JOB_ID=dry-run, SLURM_JOB_NAME=supergcn,
# SLURM_SUBMIT_DIR=$PWD and the node's CPUs from nproc; a missing binary or
# partition directory is a warning there. Check a shape on a login node:
#   SLURM_JOB_NUM_NODES=4 SLURM_CPUS_ON_NODE=64 jobs/slurm.sh --dry-run PDIR --epochs 500
#SBATCH --job-name=supergcn
#SBATCH --time=01:00:00
#SBATCH --ntasks-per-node=1
#SBATCH --exclusive
#SBATCH --signal=USR1@120
#SBATCH --requeue
#SBATCH --open-mode=append
#SBATCH --output=supergcn-%j.out
set -euo pipefail
usage="usage: sbatch [shape] jobs/slurm.sh [--dry-run] (PARTITION_DIR | --data PATH) [--dry-run] [train flags...]
       jobs/slurm.sh --help"
DRY=0
case ${DRY_RUN:-0} in '' | 0) ;; *) DRY=1 ;; esac
while [ $# -ge 1 ]; do
	case $1 in
	--help | -h)
		echo "$usage"
		sed -n '2,/^[^#]/{/^#[A-Z]/d;/^[^#]/d;s/^# \{0,1\}//;p;}' "$0"
		exit 0
		;;
	--dry-run) DRY=1; shift ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
# The job's problems: fatal, or warnings in a dry run.
problem() {
	echo "jobs/slurm.sh: $2" >&2
	[ "$DRY" = 1 ] || exit "$1"
}
if [ "$1" = --data ]; then
	[ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
	INPUT=(--data "$2")
	shift 2
else
	[ -f "$1/meta.json" ] || problem 2 "$1 is not a partition directory (no meta.json); for a dataset write --data $1"
	INPUT=(--partitions "$1")
	shift
fi
if [ $# -ge 1 ] && [ "$1" = --dry-run ]; then DRY=1; shift; fi
if [ "$DRY" = 1 ]; then
	# Stand-ins for a dry run outside a job (header).
	: "${SLURM_SUBMIT_DIR:=$PWD}" "${SLURM_JOB_NAME:=supergcn}" "${SLURM_JOB_ID:=dry-run}" "${SLURM_JOB_NUM_NODES:=1}"
fi
SUPERGCN=${SUPERGCN:-$SLURM_SUBMIT_DIR/bin/supergcn}
[ -x "$SUPERGCN" ] || problem 1 "no executable $SUPERGCN (build it, or set SUPERGCN=/path/to/supergcn)"
RUN_DIR=${RUN_DIR:-$SLURM_SUBMIT_DIR/runs/$SLURM_JOB_NAME-$SLURM_JOB_ID}
[ "$DRY" = 1 ] || mkdir -p "$RUN_DIR"
CKPT=$RUN_DIR/supergcn.ckpt
RESUME=()
if [ -f "$CKPT" ]; then RESUME=(--resume "$CKPT"); fi

# The layout: ranks per node and cores per rank.
NODE_CPUS=${SLURM_CPUS_ON_NODE:-$(nproc)}
NODE_CPUS=${NODE_CPUS%%(*} # "64(x4)" in some versions' per-node lists
PER_NODE=${RANKS_PER_NODE:-${SLURM_NTASKS_PER_NODE:-1}}
if [ "$PER_NODE" = numa ]; then
	PER_NODE=0
	for d in /sys/devices/system/node/node[0-9]*; do [ -d "$d" ] && PER_NODE=$((PER_NODE + 1)); done
	[ "$PER_NODE" -ge 1 ] || PER_NODE=1
fi
case $PER_NODE in '' | *[!0-9]* | 0) echo "jobs/slurm.sh: RANKS_PER_NODE=$PER_NODE is not a count ≥ 1 or numa" >&2; exit 2 ;; esac
if [ -n "${SLURM_CPUS_PER_TASK:-}" ] && [ -z "${RANKS_PER_NODE:-}" ]; then
	CPT=$SLURM_CPUS_PER_TASK
else
	CPT=$((NODE_CPUS / PER_NODE))
fi
[ "$CPT" -ge 1 ] || { echo "jobs/slurm.sh: $PER_NODE ranks per node do not fit the node's $NODE_CPUS CPUs" >&2; exit 2; }
NP=$((SLURM_JOB_NUM_NODES * PER_NODE))

echo "jobs/slurm.sh: job $SLURM_JOB_ID (restart ${SLURM_RESTART_COUNT:-0}) on $SLURM_JOB_NUM_NODES node(s) of $NODE_CPUS CPU(s): $NP rank(s), $PER_NODE per node × $CPT CPU(s), run directory $RUN_DIR"
LAUNCH=(srun --mpi="${SUPERGCN_MPI:-pmix}" --ntasks="$NP" --ntasks-per-node="$PER_NODE" --cpus-per-task="$CPT"
	--cpu-bind=cores --distribution=block:block "$SUPERGCN" train ${INPUT[@]+"${INPUT[@]}"}
	--threads auto --save "$CKPT" --save-every "${SAVE_EVERY:-50}"
	--metrics "$RUN_DIR/metrics.jsonl" ${RESUME[@]+"${RESUME[@]}"} "$@")
if [ "$DRY" = 1 ]; then
	echo "jobs/slurm.sh: dry run: nothing submitted, run or created"
	echo "  nodes             $SLURM_JOB_NUM_NODES"
	echo "  ranks             $NP"
	echo "  ranks per node    $PER_NODE"
	echo "  threads per rank  $CPT (--threads auto: the rank's --cpus-per-task cores)"
	echo "  run directory     $RUN_DIR"
	if [ -f "$CKPT" ]; then echo "  resume            yes, from $CKPT"; else echo "  resume            no (no $CKPT)"; fi
	echo "  on exit 75 or 138 scontrol requeue $SLURM_JOB_ID"
	printf 'launch:'
	printf ' %q' ${LAUNCH[@]+"${LAUNCH[@]}"}
	printf '\n'
	exit 0
fi
set +e
${LAUNCH[@]+"${LAUNCH[@]}"}
rc=$?
set -e
# 138 (killed by SIGUSR1): the warning came in the first milliseconds, before
# supergcn's code ran (docs/CLI.md, "Time limits, signals and the job scripts").
if [ "$rc" -eq 75 ] || [ "$rc" -eq 138 ]; then
	echo "jobs/slurm.sh: stopped before the time limit with a checkpoint; requeueing job $SLURM_JOB_ID"
	scontrol requeue "$SLURM_JOB_ID"
	exit 0
fi
exit "$rc"

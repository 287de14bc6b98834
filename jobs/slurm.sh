#!/bin/bash
# Slurm: full-batch training, one MPI rank per task, its threads from the
# task's CPUs. Nothing about the machine is fixed here: give the shape at
# submission, and training flags after the partition directory.
#   sbatch --nodes=4 --ntasks-per-node=2 --cpus-per-task=28 --time=2:00:00 \
#     jobs/slurm.sh /path/to/partitions-dir --model gcn --layers 3 --hidden 256 --epochs 500
# Partition once beforehand (any multiple of the rank count works):
#   supergcn partition --data ogbn-products/ --parts 64 --method metis --out products-64
#
# At the time limit: Slurm sends SIGUSR1 (--signal, 120 s before); every
# rank finishes its epoch, the checkpoint is written and supergcn exits 75;
# this script then requeues the job (same job id, same run directory),
# which resumes from the checkpoint. A finished run exits 0.
# Environment (sbatch passes it on):
#   SUPERGCN     the binary (default: bin/supergcn in the submission directory)
#   RUN_DIR      where checkpoint, metrics and output go (default: runs/JOBNAME-JOBID)
#   SUPERGCN_MPI srun's --mpi plugin (default pmix; `srun --mpi=list`)
#   SAVE_EVERY   also checkpoint every N epochs (default 50)
#SBATCH --job-name=supergcn
#SBATCH --time=01:00:00
#SBATCH --signal=USR1@120
#SBATCH --requeue
#SBATCH --open-mode=append
#SBATCH --output=supergcn-%j.out
set -euo pipefail
PDIR=${1:?usage: sbatch [shape] jobs/slurm.sh PARTITION_DIR [train flags...]}
shift
SUPERGCN=${SUPERGCN:-$SLURM_SUBMIT_DIR/bin/supergcn}
[ -x "$SUPERGCN" ] || { echo "jobs/slurm.sh: no executable $SUPERGCN (build it, or set SUPERGCN=/path/to/supergcn)" >&2; exit 1; }
RUN_DIR=${RUN_DIR:-$SLURM_SUBMIT_DIR/runs/$SLURM_JOB_NAME-$SLURM_JOB_ID}
mkdir -p "$RUN_DIR"
CKPT=$RUN_DIR/supergcn.ckpt
RESUME=()
if [ -f "$CKPT" ]; then RESUME=(--resume "$CKPT"); fi
echo "jobs/slurm.sh: job $SLURM_JOB_ID (restart ${SLURM_RESTART_COUNT:-0}) on $SLURM_JOB_NUM_NODES node(s), $SLURM_NTASKS task(s) × ${SLURM_CPUS_PER_TASK:-1} CPU(s), run directory $RUN_DIR"
set +e
srun --mpi="${SUPERGCN_MPI:-pmix}" --cpu-bind=cores "$SUPERGCN" train --partitions "$PDIR" \
	--threads "${SLURM_CPUS_PER_TASK:-0}" --save "$CKPT" --save-every "${SAVE_EVERY:-50}" \
	--metrics "$RUN_DIR/metrics.jsonl" "${RESUME[@]}" "$@"
rc=$?
set -e
if [ "$rc" -eq 75 ]; then
	echo "jobs/slurm.sh: stopped before the time limit with a checkpoint; requeueing job $SLURM_JOB_ID"
	scontrol requeue "$SLURM_JOB_ID"
	exit 0
fi
exit "$rc"

#!/bin/bash
# Slurm: full-batch training on NODES nodes, RANKS_PER_NODE ranks each.
#   sbatch --nodes=4 jobs/slurm.sh /path/to/partitions-dir
# Partition once beforehand (any multiple of the rank count works):
#   supergcn partition --data ogbn-products/ --parts 64 --method metis --out products-64
#SBATCH --job-name=supergcn
#SBATCH --ntasks-per-node=2
#SBATCH --cpus-per-task=28
#SBATCH --time=01:00:00
#SBATCH --exclusive
set -euo pipefail
PDIR=${1:?usage: sbatch jobs/slurm.sh PARTITION_DIR [train flags...]}; shift
# A checkpoint every 50 epochs; resubmitting the same script continues from it.
CKPT=${CKPT:-supergcn.ckpt}
RESUME=()
[ -f "$CKPT" ] && RESUME=(--resume "$CKPT")
srun --mpi=pmix --cpu-bind=cores ./bin/supergcn train --partitions "$PDIR" \
  --threads "${SLURM_CPUS_PER_TASK}" --model gcn --layers 3 --hidden 256 --epochs 500 \
  --save "$CKPT" --save-every 50 "${RESUME[@]}" --metrics supergcn.jsonl "$@"

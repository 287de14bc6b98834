#!/bin/bash
# PBS Pro / Torque: qsub -v PDIR=/path/to/partitions-dir jobs/pbs.sh
#PBS -N supergcn
#PBS -l select=4:ncpus=56:mpiprocs=2
#PBS -l walltime=01:00:00
#PBS -j oe
set -euo pipefail
cd "$PBS_O_WORKDIR"
: "${PDIR:?qsub -v PDIR=... jobs/pbs.sh}"
NP=$(wc -l < "$PBS_NODEFILE")
mpirun -np "$NP" --hostfile "$PBS_NODEFILE" --map-by ppr:1:socket --bind-to socket \
  ./bin/supergcn train --partitions "$PDIR" --threads 28 \
  --model gcn --layers 3 --hidden 256 --epochs 500 --metrics "supergcn-${PBS_JOBID}.jsonl"

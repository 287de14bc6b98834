#!/bin/bash
# Fujitsu PJM (Fugaku, A64FX: 48 cores in 4 CMGs of 12; one rank per CMG).
#   pjsub -L "node=16" --mpi "max-proc-per-node=4" jobs/pjm.sh /path/to/partitions-dir
#PJM -L "node=16"
#PJM -L "rscgrp=small"
#PJM -L "elapse=01:00:00"
#PJM --mpi "max-proc-per-node=4"
#PJM -g your-group
#PJM -x PJM_LLIO_GFSCACHE=/vol0004
#PJM -s
set -euo pipefail
PDIR=${1:?usage: pjsub jobs/pjm.sh PARTITION_DIR [train flags...]}; shift
# supergcn picks the SVE kernels on A64FX at start-up (`supergcn info`).
mpiexec -stdout-proc ./%n.%j.out -stderr-proc ./%n.%j.err \
  ./bin/supergcn-arm64 train --partitions "$PDIR" --threads 12 \
  --model gcn --layers 3 --hidden 256 --epochs 500 --metrics "supergcn-${PJM_JOBID}.jsonl" "$@"

#!/usr/bin/env bash
# Accuracy tables on Cora (10 seeds each unless SEEDS=N):
#  - GCN at P=1 and P=4 (fp32 exchange, dropout 0.5)         [distributed training matches one process]
#  - GCN at P=4: fp32 / int2, each without and with label propagation  [the paper's quantisation table]
#  - GCN at P=4 int2: fp32 / bf16 / block (zero point, scale), evaluated with fp32 or int2 rows
# Needs bin/supergcn (or SUPERGCN_BIN) and mpirun; CORA defaults to the copy shipped for the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
SEEDS=${SEEDS:-10}
CORA=${CORA:-internal/testdataset/testdata/cora}
NP=${NP:-4}
LP=${LP:-0.5}
THREADS=${THREADS:-1}
MPIRUN=(${MPIRUN:-mpirun --oversubscribe} -np "$NP")
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
common=(--data "$CORA" --feat-norm row --model gcn --layers 2 --hidden 16 --dropout 0.5 --lr 0.01 --weight-decay 5e-4 --epochs 200 --threads "$THREADS")
# The P ranks share this machine: --intra-bits 2 quantises their rows as
# ranks on separate nodes would be (rows inside a node default to fp32).
row() { printf '%-34s ' "$1"; shift; scripts/seeds.sh "$SEEDS" "$@" | tail -n 1; }
echo "Cora GCN, $SEEDS seeds, mean ± std of test accuracy"
row "P=1 fp32"                     -- "${common[@]}" --bits 32
row "P=$NP fp32"                   "${MPIRUN[@]}" -- "${common[@]}" --bits 32
row "P=$NP fp32 + label prop $LP"  "${MPIRUN[@]}" -- "${common[@]}" --bits 32 --label-prop "$LP"
row "P=$NP int2"                   "${MPIRUN[@]}" -- "${common[@]}" --bits 2 --intra-bits 2
row "P=$NP int2 + label prop $LP"  "${MPIRUN[@]}" -- "${common[@]}" --bits 2 --intra-bits 2 --label-prop "$LP"
# Parameter layouts and the evaluation codec (the default: block params, int2 evaluation).
row "P=$NP int2 fp32 params, eval fp32" "${MPIRUN[@]}" -- "${common[@]}" --bits 2 --intra-bits 2 --quant-params fp32 --eval-bits 32
row "P=$NP int2 bf16 params, eval fp32" "${MPIRUN[@]}" -- "${common[@]}" --bits 2 --intra-bits 2 --quant-params bf16 --eval-bits 32
row "P=$NP int2 block params, eval fp32" "${MPIRUN[@]}" -- "${common[@]}" --bits 2 --intra-bits 2 --quant-params block --eval-bits 32
row "P=$NP int2 block params, eval int2" "${MPIRUN[@]}" -- "${common[@]}" --bits 2 --intra-bits 2 --quant-params block

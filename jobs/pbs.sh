#!/bin/bash
# PBS Pro: full-batch training, one MPI rank per mpiproc, its threads from
# the chunk's CPUs. Give the shape and the walltime at submission, the
# partition directory and the training flags with -v:
#   qsub -l select=4:ncpus=56:mpiprocs=2 -l walltime=02:00:00 \
#     -v PDIR=/path/to/partitions-dir,TRAIN_ARGS="--model gcn --layers 3 --hidden 256 --epochs 500" jobs/pbs.sh
# (TRAIN_ARGS is split on spaces.)
#
# At the walltime: supergcn gets --stop-after (walltime minus MARGIN), so
# every rank stops after an epoch, the checkpoint is written and supergcn
# exits 75 (SIGTERM from qdel does the same); this script then resubmits
# itself with the same run directory, and the next job resumes. PBS Pro's
# own requeue (qrerun) needs an operator, hence the resubmission.
# Environment (-v):
#   SUPERGCN  the binary (default: bin/supergcn in the submission directory)
#   RUN_DIR   checkpoint, metrics and output (default: runs/JOBNAME-JOBID)
#   MARGIN    seconds kept before the walltime (default 300)
#   MPIRUN    the launcher (default: mpirun, with PBS_NODEFILE)
#   SCRIPT    this script, for the resubmission (default: jobs/pbs.sh in the submission directory)
#PBS -N supergcn
#PBS -l walltime=01:00:00
#PBS -j oe
set -euo pipefail
cd "$PBS_O_WORKDIR"
: "${PDIR:?qsub -v PDIR=/path/to/partitions-dir[,TRAIN_ARGS=...] jobs/pbs.sh}"
SUPERGCN=${SUPERGCN:-$PBS_O_WORKDIR/bin/supergcn}
[ -x "$SUPERGCN" ] || { echo "jobs/pbs.sh: no executable $SUPERGCN (build it, or qsub -v SUPERGCN=/path/to/supergcn)" >&2; exit 1; }
JOBNUM=${PBS_JOBID%%.*}
RUN_DIR=${RUN_DIR:-$PBS_O_WORKDIR/runs/$PBS_JOBNAME-$JOBNUM}
mkdir -p "$RUN_DIR"
CKPT=$RUN_DIR/supergcn.ckpt
RESUME=()
if [ -f "$CKPT" ]; then RESUME=(--resume "$CKPT"); fi
read -r -a TRAIN <<<"${TRAIN_ARGS:-}"

# Ranks: one per line of the node file; threads: the chunk's CPUs (NCPUS)
# shared by the ranks of this node.
NP=$(wc -l <"$PBS_NODEFILE")
PER_NODE=$(grep -c -x "$(head -n 1 "$PBS_NODEFILE")" "$PBS_NODEFILE")
THREADS=$(( ${NCPUS:-$(nproc)} / PER_NODE ))
# Seconds of walltime left to this job, minus the margin.
WALL=$(qstat -f "$PBS_JOBID" | sed -n 's/^ *Resource_List.walltime = //p')
IFS=: read -r h m s <<<"${WALL:-01:00:00}"
STOP=$(( 10#$h * 3600 + 10#$m * 60 + 10#$s - ${MARGIN:-300} ))
# A limit shorter than the margin: stop at half of it.
[ "$STOP" -gt 0 ] || STOP=$(( (10#$h * 3600 + 10#$m * 60 + 10#$s) / 2 ))

echo "jobs/pbs.sh: job $PBS_JOBID, $NP rank(s), $PER_NODE per node × $THREADS threads, stop after ${STOP}s, run directory $RUN_DIR"
set +e
${MPIRUN:-mpirun -np "$NP" --hostfile "$PBS_NODEFILE" --map-by "ppr:$PER_NODE:node:PE=$THREADS" --bind-to core} \
	"$SUPERGCN" train --partitions "$PDIR" --threads "$THREADS" --stop-after "${STOP}s" \
	--save "$CKPT" --save-every 50 --metrics "$RUN_DIR/metrics.jsonl" "${RESUME[@]}" "${TRAIN[@]}" \
	>>"$RUN_DIR/output.log" 2>&1
rc=$?
set -e
if [ "$rc" -eq 75 ]; then
	echo "jobs/pbs.sh: stopped before the walltime with a checkpoint; resubmitting"
	qsub -v "PDIR=$PDIR,TRAIN_ARGS=${TRAIN_ARGS:-},RUN_DIR=$RUN_DIR,SUPERGCN=$SUPERGCN,MARGIN=${MARGIN:-300}" \
		-l "walltime=$WALL" "${SCRIPT:-$PBS_O_WORKDIR/jobs/pbs.sh}"
	exit 0
fi
exit "$rc"

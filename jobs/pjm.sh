#!/bin/bash
# Fujitsu PJM on Fugaku (A64FX: 48 cores in 4 CMGs of 12). Default layout:
# one rank per CMG (max-proc-per-node=4) with its 12 cores as threads, each
# rank on its CMG's own HBM2, and int2 boundary rows (supergcn's default with
# several ranks): at the all-to-all rate Tofu-D reaches across a few hundred
# nodes, int2 is predicted 1.6× faster than fp32 (docs/LAYOUT.md, "A64FX").
# Give the shape at submission (these directives are defaults), the
# partition directory and the training flags as arguments:
#   pjsub -L "node=16" -L "elapse=02:00:00" --mpi "max-proc-per-node=4" \
#     jobs/pjm.sh /path/to/partitions-dir --model gcn --layers 3 --hidden 256 --epochs 500
# Build bin/supergcn-arm64 first, on a Fugaku login node with Fujitsu MPI
# (docs/CLI.md, "Time limits, signals and the job scripts").
#
# At the elapse limit: supergcn gets --stop-after (ELAPSE minus MARGIN), so
# every rank stops after an epoch, writes the checkpoint and exits 75. To
# continue automatically, submit the job as a step job of several steps
# sharing the run directory; each step resumes from the checkpoint, and
# steps after the end of the training exit at once:
#   pjsub --step --sparam "sn=1" -N mygcn jobs/pjm.sh PDIR ...        # prints JOBID
#   pjsub --step --sparam "jid=JOBID,sn=2" -N mygcn jobs/pjm.sh PDIR ...
# Environment (pjsub -x NAME=VALUE):
#   SUPERGCN  the binary (default: bin/supergcn-arm64 in the submission directory)
#   RUN_DIR   checkpoint, metrics and output (default: runs/JOBNAME: the steps share it)
#   ELAPSE    the elapse limit given to PJM (default 01:00:00: keep it in step with -L elapse)
#   MARGIN    seconds kept before it (default 300)
#   DRY_RUN=1 the same as --dry-run
# Options, before the training flags: --help prints this; --dry-run (before
# or after the partition directory) prints the mpiexec line and the layout
# (ranks, per node, threads per rank, --stop-after, run directory, resume
# or not) and submits, runs and creates nothing. It needs no PJM: outside a
# job it stands in PJM_O_WORKDIR=$PWD, PJM_JOBNAME=supergcn,
# PJM_PROC_BY_NODE=4 (as the job does) and one node where PJM_NODE is
# unset; a missing binary is a warning there. Check on a login node:
#   PJM_NODE=16 ELAPSE=02:00:00 jobs/pjm.sh --dry-run PDIR --epochs 500
#PJM -L "node=16"
#PJM -L "rscgrp=small"
#PJM -L "elapse=01:00:00"
#PJM --mpi "max-proc-per-node=4"
#PJM -g your-group
#PJM -x PJM_LLIO_GFSCACHE=/vol0004
#PJM -s
set -euo pipefail
usage="usage: pjsub [shape] jobs/pjm.sh [--dry-run] PARTITION_DIR [--dry-run] [train flags...]
       jobs/pjm.sh --help"
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
PDIR=${1:?usage: pjsub jobs/pjm.sh PARTITION_DIR [train flags...]}
shift
if [ $# -ge 1 ] && [ "$1" = --dry-run ]; then DRY=1; shift; fi
SUBMIT_DIR=${PJM_O_WORKDIR:-$PWD}
SUPERGCN=${SUPERGCN:-$SUBMIT_DIR/bin/supergcn-arm64}
if [ ! -x "$SUPERGCN" ]; then
	echo "jobs/pjm.sh: no executable $SUPERGCN (build it: README; or pjsub -x SUPERGCN=/path)" >&2
	[ "$DRY" = 1 ] || exit 1
fi
RUN_DIR=${RUN_DIR:-$SUBMIT_DIR/runs/${PJM_JOBNAME:-supergcn}}
[ "$DRY" = 1 ] || mkdir -p "$RUN_DIR"
if [ -f "$RUN_DIR/done" ]; then
	echo "jobs/pjm.sh: $RUN_DIR/done exists: the training has finished"
	exit 0
fi
CKPT=$RUN_DIR/supergcn.ckpt
RESUME=()
if [ -f "$CKPT" ]; then RESUME=(--resume "$CKPT"); fi
# Threads: --threads auto, the cores of the rank's CMG (Fujitsu MPI binds
# each of 4 ranks to one), or the node's cores divided among its ranks
# (PJM_PROC_BY_NODE is max-proc-per-node) where they are not bound.
PER_NODE=${PJM_PROC_BY_NODE:-4}
IFS=: read -r h m s <<<"${ELAPSE:-01:00:00}"
STOP=$(( 10#$h * 3600 + 10#$m * 60 + 10#$s - ${MARGIN:-300} ))
# A limit shorter than the margin: stop at half of it.
[ "$STOP" -gt 0 ] || STOP=$(( (10#$h * 3600 + 10#$m * 60 + 10#$s) / 2 ))
echo "jobs/pjm.sh: $PER_NODE rank(s) per node, --threads auto, stop after ${STOP}s, run directory $RUN_DIR"
# Per-rank output files: Fugaku's mpiexec expands %j (job id), %r (rank)
# and %/1000r (rank / 1000, one directory per 1000 ranks).
LAUNCH=(mpiexec -stdout-proc "$RUN_DIR/output.%j/%/1000r/stdout" -stderr-proc "$RUN_DIR/output.%j/%/1000r/stderr"
	"$SUPERGCN" train --partitions "$PDIR" --threads auto --stop-after "${STOP}s"
	--save "$CKPT" --save-every 50 --metrics "$RUN_DIR/metrics.jsonl" ${RESUME[@]+"${RESUME[@]}"} "$@")
if [ "$DRY" = 1 ]; then
	echo "jobs/pjm.sh: dry run: nothing submitted, run or created"
	if [ -n "${PJM_NODE:-}" ]; then echo "  nodes             $PJM_NODE (PJM_NODE)"; else echo "  nodes             1 (PJM_NODE unset: the stand-in)"; fi
	echo "  ranks             $(( ${PJM_NODE:-1} * PER_NODE ))"
	echo "  ranks per node    $PER_NODE"
	echo "  threads per rank  auto (the rank's CMG where Fujitsu MPI binds it, else the node's cores / ranks per node: $(nproc) / $PER_NODE here)"
	echo "  elapse            ${ELAPSE:-01:00:00}, --stop-after ${STOP}s"
	echo "  run directory     $RUN_DIR"
	if [ -f "$CKPT" ]; then echo "  resume            yes, from $CKPT"; else echo "  resume            no (no $CKPT)"; fi
	printf 'launch:'
	printf ' %q' ${LAUNCH[@]+"${LAUNCH[@]}"}
	printf '\n'
	exit 0
fi
set +e
${LAUNCH[@]+"${LAUNCH[@]}"}
rc=$?
set -e
case $rc in
0) touch "$RUN_DIR/done" ;;
75) echo "jobs/pjm.sh: stopped before the elapse limit with a checkpoint; the next step resumes"; exit 0 ;;
esac
exit "$rc"

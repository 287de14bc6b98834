#!/bin/bash
# PBS Pro: full-batch training, by default one MPI rank per chunk (PBS's
# default mpiprocs=1) with all the chunk's CPUs as its threads, the fastest
# layout on a cluster network (docs/LAYOUT.md). Give the shape and the
# walltime at submission, the partition directory and the training flags
# with -v:
#   qsub -l select=4:ncpus=56 -l place=scatter:excl -l walltime=02:00:00 \
#     -v PDIR=/path/to/partitions-dir,TRAIN_ARGS="--model gcn --layers 3 --hidden 256 --epochs 500" jobs/pbs.sh
# (TRAIN_ARGS is split on spaces.) Several ranks per chunk: mpiprocs=R in
# the select, or -v RANKS_PER_NODE=R (or numa: one per NUMA domain); each
# rank gets the chunk's ncpus divided among them, as threads bound to its
# own cores.
#
# At the walltime: supergcn gets --stop-after (walltime minus MARGIN), so
# every rank stops after an epoch, the checkpoint is written and supergcn
# exits 75; this script then resubmits itself with the same run directory,
# and the next job resumes. SIGTERM from qdel reaches mpirun and the ranks:
# the ranks stop after their epoch with the checkpoint, and OpenMPI's mpirun
# waits odls_base_sigkill_timeout (set to KILL_WAIT below, default 30 s;
# PBS's kill_delay bounds it too) before it kills them; mpirun then exits 1
# and nothing is resubmitted (qdel means stop). PBS Pro's
# own requeue (qrerun) needs an operator, hence the resubmission.
# Environment (-v):
#   SUPERGCN  the binary (default: bin/supergcn in the submission directory)
#   RUN_DIR   checkpoint, metrics and output (default: runs/JOBNAME-JOBID)
#   MARGIN    seconds kept before the walltime (default 300)
#   KILL_WAIT seconds mpirun lets the ranks finish their epoch after SIGTERM (default 30)
#   MPIRUN    the launcher (default: mpirun, with PBS_NODEFILE)
#   SCRIPT    this script, for the resubmission (default: jobs/pbs.sh in the submission directory)
#   RANKS_PER_NODE  ranks per node: a count, or numa (default: the node file's lines per node)
#   DRY_RUN=1 the same as --dry-run
# The resubmission keeps the job's select, place, queue, account and name.
# Options: --help prints this; --dry-run prints the mpirun line and the
# layout (ranks, per node, threads per rank, --stop-after, run directory,
# resume or not) and submits, runs and creates nothing (no run directory,
# no hostfile). It needs no PBS: outside a job it stands in
# PBS_O_WORKDIR=$PWD, PBS_JOBID=dry-run, PBS_JOBNAME=supergcn, this host
# for a missing PBS_NODEFILE, the CPUs from nproc for a missing NCPUS and
# walltime 01:00:00 where qstat knows no job; a missing binary is a
# warning there. Check a shape on a login node:
#   PDIR=products-64 NCPUS=56 RANKS_PER_NODE=2 jobs/pbs.sh --dry-run
#PBS -N supergcn
#PBS -l walltime=01:00:00
#PBS -j oe
set -euo pipefail
usage="usage: qsub [shape] -v PDIR=/path/to/partitions-dir[,TRAIN_ARGS=...] jobs/pbs.sh
       PDIR=DIR [TRAIN_ARGS=...] jobs/pbs.sh --dry-run
       jobs/pbs.sh --help"
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
if [ "$DRY" = 1 ]; then
	# Stand-ins for a dry run outside a job (header).
	: "${PBS_O_WORKDIR:=$PWD}" "${PBS_JOBID:=dry-run}" "${PBS_JOBNAME:=supergcn}"
fi
cd "$PBS_O_WORKDIR"
: "${PDIR:?qsub -v PDIR=/path/to/partitions-dir[,TRAIN_ARGS=...] jobs/pbs.sh}"
SUPERGCN=${SUPERGCN:-$PBS_O_WORKDIR/bin/supergcn}
if [ ! -x "$SUPERGCN" ]; then
	echo "jobs/pbs.sh: no executable $SUPERGCN (build it, or qsub -v SUPERGCN=/path/to/supergcn)" >&2
	[ "$DRY" = 1 ] || exit 1
fi
JOBNUM=${PBS_JOBID%%.*}
RUN_DIR=${RUN_DIR:-$PBS_O_WORKDIR/runs/$PBS_JOBNAME-$JOBNUM}
[ "$DRY" = 1 ] || mkdir -p "$RUN_DIR"
CKPT=$RUN_DIR/supergcn.ckpt
RESUME=()
if [ -f "$CKPT" ]; then RESUME=(--resume "$CKPT"); fi
read -r -a TRAIN <<<"${TRAIN_ARGS:-}"

# Ranks per node: RANKS_PER_NODE, else one per line of the node file
# (mpiprocs per chunk); threads: the chunk's CPUs (NCPUS) divided among them.
if [ "$DRY" = 1 ] && { [ -z "${PBS_NODEFILE:-}" ] || [ ! -r "$PBS_NODEFILE" ]; }; then
	NODES=$(uname -n) NODESRC="this host: no PBS_NODEFILE"
else
	NODES=$(cat "$PBS_NODEFILE") NODESRC=$PBS_NODEFILE
fi
HOSTS=$(sort -u <<<"$NODES" | grep -c .)
PER_NODE=${RANKS_PER_NODE:-$(grep -c -x "$(head -n 1 <<<"$NODES")" <<<"$NODES")}
if [ "$PER_NODE" = numa ]; then
	PER_NODE=0
	for d in /sys/devices/system/node/node[0-9]*; do [ -d "$d" ] && PER_NODE=$((PER_NODE + 1)); done
	[ "$PER_NODE" -ge 1 ] || PER_NODE=1
fi
case $PER_NODE in '' | *[!0-9]* | 0) echo "jobs/pbs.sh: RANKS_PER_NODE=$PER_NODE is not a count ≥ 1 or numa" >&2; exit 2 ;; esac
NP=$((HOSTS * PER_NODE))
THREADS=$(( ${NCPUS:-$(nproc)} / PER_NODE ))
[ "$THREADS" -ge 1 ] || { echo "jobs/pbs.sh: $PER_NODE ranks per node do not fit the chunk's ${NCPUS:-$(nproc)} CPUs" >&2; exit 2; }
HOSTFILE=$RUN_DIR/hostfile.$JOBNUM
[ "$DRY" = 1 ] || sort -u <<<"$NODES" | sed "s/\$/ slots=$PER_NODE/" >"$HOSTFILE"

# This job's attributes (qstat -f; a long value continues on lines that
# start with a tab).
QSTAT=$(qstat -f "$PBS_JOBID" 2>/dev/null || true)
qattr() {
	awk -v k="    $1 = " '
		index($0, k) == 1 { v = substr($0, length(k) + 1); on = 1; next }
		on && /^\t/ { sub(/^\t/, ""); v = v $0; next }
		{ on = 0 }
		END { print v }' <<<"$QSTAT"
}
# Seconds of walltime left to this job, minus the margin.
WALL=$(qattr Resource_List.walltime)
IFS=: read -r h m s <<<"${WALL:-01:00:00}"
STOP=$(( 10#$h * 3600 + 10#$m * 60 + 10#$s - ${MARGIN:-300} ))
# A limit shorter than the margin: stop at half of it.
[ "$STOP" -gt 0 ] || STOP=$(( (10#$h * 3600 + 10#$m * 60 + 10#$s) / 2 ))

echo "jobs/pbs.sh: job $PBS_JOBID, $NP rank(s) on $HOSTS node(s), $PER_NODE per node × $THREADS threads, stop after ${STOP}s, run directory $RUN_DIR"
export OMPI_MCA_odls_base_sigkill_timeout=${KILL_WAIT:-30}
if [ -n "${MPIRUN:-}" ]; then
	# shellcheck disable=SC2206 # split as the command line it is
	LAUNCH=($MPIRUN)
else
	LAUNCH=(mpirun -np "$NP" --hostfile "$HOSTFILE" --map-by "ppr:$PER_NODE:node:PE=$THREADS" --bind-to core)
fi
LAUNCH+=("$SUPERGCN" train --partitions "$PDIR" --threads "$THREADS" --stop-after "${STOP}s"
	--save "$CKPT" --save-every 50 --metrics "$RUN_DIR/metrics.jsonl" ${RESUME[@]+"${RESUME[@]}"} ${TRAIN[@]+"${TRAIN[@]}"})
if [ "$DRY" = 1 ]; then
	echo "jobs/pbs.sh: dry run: nothing submitted, run or created"
	echo "  nodes             $HOSTS ($NODESRC)"
	echo "  ranks             $NP"
	echo "  ranks per node    $PER_NODE"
	echo "  threads per rank  $THREADS (the chunk's ${NCPUS:-$(nproc)} CPUs / ranks per node)"
	echo "  walltime          ${WALL:-01:00:00 (qstat knows no job $PBS_JOBID: the default)}, --stop-after ${STOP}s"
	echo "  run directory     $RUN_DIR"
	if [ -f "$CKPT" ]; then echo "  resume            yes, from $CKPT"; else echo "  resume            no (no $CKPT)"; fi
	echo "  hostfile          $HOSTFILE (not written): $(sort -u <<<"$NODES" | sed "s/\$/ slots=$PER_NODE/" | paste -sd ' ' -)"
	echo "  on exit 75        qsub ${SCRIPT:-$PBS_O_WORKDIR/jobs/pbs.sh} again, same run directory"
	printf 'launch: OMPI_MCA_odls_base_sigkill_timeout=%q' "$OMPI_MCA_odls_base_sigkill_timeout"
	printf ' %q' ${LAUNCH[@]+"${LAUNCH[@]}"}
	printf ' >>%q 2>&1\n' "$RUN_DIR/output.log"
	exit 0
fi
set +e
${LAUNCH[@]+"${LAUNCH[@]}"} >>"$RUN_DIR/output.log" 2>&1
rc=$?
set -e
if [ "$rc" -eq 75 ]; then
	echo "jobs/pbs.sh: stopped before the walltime with a checkpoint; resubmitting"
	# The same shape, queue, account and name (quotes keep commas in a value).
	SUB=(-N "$PBS_JOBNAME" -l "walltime=$WALL")
	for a in select place; do
		v=$(qattr "Resource_List.$a")
		if [ -n "$v" ]; then SUB+=(-l "$a=$v"); fi
	done
	v=$(qattr queue)
	if [ -n "$v" ]; then SUB+=(-q "$v"); fi
	v=$(qattr Account_Name)
	if [ -n "$v" ]; then SUB+=(-A "$v"); fi
	qsub ${SUB[@]+"${SUB[@]}"} \
		-v "PDIR=$PDIR,TRAIN_ARGS='${TRAIN_ARGS:-}',RUN_DIR=$RUN_DIR,SUPERGCN=$SUPERGCN,MARGIN=${MARGIN:-300}${RANKS_PER_NODE:+,RANKS_PER_NODE=$RANKS_PER_NODE}" \
		"${SCRIPT:-$PBS_O_WORKDIR/jobs/pbs.sh}"
	exit 0
fi
exit "$rc"

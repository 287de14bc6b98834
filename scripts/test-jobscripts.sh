#!/usr/bin/env bash
# Runs jobs/pbs.sh and jobs/pjm.sh outside their schedulers, with stand-in
# qstat/qsub (PBS Pro) and mpiexec (Fujitsu MPI) commands that record their
# arguments: no PBS server or Fugaku here, so this checks the scripts' own
# logic, not the schedulers. For each script: the shape comes from the
# scheduler's variables, the training flags reach supergcn, a limit shorter
# than the training stops it with a checkpoint (--stop-after from the
# walltime/elapse), the continuation (PBS: the resubmission qsub received,
# with the job's select, place, queue, account and name; PJM: the next
# step) resumes and ends with the uninterrupted run's loss; the layout
# (ranks per node, threads, binding) reaches the launcher. Every job script
# is also checked for constructs newer than bash 4.2 (RHEL 7 login nodes).
# All three (jobs/slurm.sh too) answer --help with their usage, and
# --dry-run/DRY_RUN=1 with the launch line and the layout, outside any
# scheduler, creating and launching nothing.
# (jobs/slurm.sh runs against a real Slurm: scripts/test-slurm.sh.)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "test-jobscripts: FAIL: $*" >&2; exit 1; }

# bash 4.2: no ${x@Q} and other @ operators, declare/local -n, mapfile/readarray -d,
# wait -n, negative subscripts, and no "${a[@]}" (an error for an empty array
# under set -u before bash 4.4; ${a[@]+"${a[@]}"} is the portable form).
for f in jobs/*.sh; do
	bad=$(sed -E 's/\$\{([A-Za-z_][A-Za-z0-9_]*)\[@\]\+"\$\{\1\[@\]\}"\}//g' "$f" |
		grep -nE '"\$\{[A-Za-z_][A-Za-z0-9_]*\[@\]\}"|\$\{[A-Za-z_][A-Za-z0-9_]*@[QEPAKa]\}|(declare|local) -[a-zA-Z]*n|(mapfile|readarray) .*-d|wait -n|\[-[0-9]+\]\}' || true)
	[ -z "$bad" ] || fail "$f: constructs bash 4.2 does not have: $bad"
	bash -n "$f" || fail "$f: bash -n"
done

TAGS=${TAGS-$(pkg-config --exists openblas 2>/dev/null && echo openblas || true)}
BIN=$T/supergcn
go build -tags "$TAGS" -o "$BIN" ./cmd/supergcn
"$BIN" partition --synthetic nodes=20000,degree=10,classes=4,feat=32,seed=5 --parts 1 --out "$T/pdir" >/dev/null
EPOCHS=600
# The training runs about 7 s on 2 cores; the limits below stop it after 1 s.
FLAGS="--epochs $EPOCHS --seed 5 --hidden 32 --quiet"
# shellcheck disable=SC2086
"$BIN" train --partitions "$T/pdir" --threads 1 --metrics "$T/ref.jsonl" $FLAGS >/dev/null
last_loss() { grep "\"epoch\":$EPOCHS," "$1" | tail -n 1 | sed 's/.*"loss":\([^,]*\),.*/\1/'; }
REF=$(last_loss "$T/ref.jsonl")
[ -n "$REF" ] || fail "the uninterrupted run has no epoch $EPOCHS"

# Stand-ins: qstat prints the walltime; qsub records its arguments;
# mpirun/mpiexec record theirs and run the binary (one process).
mkdir -p "$T/stub"
cat >"$T/stub/qstat" <<'EOS'
#!/bin/sh
echo "Job Id: $2"
echo "    Job_Name = sg"
echo "    Resource_List.select = 1:ncpus=1:mem=2gb:host=a-node-with-a-name-long-enough-for-qs"
printf '\ttat-to-wrap-it\n'
echo "    Resource_List.place = scatter:excl"
echo "    Resource_List.walltime = $STUB_WALLTIME"
echo "    queue = workq"
echo "    Account_Name = proj42"
EOS
cat >"$T/stub/qsub" <<'EOS'
#!/bin/sh
printf '%s\n' "$@" >"$STUB_LOG.qsub"
echo 124.server
EOS
cat >"$T/stub/mpirun" <<'EOS'
#!/bin/sh
printf '%s\n' "$@" >"$STUB_LOG.launcher"
[ -z "${STUB_DRY:-}" ] || exit 0
while [ $# -gt 0 ] && [ "$1" != "$SUPERGCN" ]; do shift; done
exec "$@"
EOS
cp "$T/stub/mpirun" "$T/stub/mpiexec"
chmod +x "$T/stub"/*
export PATH=$T/stub:$PATH SUPERGCN=$BIN STUB_LOG=$T/log

# --- PBS Pro: one line in the node file (one rank), NCPUS=1.
mkdir -p "$T/pbs"
printf 'n1\n' >"$T/pbs/nodes"
pbs() {
	env PBS_O_WORKDIR="$T/pbs" PBS_JOBID="$1.server" PBS_JOBNAME=sg PBS_NODEFILE="$T/pbs/nodes" NCPUS=1 \
		PDIR="$T/pdir" TRAIN_ARGS="$FLAGS" MARGIN=7 STUB_WALLTIME="$2" SCRIPT="$ROOT/jobs/pbs.sh" ${3:+RUN_DIR=$3} \
		bash "$ROOT/jobs/pbs.sh" >"$T/pbs/job$1.out" 2>&1
}
pbs 123 00:00:08 || fail "pbs.sh: exit $? $(cat "$T/pbs/job123.out")"
RUN=$T/pbs/runs/sg-123
grep -q "stopped on request" "$RUN/output.log" || fail "pbs.sh: the walltime did not stop the training: $(cat "$RUN/output.log")"
grep -qx -- "--stop-after" "$T/log.launcher" && grep -qx "1s" "$T/log.launcher" || fail "pbs.sh: no --stop-after 1s (walltime 8 s - margin 7 s): $(tr '\n' ' ' <"$T/log.launcher")"
grep -qx -- "--hidden" "$T/log.launcher" || fail "pbs.sh: TRAIN_ARGS did not reach supergcn"
grep -q "RUN_DIR=$RUN" "$T/log.qsub" && grep -qx "walltime=00:00:08" "$T/log.qsub" || fail "pbs.sh: resubmission $(tr '\n' ' ' <"$T/log.qsub")"
for want in "select=1:ncpus=1:mem=2gb:host=a-node-with-a-name-long-enough-for-qstat-to-wrap-it" "place=scatter:excl" workq proj42 sg; do
	grep -qx -- "$want" "$T/log.qsub" || fail "pbs.sh: the resubmission lost $want: $(tr '\n' ' ' <"$T/log.qsub")"
done
grep -q "TRAIN_ARGS='$FLAGS'" "$T/log.qsub" || fail "pbs.sh: TRAIN_ARGS not passed quoted: $(tr '\n' ' ' <"$T/log.qsub")"
grep -qx "ppr:1:node:PE=1" "$T/log.launcher" && grep -qx -- "--bind-to" "$T/log.launcher" || fail "pbs.sh: layout $(tr '\n' ' ' <"$T/log.launcher")"
rm -f "$T/log.qsub"
pbs 124 01:00:00 "$RUN" || fail "pbs.sh (resubmitted): $(cat "$T/pbs/job124.out")"
[ ! -f "$T/log.qsub" ] || fail "pbs.sh resubmitted a finished training"
got=$(last_loss "$RUN/metrics.jsonl")
[ "$got" = "$REF" ] || fail "pbs.sh: final loss $got after the resubmission, uninterrupted $REF"
echo "test-jobscripts: pbs.sh stopped at the walltime, resubmitted itself (same select, place, queue, account), resumed to the uninterrupted loss $REF"

# --- PBS layouts: two chunks of 8 CPUs with the default mpiprocs=1 run one
# rank per node × 8 threads; RANKS_PER_NODE=4 runs 4 × 2 (mpirun only
# records here: STUB_DRY).
printf 'n1\nn2\n' >"$T/pbs/nodes2"
layout() {
	env PBS_O_WORKDIR="$T/pbs" PBS_JOBID="$1.server" PBS_JOBNAME=sg PBS_NODEFILE="$T/pbs/nodes2" NCPUS=8 \
		PDIR="$T/pdir" STUB_WALLTIME=01:00:00 STUB_DRY=1 ${2:+RANKS_PER_NODE=$2} bash "$ROOT/jobs/pbs.sh" >/dev/null 2>&1 || true
	tr '\n' ' ' <"$T/log.launcher"
}
got=$(layout 200 "")
case $got in *"-np 2 "*"ppr:1:node:PE=8"*"--threads 8 "*) ;; *) fail "pbs.sh default layout on 2 × 8 CPUs: $got" ;; esac
got=$(layout 201 4)
case $got in *"-np 8 "*"ppr:4:node:PE=2"*"--threads 2 "*) ;; *) fail "pbs.sh RANKS_PER_NODE=4 on 2 × 8 CPUs: $got" ;; esac
grep -qx "n2 slots=4" "$T/pbs/runs/sg-201/hostfile.201" || fail "pbs.sh: hostfile $(cat "$T/pbs/runs/sg-201/hostfile.201")"
echo "test-jobscripts: pbs.sh layouts: 2 nodes × 8 CPUs → 2 ranks × 8 threads (default), 8 ranks × 2 threads (RANKS_PER_NODE=4)"

# --- PJM: one rank per node; the second step resumes, a third finds the
# training done.
mkdir -p "$T/pjm"
pjm() {
	(cd "$T/pjm" && env PJM_O_WORKDIR="$T/pjm" PJM_JOBNAME=sg PJM_PROC_BY_NODE=1 ELAPSE="$1" MARGIN=7 \
		bash "$ROOT/jobs/pjm.sh" "$T/pdir" $FLAGS) >>"$T/pjm/steps.out" 2>&1
}
pjm 00:00:08 || fail "pjm.sh step 1: $(cat "$T/pjm/steps.out")"
RUN=$T/pjm/runs/sg
grep -q "stopped before the elapse limit" "$T/pjm/steps.out" || fail "pjm.sh: the elapse limit did not stop the training: $(cat "$T/pjm/steps.out")"
grep -qx "$RUN/output.%j/%/1000r/stdout" "$T/log.launcher" || fail "pjm.sh: -stdout-proc $(tr '\n' ' ' <"$T/log.launcher")"
grep -A1 -x -- "--threads" "$T/log.launcher" | grep -qx auto || fail "pjm.sh: no --threads auto: $(tr '\n' ' ' <"$T/log.launcher")"
pjm 01:00:00 || fail "pjm.sh step 2: $(cat "$T/pjm/steps.out")"
[ -f "$RUN/done" ] || fail "pjm.sh: step 2 did not finish"
pjm 01:00:00 || fail "pjm.sh step 3"
grep -q "the training has finished" "$T/pjm/steps.out" || fail "pjm.sh: step 3 did not see the finished training"
got=$(last_loss "$RUN/metrics.jsonl")
[ "$got" = "$REF" ] || fail "pjm.sh: final loss $got after the next step, uninterrupted $REF"
echo "test-jobscripts: pjm.sh stopped at the elapse limit, the next step resumed to the uninterrupted loss, the third exited"

# --- --help and --dry-run, outside any scheduler (env -i: no SLURM_, PBS_ or
# PJM_ variables): --help exits 0 with the usage; --dry-run prints the
# launch line and the layout and runs, submits and creates nothing (the
# stand-in launchers and qsub record nothing, the directory stays empty).
cat >"$T/stub/srun" <<'EOS'
#!/bin/sh
printf '%s\n' "$@" >"$STUB_LOG.launcher"
EOS
cp "$T/stub/srun" "$T/stub/scontrol"
chmod +x "$T/stub/srun" "$T/stub/scontrol"
D=$T/dry
mkdir -p "$D"
rm -f "$T"/log.*
bare() { (cd "$D" && env -i PATH="$PATH" HOME="$D" STUB_LOG="$STUB_LOG" "$@"); }
for s in slurm pbs pjm; do
	out=$(bare bash "$ROOT/jobs/$s.sh" --help 2>&1) || fail "$s.sh --help: exit $?: $out"
	grep -q "^usage: " <<<"$out" || fail "$s.sh --help: no usage: $out"
done
# dry <name> <want...> [-- env and arguments]: the output holds every want.
dry() {
	local name=$1 wants=() out
	shift
	while [ "$1" != -- ]; do wants+=("$1"); shift; done
	shift
	out=$(bare "$@" 2>&1) || fail "$name: exit $?: $out"
	for w in "${wants[@]}" "ranks per node" "threads per rank" "run directory" "resume"; do
		grep -qF -- "$w" <<<"$out" || fail "$name: no \"$w\" in: $out"
	done
	grep -q "^launch: .*$BIN train " <<<"$out" || fail "$name: no launch line with $BIN train: $out"
}
dry "slurm.sh --dry-run" "srun --mpi=pmix --ntasks=1 --ntasks-per-node=1" "--partitions $T/pdir" "--epochs 5" "resume            no" \
	-- SUPERGCN="$BIN" bash "$ROOT/jobs/slurm.sh" --dry-run "$T/pdir" --epochs 5
dry "slurm.sh PDIR --dry-run on 2 × 8 CPUs" "--ntasks=8 --ntasks-per-node=4 --cpus-per-task=2" "threads per rank  2" "$D/runs/supergcn-dry-run" \
	-- SUPERGCN="$BIN" SLURM_JOB_NUM_NODES=2 SLURM_CPUS_ON_NODE=8 RANKS_PER_NODE=4 bash "$ROOT/jobs/slurm.sh" "$T/pdir" --dry-run --epochs 5
CK=$T/pbs/runs/sg-123
[ -f "$CK/supergcn.ckpt" ] || fail "no checkpoint in $CK for the resume case"
dry "DRY_RUN=1 slurm.sh --data" "--data $T/g.sgb" "resume            yes" "--resume $CK/supergcn.ckpt" \
	-- SUPERGCN="$BIN" DRY_RUN=1 RUN_DIR="$CK" bash "$ROOT/jobs/slurm.sh" --data "$T/g.sgb" --epochs 5
dry "pbs.sh --dry-run" "mpirun -np 1 " "this host" "--partitions $T/pdir" "--epochs 5" \
	-- SUPERGCN="$BIN" PDIR="$T/pdir" TRAIN_ARGS="--epochs 5" bash "$ROOT/jobs/pbs.sh" --dry-run
dry "DRY_RUN=1 pbs.sh on 2 × 8 CPUs" "-np 8 " "ppr:4:node:PE=2" "--threads 2 " "threads per rank  2" \
	-- SUPERGCN="$BIN" PDIR="$T/pdir" DRY_RUN=1 PBS_NODEFILE="$T/pbs/nodes2" NCPUS=8 RANKS_PER_NODE=4 bash "$ROOT/jobs/pbs.sh"
dry "pjm.sh --dry-run" "mpiexec -stdout-proc $D/runs/supergcn/output.%j" "ranks per node    4" "--threads auto" \
	-- SUPERGCN="$BIN" bash "$ROOT/jobs/pjm.sh" --dry-run "$T/pdir" --epochs 5
dry "DRY_RUN=1 pjm.sh PDIR --dry-run" "ranks             32" "--stop-after 7200s" \
	-- SUPERGCN="$BIN" PJM_NODE=16 PJM_PROC_BY_NODE=2 ELAPSE=02:05:00 DRY_RUN=1 bash "$ROOT/jobs/pjm.sh" "$T/pdir" --dry-run
[ -z "$(ls -A "$D")" ] || fail "a dry run created $(ls -A "$D")"
! ls "$T"/log.* >/dev/null 2>&1 || fail "a dry run launched or submitted: $(ls "$T"/log.*)"
echo "test-jobscripts: --help exits 0 with the usage; --dry-run (and DRY_RUN=1) prints the launch line and layout of all three, without a scheduler, creating nothing"

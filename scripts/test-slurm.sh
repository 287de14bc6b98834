#!/usr/bin/env bash
# Tests jobs/slurm.sh against a real Slurm (Debian's slurm-wlm, with munge):
# starts a one-node cluster on localhost from a configuration written into
# a temporary directory (munged, slurmctld, slurmd; no systemd needed),
# partitions a small synthetic graph, submits the job script with a
# 1-minute time limit and an early warning signal, and checks that
#   - the time limit interrupts the training (the job stops on the signal,
#     writes its checkpoint and exits 75),
#   - the script requeues the job, which resumes from the checkpoint (the
#     same job id, the same run directory) and finishes,
#   - the final loss equals the loss of an uninterrupted run (mpirun),
#   - srun --mpi=none (tasks without PMI) is refused with the explanation,
#     while one process in the batch script of a 2-task job trains,
#   - the job's ranks are bound by srun to their --cpus-per-task cores
#     (taskset -p of each running rank: 2 tasks × 1 CPU, disjoint) and
#     --threads auto gives each that many threads,
#   - the script's default layout (one rank per node, all its CPUs as
#     threads) with --data instead of a partition directory trains with
#     this machine's CPUs as threads.
# The test cluster sets cred_expire=10 (AuthInfo), which also shortens the
# wait before a requeued job may start again from 120 s to 10 s.
# The daemons are stopped at the end, on failure too. Exit 0 only when all
# of this held. Needs root to run slurmd (and to install the packages);
# skipped, saying so, without; about 5 minutes (2 cores).
#
# Environment: SLURM_TEST_KEEP=1 keeps the temporary directory (logs).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

# Without root, or without the packages, the test skips (exit 0), saying so.
[ "$(id -u)" -eq 0 ] || { echo "test-slurm: SKIP: needs root (slurmd runs jobs as their users)"; exit 0; }
scripts/deps.sh --optional slurm-wlm munge python3
for c in slurmctld slurmd munged python3; do
	command -v "$c" >/dev/null || { echo "test-slurm: SKIP: $c not installed (apt-get install slurm-wlm munge python3)"; exit 0; }
done

fail() { echo "test-slurm: FAIL: $*" >&2; exit 1; }
log() { echo "test-slurm: $*"; }

T=$(mktemp -d /tmp/supergcn-slurm.XXXXXX)
chmod 755 "$T"
PIDS=()
cleanup() {
	local rc=$?
	if [ -n "${SLURM_CONF:-}" ] && [ -f "$T/slurmctld.pid" ]; then
		scancel --quiet --full "${JOB:-0}" 2>/dev/null || true
	fi
	for f in slurmd slurmctld munged; do
		if [ -f "$T/$f.pid" ]; then
			kill "$(cat "$T/$f.pid")" 2>/dev/null || true
		fi
	done
	sleep 1
	for f in slurmd slurmctld munged; do
		if [ -f "$T/$f.pid" ]; then
			kill -9 "$(cat "$T/$f.pid")" 2>/dev/null || true
		fi
	done
	if [ $rc -ne 0 ]; then
		for f in slurmctld.log slurmd.log; do
			[ -f "$T/$f" ] && { echo "--- $f (tail)"; tail -n 25 "$T/$f"; }
		done
		for f in "$T"/work/*.out; do
			[ -f "$f" ] && { echo "--- $f"; cat "$f"; }
		done
	fi
	if [ "${SLURM_TEST_KEEP:-0}" = 1 ] || [ $rc -ne 0 ]; then
		echo "test-slurm: files kept in $T"
	else
		rm -rf "$T"
	fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- munge: a fresh key and socket in $T.
mungekey --create --keyfile="$T/munge.key" >/dev/null 2>&1 || dd if=/dev/urandom of="$T/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$T/munge.key"
munged --force --key-file="$T/munge.key" --socket="$T/munge.sock" --pid-file="$T/munged.pid" \
	--log-file="$T/munged.log" --seed-file="$T/munged.seed" 2>"$T/munged.err" ||
	fail "munged did not start: $(cat "$T/munged.err")"

# --- Slurm: one node with this machine's CPUs, ports free now.
NODE=$(hostname -s)
CPUS=$(nproc)
MEM=$(awk '/MemTotal/ { print int($2 / 1024 / 2) }' /proc/meminfo)
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
mkdir -p "$T/state" "$T/spool" "$T/work"
export SLURM_CONF=$T/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=supergcn-test
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$(port)
SlurmdPort=$(port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# cred_expire also delays a requeued job's restart (default 120 s)
AuthInfo=socket=$T/munge.sock,cred_expire=10
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=2,sched_interval=2
MpiDefault=none
JobRequeue=1
ReturnToService=2
KillWait=15
MinJobAge=600
InactiveLimit=0
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM State=UNKNOWN
PartitionName=tiny Nodes=$NODE Default=YES MaxTime=10 State=UP
EOF
slurmctld -i || fail "slurmctld did not start"
slurmd -N "$NODE" || fail "slurmd did not start"
for i in $(seq 60); do
	state=$(sinfo -h -n "$NODE" -o %t 2>/dev/null || true)
	[ "$state" = idle ] && break
	sleep 1
done
[ "$state" = idle ] || fail "node $NODE is '$state', not idle, after 60 s"
log "one-node Slurm up ($NODE, $CPUS CPUs): $(sinfo -h -o '%P %a %l %D %t')"

# --- The binary, a 2-part partition directory and the uninterrupted run.
BIN=$T/supergcn
TAGS=${TAGS-$(pkg-config --exists openblas 2>/dev/null && echo openblas || true)}
go build -tags "$TAGS" -o "$BIN" ./cmd/supergcn
SPEC=nodes=30000,degree=10,classes=4,feat=32,seed=3
"$BIN" partition --synthetic "$SPEC" --parts 2 --out "$T/pdir" >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Enough epochs for ~90 s of training: the warning signal, due 30 s before
# the 1-minute limit, comes up to 30 s earlier (slurmctld checks time
# limits every 30 s), so within the first 30 s of each run, while it trains;
# 90 s leaves room for a calibration slowed by other load (a job that
# finishes before its warning fails the test), and the run takes two or
# more requeues.
# The rate comes from the training time the run reports (its final line),
# not the wall time around mpirun: start-up would make it look slower.
if [ -z "${SLURM_TEST_EPOCHS:-}" ]; then
	out=$(mpirun -np 2 "$BIN" train --partitions "$T/pdir" --threads 1 --epochs 200 --bits 4 --quiet)
	secs=$(sed -n 's/.* 200 epochs in \([0-9.]*\)s on .*/\1/p' <<<"$out" | head -n 1)
	[ -n "$secs" ] || fail "no training time in the calibration run's output: $out"
	SLURM_TEST_EPOCHS=$(python3 -c 'import sys; print(max(200, round(200 * 90 / max(float(sys.argv[1]), 0.01))))' "$secs")
fi
EPOCHS=$SLURM_TEST_EPOCHS
TRAIN=(--epochs "$EPOCHS" --seed 3 --bits 4 --quiet)
t0=$(date +%s)
mpirun -np 2 "$BIN" train --partitions "$T/pdir" --threads 1 --metrics "$T/ref.jsonl" "${TRAIN[@]}" >/dev/null
ref_s=$(($(date +%s) - t0))
final_loss() { python3 -c 'import json,sys
recs=[json.loads(l) for l in open(sys.argv[1])]
ep=[r for r in recs if "epoch" in r and not r.get("final") and not r.get("header")]
print("%d %.10g %d %d" % (ep[-1]["epoch"], ep[-1]["loss"], sum(1 for r in recs if r.get("header")), sum(1 for r in recs if r.get("final"))))' "$1"; }
read -r ref_epoch ref_loss _ _ <<<"$(final_loss "$T/ref.jsonl")"
header_threads() { python3 -c 'import json,sys
print(next(json.loads(l)["threads"] for l in open(sys.argv[1]) if json.loads(l).get("header")))' "$1"; }
log "uninterrupted run (mpirun -np 2): epoch $ref_epoch loss $ref_loss in ${ref_s}s"

# --- Tasks without PMI are refused (would be independent copies).
cd "$T/work"
if out=$(srun --mpi=none -n 2 "$BIN" train --partitions "$T/pdir" --epochs 1 2>&1); then
	fail "srun --mpi=none -n 2 trained: $out"
fi
grep -q "srun --mpi=pmix" <<<"$out" || fail "srun --mpi=none -n 2: no PMI explanation: $out"
log "srun --mpi=none -n 2 refused: $(grep -m1 -o 'srun started.*rank(s)' <<<"$out")"

# --- One process in a batch script of a 2-task job (no srun) is not a
# PMI mismatch: it trains.
if ! sbatch --wait --quiet --ntasks=2 --output="$T/work/batch-step.out" \
	--wrap "$BIN train --synthetic nodes=500,degree=4,classes=2,feat=8 --epochs 2 --quiet"; then
	fail "a single process in a 2-task batch script did not train: $(cat "$T/work/batch-step.out")"
fi
log "one process in a 2-task batch script trains: $(tail -n 1 "$T/work/batch-step.out")"

# --- The job: 1-minute limit, the warning signal 30 s before it.
JOB=$(SUPERGCN=$BIN sbatch --parsable --time=1 --signal=USR1@30 --ntasks-per-node=2 --cpus-per-task=1 \
	--job-name=sgtest "$ROOT/jobs/slurm.sh" "$T/pdir" "${TRAIN[@]}")
log "submitted job $JOB"
deadline=$(($(date +%s) + 480))
bound=""
while :; do
	# The ranks' binding, once, while they train: one CPU each, disjoint.
	if [ -z "$bound" ]; then
		pids=$(pgrep -f -- "^$BIN train --partitions" || true)
		if [ "$(echo "$pids" | grep -c .)" -eq 2 ]; then
			lists=$(for p in $pids; do taskset -cp "$p" 2>/dev/null | sed 's/.*: //'; done | sort)
			[ "$(echo "$lists" | grep -c .)" -eq 2 ] || fail "taskset -p of ranks $pids: $lists"
			for l in $lists; do
				case $l in *[,-]*) fail "a rank of the 2 × 1-CPU job is bound to CPUs $l, not one" ;; esac
			done
			[ "$(echo "$lists" | sort -u | grep -c .)" -eq 2 ] || fail "both ranks are bound to CPU $(echo $lists)"
			bound=$(echo $lists)
			log "ranks $(echo $pids) bound to CPUs $bound (taskset -p)"
		fi
	fi
	state=$(scontrol show job "$JOB" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2 || true)
	state=$(scontrol show job "$JOB" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2 || true)
	case "$state" in
	COMPLETED) break ;;
	FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE)
		fail "job $JOB ended $state" ;;
	esac
	[ "$(date +%s)" -lt "$deadline" ] || fail "job $JOB not done after 8 minutes (state $state)"
	sleep 1
done
[ -n "$bound" ] || fail "never saw the job's two ranks running to check their binding"
restarts=$(scontrol show job "$JOB" | grep -o 'Restarts=[0-9]*' | cut -d= -f2)
RUN=$T/work/runs/sgtest-$JOB
[ -f "$RUN/metrics.jsonl" ] || fail "no $RUN/metrics.jsonl"
read -r got_epoch got_loss headers finals <<<"$(final_loss "$RUN/metrics.jsonl")"
out=$(cat "$T/work/supergcn-$JOB.out")
[ "${restarts:-0}" -ge 1 ] || fail "job $JOB was not requeued (Restarts=$restarts): the time limit did not interrupt it"
grep -q "stopped on request after epoch" <<<"$out" || fail "job output has no stop message"
grep -q "resuming from" <<<"$out" || fail "the requeued job did not resume"
[ "$headers" -eq $((restarts + 1)) ] || fail "$headers run headers in the metrics for $((restarts + 1)) runs"
[ "$finals" -eq 1 ] || fail "$finals final records, want 1"
[ "$got_epoch" = "$ref_epoch" ] || fail "job ended at epoch $got_epoch, want $ref_epoch"
[ "$got_loss" = "$ref_loss" ] || fail "final loss $got_loss after the requeue, uninterrupted $ref_loss"
threads=$(header_threads "$RUN/metrics.jsonl")
[ "$threads" = 1 ] || fail "--threads auto gave the 1-CPU ranks $threads threads"
log "job $JOB: interrupted by its time limit $restarts time(s), requeued, resumed, final loss $got_loss = uninterrupted"

# --- The default layout (one rank per node, its CPUs as threads) on a
# dataset file (--data): srun must get --cpus-per-task, or the rank would
# be bound to one CPU and run one thread.
"$BIN" gen --spec nodes=3000,degree=8,classes=3,feat=16,seed=2 --out "$T/g.sgb" >/dev/null
if ! SUPERGCN=$BIN sbatch --wait --quiet --time=2 --job-name=sgdefault "$ROOT/jobs/slurm.sh" --data "$T/g.sgb" --epochs 3 >/dev/null; then
	fail "the default layout with --data failed: $(cat "$T"/work/supergcn-*.out | tail -n 20)"
fi
RUN=$(ls -d "$T"/work/runs/sgdefault-*)
out=$(cat "$T/work/supergcn-${RUN##*-}.out")
threads=$(header_threads "$RUN/metrics.jsonl")
[ "$threads" = "$CPUS" ] || fail "the default layout ran $threads threads on a $CPUS-CPU node: $out"
grep -q "1 per node × $CPUS CPU(s)" <<<"$out" || fail "the default layout is not one rank per node with all $CPUS CPUs: $out"
grep -q "1 rank(s) × $CPUS threads (auto: " <<<"$out" || fail "no --threads auto line: $out"
log "default layout: $(grep -o '1 rank(s) × .*threads (auto: [^)]*)' <<<"$out" | head -n 1)"
log "passed"

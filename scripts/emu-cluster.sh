#!/usr/bin/env bash
# Runs one mpirun job on an emulated cluster on this host, then tears it down
# (also on failure and Ctrl-C).
#
#   scripts/emu-cluster.sh NODES RANKS_PER_NODE RATE [-- ] COMMAND ARGS...
#   scripts/emu-cluster.sh 4 4 2.5gbit -- bin/supergcn train --partitions p16 --bits 2
#
# Each "node" is a network namespace with its own hostname (a UTS namespace per
# launched daemon) and one veth link to a Linux bridge that lives in a switch
# namespace of its own; nothing is added to the host's network namespace. The
# link is shaped in both directions with `tc tbf` at RATE (tc syntax: 100mbit,
# 2.5gbit, 10gbit; "none" leaves it unshaped), so a node sends and receives at
# most RATE, as through a full-duplex NIC. Ranks of one node talk through
# shared memory (Open MPI's vader), ranks of different nodes through TCP over
# the shaped links. mpirun runs in node 0 and starts one orted per node
# through `--mca plm rsh` with an agent that enters the node's namespaces.
#
# Needs root, ip and tc (iproute2), unshare (util-linux) and Open MPI's mpirun
# in PATH (LD_LIBRARY_PATH for carried copies is passed through). COMMAND is
# run as given under mpirun with NODES×RANKS_PER_NODE ranks.
#
# Environment:
#   EMU_BURST      tbf burst (default: 4 ms of RATE, at least 128kb)
#   EMU_LATENCY    tbf queue latency (default 20ms)
#   EMU_PIN        1: give each node its own slice of this host's cores (default
#                  when there are at least as many cores as ranks, or EMU_CORES is
#                  set), 0: no pinning
#   EMU_CORES      cores of each node's slice (default: this host's cores / NODES);
#                  more than that makes nodes share cores (said on stderr)
#   EMU_MPIRUN_ARGS  extra mpirun arguments (e.g. "--mca btl_tcp_links 2")
#   EMU_KEEP       1: leave the namespaces up after the run (for inspection;
#                  remove them later with scripts/emu-cluster.sh --cleanup ID)
#   EMU_STATS      a file to write the links' counters to after the run, one line
#                  "dropped=N retransmitted=N timeouts=N" (also printed on stderr):
#                  packets the shapers dropped (both directions of every link), TCP
#                  segments retransmitted and retransmission timeouts (all nodes).
#                  Drops and timeouts mean the queues overflowed (many flows into
#                  one link at once: incast), which costs far more than the bytes.
# Exit status: the job's.
set -euo pipefail

usage() {
  echo "usage: scripts/emu-cluster.sh NODES RANKS_PER_NODE RATE [--] COMMAND ARGS..." >&2
  echo "       scripts/emu-cluster.sh --cleanup ID   (remove the namespaces of run ID, see EMU_KEEP)" >&2
  exit 2
}
die() { echo "emu-cluster: $*" >&2; exit 2; }

# ---- teardown (also used by --cleanup) ----
teardown() {
  local id=$1 ns
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${id}-" || true); do
    # End whatever still runs in the namespace, then remove it (its veths go with it).
    local pids
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -n "$pids" ] && kill -TERM $pids 2>/dev/null || true
  done
  sleep 0.2
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${id}-" || true); do
    local pids
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -n "$pids" ] && kill -KILL $pids 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
    rm -rf "/etc/netns/$ns"
  done
  rm -rf "/tmp/${id}"
}

if [ "${1:-}" = "--cleanup" ]; then
  [ -n "${2:-}" ] || usage
  teardown "$2"
  exit 0
fi

[ $# -ge 4 ] || usage
NODES=$1 RPN=$2 RATE=$3
shift 3
[ "${1:-}" = "--" ] && shift
[ $# -ge 1 ] || usage
[[ "$NODES" =~ ^[1-9][0-9]*$ ]] && [ "$NODES" -le 250 ] || die "NODES: '$NODES' is not a count from 1 to 250"
[[ "$RPN" =~ ^[1-9][0-9]*$ ]] || die "RANKS_PER_NODE: '$RPN' is not a positive count"
[[ "$RATE" =~ ^([0-9]+(\.[0-9]+)?([kmg]?bit|[kmg]?bps)|none)$ ]] || die "RATE: '$RATE' is not a tc rate such as 100mbit, 2.5gbit or none"
[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces and tc)"
for c in ip unshare mpirun; do command -v "$c" >/dev/null || die "$c not found in PATH"; done
[ "$RATE" = none ] || command -v tc >/dev/null || die "tc not found in PATH"
[ -z "${EMU_STATS:-}" ] || { : >"$EMU_STATS"; } 2>/dev/null || die "EMU_STATS: cannot write $EMU_STATS"

# A short id keeps interface names within 15 characters and lets runs coexist.
ID="emu$(printf '%04x' $(( ($$ ^ RANDOM) & 0xffff )))"
SUB="10.$(( 200 + ($$ % 50) )).$(( RANDOM % 250 ))"
NP=$(( NODES * RPN ))
STATE=/tmp/${ID}
mkdir -p "$STATE"

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ "${EMU_KEEP:-0}" = 1 ]; then
    echo "emu-cluster: kept namespaces ${ID}-*; remove with: scripts/emu-cluster.sh --cleanup ${ID}" >&2
  else
    teardown "$ID"
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# tbf parameters: burst of ~4 ms of the rate (at least 128 kbit) so a GSO
# segment always fits, and a queue of EMU_LATENCY.
tc_rate_bps() { # RATE → bits per second (integer)
  awk -v r="$1" 'BEGIN{
    n = r + 0; u = r; sub(/^[0-9.]+/, "", u)
    m = 1
    if (u ~ /^k/) m = 1e3; else if (u ~ /^m/) m = 1e6; else if (u ~ /^g/) m = 1e9
    if (u ~ /bps$/) m *= 8
    printf "%d", n * m }'
}
if [ "$RATE" != none ]; then
  bps=$(tc_rate_bps "$RATE")
  burst_b=$(( bps / 8 / 250 ))
  [ "$burst_b" -lt 131072 ] && burst_b=131072
  BURST=${EMU_BURST:-${burst_b}b}
  LAT=${EMU_LATENCY:-20ms}
fi
shape() { # NS DEV
  [ "$RATE" = none ] && return 0
  ip netns exec "$1" tc qdisc add dev "$2" root tbf rate "$RATE" burst "$BURST" latency "$LAT"
}

SW=${ID}-sw
ip netns add "$SW"
ip -n "$SW" link set lo up
ip -n "$SW" link add br0 type bridge
ip -n "$SW" link set br0 up

hosts=$STATE/hosts
{ echo "127.0.0.1 localhost"; for i in $(seq 0 $((NODES - 1))); do echo "${SUB}.$((i + 1)) ${ID}-n${i}"; done; } >"$hosts"
hostfile=$STATE/hostfile
: >"$hostfile"
for i in $(seq 0 $((NODES - 1))); do
  ns=${ID}-n${i}
  ip netns add "$ns"
  mkdir -p "/etc/netns/$ns"
  cp "$hosts" "/etc/netns/$ns/hosts"   # ip netns exec binds it over /etc/hosts
  ip link add "${ID}a${i}" type veth peer name "${ID}b${i}"
  ip link set "${ID}a${i}" netns "$ns"
  ip link set "${ID}b${i}" netns "$SW"
  ip -n "$ns" link set "${ID}a${i}" name eth0
  ip -n "$ns" addr add "${SUB}.$((i + 1))/24" dev eth0
  ip -n "$ns" link set lo up
  ip -n "$ns" link set eth0 up
  ip -n "$SW" link set "${ID}b${i}" master br0
  ip -n "$SW" link set "${ID}b${i}" up
  shape "$ns" eth0            # node → switch
  shape "$SW" "${ID}b${i}"    # switch → node
  echo "${ID}-n${i} slots=${RPN}" >>"$hostfile"
done

# Per-node core slices, like separate machines, when the host has the cores.
cores=$(nproc)
pin=${EMU_PIN:-auto}
[ "$pin" = auto ] && [ -n "${EMU_CORES:-}" ] && pin=1
[ "$pin" = auto ] && { [ "$cores" -ge "$NP" ] && pin=1 || pin=0; }
# One "taskset -c LIST" prefix per node (line i+1 for node i), empty without
# pinning; the launch of node 0 and the agent both read it.
pins=$STATE/pins
per=${EMU_CORES:-$(( cores / NODES ))}
[[ "$per" =~ ^[0-9]+$ ]] || die "EMU_CORES: '$per' is not a count"
if [ "$pin" = 1 ] && [ $(( per * NODES )) -gt "$cores" ]; then
  echo "emu-cluster: ${NODES} nodes × ${per} cores > this host's ${cores}: the nodes share cores (slices wrap around)" >&2
fi
for i in $(seq 0 $((NODES - 1))); do
  if [ "$pin" != 1 ]; then echo ""
  elif [ "$per" -ge 1 ]; then
    echo "taskset -c $(for c in $(seq $(( i * per )) $(( (i + 1) * per - 1 ))); do echo $(( c % cores )); done | sort -nu | paste -sd, -)"
  else echo "taskset -c 0-$((cores - 1))"
  fi
done >"$pins"

# The rsh agent Open MPI calls as: AGENT [ssh-style options] HOST COMMAND...
agent=$STATE/agent.sh
cat >"$agent" <<EOF
#!/usr/bin/env bash
while [ \$# -gt 0 ] && [ "\${1#-}" != "\$1" ]; do shift; done   # options an ssh would take
host=\$1; shift
pin=\$(sed -n "\$(( \${host##*-n} + 1 ))p" "$pins")
exec ip netns exec "\$host" unshare --uts \$pin sh -c "hostname \$host; \$*"
EOF
chmod +x "$agent"

# link_stats: the shapers' drops and the nodes' TCP retransmissions and
# timeouts since the namespaces were made (each has its own counters).
link_stats() {
  local i ns dropped=0 retr=0 tmo=0 v
  # tc -s prints "Sent B bytes P pkt (dropped D, overlimits O requeues Q)"
  qdrops() { ip netns exec "$1" tc -s qdisc show dev "$2" 2>/dev/null | sed -n 's/.*(dropped \([0-9]*\),.*/\1/p' | head -1; }
  # /proc/net/snmp and /proc/net/netstat: a header line, then a value line, per protocol
  counter() { ip netns exec "$1" awk -v p="$2:" -v k="$3" '$1 == p { if (!h) { for (j = 2; j <= NF; j++) c[$j] = j; h = 1 } else { print (k in c) ? $c[k] : 0; exit } }' "$4" 2>/dev/null; }
  for i in $(seq 0 $((NODES - 1))); do
    ns=${ID}-n${i}
    if [ "$RATE" != none ]; then
      v=$(qdrops "$ns" eth0); dropped=$(( dropped + ${v:-0} ))
      v=$(qdrops "$SW" "${ID}b${i}"); dropped=$(( dropped + ${v:-0} ))
    fi
    v=$(counter "$ns" Tcp RetransSegs /proc/net/snmp); retr=$(( retr + ${v:-0} ))
    v=$(counter "$ns" TcpExt TCPTimeouts /proc/net/netstat); tmo=$(( tmo + ${v:-0} ))
  done
  echo "emu-cluster: links: dropped=$dropped retransmitted=$retr timeouts=$tmo"
}

echo "emu-cluster: ${NODES} node(s) × ${RPN} rank(s), links ${RATE}$([ "$RATE" != none ] && echo " (tbf burst ${BURST}, latency ${LAT})"), subnet ${SUB}.0/24, pinning $([ "$pin" = 1 ] && echo on || echo off), id ${ID}" >&2

xenv=(-x PATH)
[ -n "${LD_LIBRARY_PATH:-}" ] && xenv+=(-x LD_LIBRARY_PATH)
head=${ID}-n0
headpin=$(head -n 1 "$pins")
set +e
# shellcheck disable=SC2086
ip netns exec "$head" unshare --uts $headpin sh -c 'hostname "$0"; exec "$@"' "$head" \
  mpirun --mca plm rsh --mca plm_rsh_agent "$agent" --mca plm_rsh_no_tree_spawn 1 \
    --hostfile "$hostfile" -np "$NP" --map-by "ppr:${RPN}:node" --bind-to none \
    --mca btl tcp,vader,self --mca btl_tcp_if_include "${SUB}.0/24" --mca oob_tcp_if_include "${SUB}.0/24" \
    ${EMU_MPIRUN_ARGS:-} "${xenv[@]}" \
    "$@"
rc=$?
stats=$(link_stats)
echo "$stats" >&2
[ -z "${EMU_STATS:-}" ] || echo "${stats#emu-cluster: links: }" >"$EMU_STATS"
set -e
exit $rc

#!/usr/bin/env bash
# The layout matrix: epoch time of full-batch training on NODES emulated
# nodes of C cores each (scripts/emu-cluster.sh, through
# scripts/bench-cluster.sh) for every layout of R ranks × T threads per node
# with R × T = C (C×1, C/2×2, …, 1×C), every link (the same ranks on one
# host in shared memory, and the shaped links), every exchange
# configuration and model. Two-level configurations run only where they
# differ from the flat exchange: several ranks per node on a network link.
#
#   NODES=4 C=8 scripts/bench-layouts.sh                          # the 32-core box
#   NODES=2 C=2 SPEC=nodes=20000,degree=10,classes=8,feat=32 EPOCHS=2 scripts/bench-layouts.sh   # a 2-core check
#
# Environment (defaults in brackets):
#   NODES [4] emulated nodes, C [cores / NODES] cores per node
#   RANKS ["C C/2 … 1"] ranks per node to run (each must divide C; threads = C / R)
#   RATES ["10gbit 2.5gbit"], LINKS_SHM [1]: 0 leaves out the shared-memory runs
#   CONFIGS ["hyb32 hyb2 hyb2tl"] (bench-cluster's names), MODELS ["gcn sage"]
#   SPEC [products], EPOCHS [4]: the epoch time is the median of epochs 2..EPOCHS
#   WORK [out/bench-layouts]: graph, partitions (reused when present), metrics, results
#   PARTS: one partition of this many parts for every layout (a multiple of NODES × every R; each
#     rank loads its share of parts), instead of a METIS partition per rank count: one METIS run
#   BUDGET [0]: seconds; when set, no run starts after BUDGET seconds (the runs go
#     model by model, link by link (the network links first, then shared memory),
#     layout by layout: what ran is written)
#   RESUME [0]: 1 skips every run WORK's runs CSV already holds (same model, config,
#     link and ranks): a matrix cut short by BUDGET or a job's time limit goes on
#     where it stopped
#   BIN, EXTRA, DATA, DATA_FLAGS: as scripts/bench-cluster.sh
# Appends to WORK/layouts-NODESxC-runs.csv (bench-cluster's lines), then
# writes WORK/layouts-NODESxC.csv (one line per run: ranks_per_node, then
# bench-cluster's columns: model, config, link, ranks, nodes, threads,
# epoch_s and its parts, accuracy; runs of earlier invocations of the same
# shape included, a later run of a model, config, link and layout counting
# instead of an earlier one), WORK/layouts-NODESxC.md (tables: layouts ×
# links per model and configuration, the fastest layout of each column in
# bold) and WORK/layouts-NODESxC/layouts-MODEL-LINK.png (supergcn plot
# --layouts), and prints the tables.
set -euo pipefail
cd "$(dirname "$0")/.."
NODES=${NODES:-4}
C=${C:-$(( $(nproc) / NODES ))}
RATES=${RATES-10gbit 2.5gbit}
CONFIGS=${CONFIGS:-hyb32 hyb2 hyb2tl}
MODELS=${MODELS:-gcn sage}
WORK=${WORK:-out/bench-layouts}
BIN=${BIN:-bin/supergcn}
BUDGET=${BUDGET:-0}
RESUME=${RESUME:-0}
die() { echo "bench-layouts: $*" >&2; exit 2; }
[[ "$NODES" =~ ^[1-9][0-9]*$ ]] || die "NODES=$NODES is not a count ≥ 1"
[[ "$C" =~ ^[1-9][0-9]*$ ]] || die "C=$C is not a count ≥ 1 (this host has $(nproc) cores for $NODES nodes)"
[[ "$BUDGET" =~ ^[0-9]+$ ]] || die "BUDGET=$BUDGET is not a number of seconds"
[[ "$RESUME" =~ ^[01]$ ]] || die "RESUME=$RESUME is not 0 or 1"
if [ -z "${RANKS:-}" ]; then
  RANKS=""
  for ((r = C; r >= 1; r /= 2)); do
    [ $(( C % r )) -eq 0 ] && RANKS="$RANKS $r"
  done
  [[ " $RANKS " == *" 1 "* ]] || RANKS="$RANKS 1"
fi
for r in $RANKS; do
  [[ "$r" =~ ^[1-9][0-9]*$ ]] && [ $(( C % r )) -eq 0 ] || die "RANKS: $r does not divide C=$C"
done
[ $(( NODES * C )) -le "$(nproc)" ] ||
  echo "bench-layouts: $NODES nodes × $C cores exceed this host's $(nproc): the emulated nodes share cores, the times are not a cluster's" >&2
mkdir -p "$WORK"
shape=${NODES}x$C
raw=$WORK/layouts-$shape-runs.csv
export EMU_CORES=$C WORK CSV=$raw TABLES=0 EPOCHS=${EPOCHS:-4} SPEC=${SPEC:-products} BIN

links=$RATES
[ "${LINKS_SHM:-1}" = 0 ] || links="$RATES shm"
# ran MODEL CONFIG LINK RANKS: whether the runs CSV holds that run
ran() {
  [ -s "$raw" ] && awk -F, -v m="$1" -v c="$2" -v l="$3" -v n="$4" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $col["model"] == m && $col["config"] == c && $col["link"] == l && $col["ranks"] == n { found = 1 }
    END { exit !found }' "$raw"
}
start=$(date +%s)
skipped=0
resumed=0
for model in $MODELS; do
  for link in $links; do
    flip=0
    for r in $RANKS; do
      cfgs=""
      for c in $CONFIGS; do
        case $c in *tl*) { [ "$r" -gt 1 ] && [ "$link" != shm ]; } || continue ;; esac
        if [ "$RESUME" = 1 ] && ran "$model" "$c" "$link" $(( NODES * r )); then
          resumed=$((resumed + 1))
          continue
        fi
        # every other layout runs the configurations in reverse order: back-to-back runs
        # drift (the second of a pair is often the slower), and no configuration should
        # always come second
        if [ "$flip" = 1 ]; then cfgs="$c $cfgs"; else cfgs="$cfgs $c"; fi
      done
      flip=$((1 - flip))
      [ -n "$cfgs" ] || continue
      if [ "$BUDGET" -gt 0 ] && [ $(( $(date +%s) - start )) -ge "$BUDGET" ]; then
        skipped=$((skipped + 1))
        continue
      fi
      echo "== layout $NODES × $r × $(( C / r )) ($model, $link)" >&2
      if [ "$link" = shm ]; then lr=(RATES= LINKS_SHM=1); else lr=(RATES="$link" LINKS_SHM=0); fi
      env "${lr[@]}" NP=$(( NODES * r )) NODES="$NODES" THREADS=$(( C / r )) MODELS="$model" CONFIGS="${cfgs# }" \
        scripts/bench-cluster.sh >&2
    done
  done
done
[ "$resumed" -eq 0 ] || echo "bench-layouts: RESUME=1: $resumed run(s) already in $raw" >&2
[ "$skipped" -eq 0 ] || echo "bench-layouts: BUDGET=${BUDGET}s spent: $skipped layout(s) not run" >&2
[ -s "$raw" ] || die "no run succeeded (see the logs in $WORK)"

# layouts.csv: bench-cluster's columns (nodes: 1 for shared memory) after
# the layout's ranks per node.
csv=$WORK/layouts-$shape.csv
awk -F, -v OFS=, -v nodes="$NODES" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; print "ranks_per_node," $0; next }
  { print $col["ranks"] / nodes, $0 }' "$raw" >"$csv"

# Tables: per model and config, epoch seconds by layout (rows) and link
# (columns); the fastest layout of each link in bold.
md=$WORK/layouts-$shape.md
awk -F, -v cores="$C" -v nodes="$NODES" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  { m = $col["model"]; c = $col["config"]; l = $col["link"]; lay = $col["ranks_per_node"] " × " $col["threads"]
    k = m SUBSEP c; if (!(k in seenmc)) { seenmc[k] = 1; mc[n++] = k }
    if (!((k, l) in seenl)) { seenl[k, l] = 1; links[k, nl[k]++] = l }
    if (!((k, lay) in seeny)) { seeny[k, lay] = 1; lays[k, ny[k]++] = lay }
    t[k, l, lay] = $col["epoch_s"] + 0 }
  END {
    for (a = 0; a < n; a++) { k = mc[a]
      for (j = 0; j < nl[k]; j++) for (i = 0; i < ny[k]; i++) { l = links[k, j]; y = lays[k, i]
        if (((k, l, y) in t) && (!((k, l) in best) || t[k, l, y] < best[k, l])) best[k, l] = t[k, l, y] } }
    for (a = 0; a < n; a++) { k = mc[a]; split(k, p, SUBSEP)
      printf "\n%s, %s, %d nodes of %d cores: epoch seconds (median of epochs 2..) by ranks × threads per node\n\n| ranks × threads |", p[1], p[2], nodes, cores
      for (j = 0; j < nl[k]; j++) printf " %s |", links[k, j]; printf "\n|---|"
      for (j = 0; j < nl[k]; j++) printf "---|"; printf "\n"
      for (i = 0; i < ny[k]; i++) { y = lays[k, i]; printf "| %s |", y
        for (j = 0; j < nl[k]; j++) { l = links[k, j]
          if ((k, l, y) in t) { v = sprintf("%.2f", t[k, l, y]); if (t[k, l, y] == best[k, l]) v = "**" v "**"; printf " %s |", v }
          else printf " – |" }
        printf "\n" } } }' "$csv" | tee "$md"
"$BIN" plot --layouts "$csv" --out "$WORK/layouts-$shape" >&2

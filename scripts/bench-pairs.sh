#!/usr/bin/env bash
# Two exchange configurations in pairs (int2 against fp32 by default): on
# every layout and link they run back to back on the same graph and
# partition, in both orders, SETS times. Back-to-back runs drift (the second
# of a pair is often the slower one), so one order alone can favour either.
# Each set is two calls of scripts/bench-layouts.sh in fresh WORK
# directories that share the first one's graph and partitions: order A with
# CONFIGS as given, order B reversed (bench-layouts also reverses them every
# other layout, so each order has each configuration first on some layout).
#
#   NODES=4 C=8 PARTS=32 RANKS="8 1" RATES=10gbit SETS=4 scripts/bench-pairs.sh    # the 32-core box
#   NODES=2 C=2 SPEC=nodes=2000,degree=8,classes=4,feat=8 EPOCHS=2 RATES= LINKS_SHM=1 SETS=1 scripts/bench-pairs.sh
#
# Environment (defaults in brackets):
#   SETS [3]; CONFIGS ["hyb32 hyb2"]: the pair (bench-cluster's names); MODELS [gcn]; EPOCHS [8]
#   RATES [10gbit], LINKS_SHM [0]: the links; WORK [out/bench-pairs]: set S order O runs in WORK/sSO
#   NODES, C, RANKS, PARTS, SPEC, BIN, BUDGET: as scripts/bench-layouts.sh (BUDGET: no set starts after it)
# Writes WORK/pairs.csv (set, order, ran_first: the configuration that ran
# first on that layout and link, then bench-layouts' run columns) and prints,
# per set, order, model, link and layout, the second configuration's epoch
# over the first's (int2 / fp32 by default).
set -euo pipefail
cd "$(dirname "$0")/.."
SETS=${SETS:-3}
CONFIGS=${CONFIGS:-hyb32 hyb2}
WORK=${WORK:-out/bench-pairs}
BUDGET=${BUDGET:-0}
die() { echo "bench-pairs: $*" >&2; exit 2; }
[[ "$SETS" =~ ^[1-9][0-9]*$ ]] || die "SETS=$SETS is not a count ≥ 1"
[[ "$BUDGET" =~ ^[0-9]+$ ]] || die "BUDGET=$BUDGET is not a number of seconds"
read -r -a pair <<<"$CONFIGS"
[ "${#pair[@]}" = 2 ] || die "CONFIGS=\"$CONFIGS\" is not two configurations"
export MODELS=${MODELS:-gcn} EPOCHS=${EPOCHS:-8} RATES=${RATES-10gbit} LINKS_SHM=${LINKS_SHM:-0} WORK
mkdir -p "$WORK"
out=$WORK/pairs.csv
rm -f "$out"
start=$(date +%s)
first=""
for ((s = 1; s <= SETS; s++)); do
  if [ "$BUDGET" -gt 0 ] && [ $(( $(date +%s) - start )) -ge "$BUDGET" ]; then
    echo "bench-pairs: BUDGET=${BUDGET}s spent: sets $s..$SETS not run" >&2
    break
  fi
  orders="A B"
  [ $((s % 2)) = 1 ] || orders="B A" # every other set starts with the reversed order
  for o in $orders; do
    w=$WORK/s$s$o
    rm -rf "$w"
    mkdir -p "$w"
    if [ -n "$first" ]; then
      for f in "$first"/graph.sgb "$first"/graph.spec "$first"/p[0-9]*; do ln -s "$(realpath "$f")" "$w/"; done
    fi
    cfg="${pair[0]} ${pair[1]}"
    [ "$o" = A ] || cfg="${pair[1]} ${pair[0]}"
    echo "== set $s, order $o (CONFIGS=\"$cfg\")" >&2
    WORK=$w CONFIGS="$cfg" BUDGET=0 RESUME=0 scripts/bench-layouts.sh >"$w/log" 2>&1 ||
      { tail -5 "$w/log" >&2; die "set $s order $o failed (log: $w/log)"; }
    [ -n "$first" ] || first=$w
    # ran_first: the configuration of the first run of each layout and link
    awk -F, -v OFS=, -v s="$s" -v o="$o" -v hdr="$([ -f "$out" ] && echo 0 || echo 1)" '
      NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; if (hdr) print "set,order,ran_first," $0; next }
      { rows[NR] = $0; k = $col["model"] SUBSEP $col["link"] SUBSEP $col["ranks"]; if (!(k in f)) f[k] = $col["config"]; key[NR] = k }
      END { for (i = 2; i <= NR; i++) print s, o, f[key[i]], rows[i] }' "$w"/layouts-*-runs.csv >>"$out"
  done
done
[ -s "$out" ] || die "no set ran"
awk -F, -v a="${pair[0]}" -v b="${pair[1]}" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  { k = $col["set"] " " $col["order"] " | " $col["model"] " | " $col["link"] " | " $col["ranks"] " × " $col["threads"]
    if (!(k in seen)) { seen[k] = 1; keys[n++] = k; first[k] = $col["ran_first"] }
    t[k, $col["config"]] = $col["epoch_s"] }
  END { printf "| set order | model | link | ranks × threads each | ran first | %s / %s epoch |\n|---|---|---|---|---|---|\n", b, a
    for (i = 0; i < n; i++) { k = keys[i]
      r = ((k, a) in t && (k, b) in t && t[k, a] > 0) ? sprintf("%.3f", t[k, b] / t[k, a]) : "–"
      printf "| %s | %s | %s |\n", k, first[k], r } }' "$out"

#!/usr/bin/env bash
# The network matrix: epoch time of full-batch training with NP ranks in
# shared memory and on an emulated cluster (scripts/emu-cluster.sh: NODES
# nodes of NP/NODES ranks, links shaped to each RATE), for post/hybrid fp32
# and hybrid int2/int4/int8 exchange, GCN 2×128 and SAGE 3×256 LayerNorm.
#
#   scripts/bench-cluster.sh                   # 16 ranks as 4×4, 10gbit and 2.5gbit, products scale
#   NP=64 NODES=8 scripts/bench-cluster.sh     # the 64-core box
#   SPEC=nodes=200000,degree=20,feat=100,classes=47 NP=4 NODES=2 RATES=100mbit EPOCHS=3 scripts/bench-cluster.sh
#   NP=16 NODES=4 RATES="10gbit 2.5gbit" CONFIGS="hyb2 hyb2tl hyb2tlp" MODELS=gcn scripts/bench-cluster.sh   # flat vs two-level
#
# Environment (defaults in brackets):
#   NP [16] ranks, NODES [4] emulated nodes, RATES ["10gbit 2.5gbit"] (plus shared memory, "shm", always)
#   SPEC [products] graph (supergcn gen): products is the ogbn-products-like preset (nested communities,
#     docs/GRAPHS.md); SPEC=sbm-products is the stochastic block model of the measurements before it
#   EPOCHS [4]: the epoch time is the median of epochs 2..EPOCHS
#   MODELS ["gcn sage"; also gat, gatv2 (8 heads × 8), sage-max (2×64 LayerNorm)], CONFIGS ["post32 hyb32 hyb2 hyb4 hyb8"], THREADS [cores/NP]
#     a config runs the flat exchange (--exchange flat); with the suffix "tl" (hyb2tl, hyb32tl, ...)
#     the two-level exchange (--exchange two-level: once per node pair, then inside the node), with
#     "tlp" (hyb2tlp) two-level-paired (each rank talks to one rank of every other node); digits after
#     tl/tlp are the bits of the rows moved inside nodes (hyb2tl8: int2 between nodes, int8 inside; default 32)
#   LINKS_SHM [1]: 0 leaves out the shared-memory runs
#   WORK [out/bench-cluster] holds the graph (and graph.spec, its SPEC), the partition, metrics and results
#     (reused when present; a WORK whose graph has another SPEC is refused)
#   DATA: train on this input (partitioned in memory by every run) instead of SPEC's partition,
#         with DATA_FLAGS, e.g. DATA=dblp.sgb DATA_FLAGS="--synthetic-features 128 --partition-method random"
#   BIN [bin/supergcn]; EXTRA: more train flags for every run
#   PARTS [NP]: partition the graph into this many parts (a multiple of NP: each rank loads PARTS/NP of them),
#     e.g. one partition for runs at several rank counts
#   CSV [WORK/results.csv] the results file lines are appended to; TABLES [1]: 0 skips the tables and plots
# Writes WORK/results.csv (one line per run), WORK/results.md (tables) and
# WORK/matrix-MODEL-npNP.png (supergcn plot --bench), and prints the tables.
# Each run's metrics are WORK/MODEL-CONFIG-LINK-npNP.jsonl (its output in
# .jsonl.log); an emulated run's link counters (scripts/emu-cluster.sh's
# EMU_STATS: shaper drops, TCP retransmissions and timeouts) in .jsonl.links.
set -euo pipefail
cd "$(dirname "$0")/.."
NP=${NP:-16} NODES=${NODES:-4}
RATES=${RATES-10gbit 2.5gbit}
SPEC=${SPEC:-products} EPOCHS=${EPOCHS:-4}
MODELS=${MODELS:-gcn sage}
CONFIGS=${CONFIGS:-post32 hyb32 hyb2 hyb4 hyb8}
WORK=${WORK:-out/bench-cluster}
BIN=${BIN:-bin/supergcn}
EXTRA=${EXTRA:-}
cores=$(nproc)
THREADS=${THREADS:-$(( cores / NP > 0 ? cores / NP : 1 ))}
PARTS=${PARTS:-$NP}
[ $(( PARTS % NP )) -eq 0 ] || { echo "bench-cluster: PARTS=$PARTS is not a multiple of NP=$NP" >&2; exit 2; }
[ $(( NP % NODES )) -eq 0 ] || { echo "bench-cluster: NP=$NP is not a multiple of NODES=$NODES" >&2; exit 2; }
[ "$EPOCHS" -ge 2 ] || { echo "bench-cluster: EPOCHS must be ≥ 2 (epoch 1 is warm-up)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p "$WORK"

graph=$WORK/graph.sgb
pdir=$WORK/p$PARTS
input=(--partitions "$pdir")
if [ -n "${DATA:-}" ]; then
  # shellcheck disable=SC2206
  input=(--data "$DATA" ${DATA_FLAGS:-})
elif [ ! -f "$graph" ]; then
  echo "== gen $SPEC" >&2
  "$BIN" gen --spec "$SPEC" --out "$graph" >&2
  echo "$SPEC" >"$WORK/graph.spec"
elif [ "$(cat "$WORK/graph.spec" 2>/dev/null)" != "$SPEC" ]; then
  echo "bench-cluster: $graph was generated from SPEC=$(cat "$WORK/graph.spec" 2>/dev/null || echo 'unknown (no graph.spec; a WORK made before graph.spec existed holds sbm-products)'), not $SPEC: set another WORK" >&2
  exit 2
fi
if [ -z "${DATA:-}" ] && [ ! -f "$pdir/meta.json" ]; then
  echo "== partition $PARTS parts (METIS)" >&2
  "$BIN" partition --data "$graph" --parts "$PARTS" --method metis --out "$pdir" >&2
fi

model_flags() {
  case $1 in
    gcn) echo "--model gcn --layers 2 --hidden 128" ;;
    sage) echo "--model sage --layers 3 --hidden 256 --norm layer" ;;
    gat) echo "--model gat --hidden 8 --heads 8" ;;
    gatv2) echo "--model gatv2 --hidden 8 --heads 8" ;;
    sage-max) echo "--model sage-max --layers 2 --hidden 64 --norm layer" ;;
    *) echo "bench-cluster: unknown model $1" >&2; exit 2 ;;
  esac
}
config_flags() {
  local exch=flat intra=32 c=$1
  # two-level suffixes: tl / tlp, optionally followed by the intra-node bits (hyb2tl8)
  case $c in
    *tlp | *tlp[0-9]*) exch=two-level-paired intra=${c##*tlp} c=${c%tlp*} ;;
    *tl | *tl[0-9]*) exch=two-level intra=${c##*tl} c=${c%tl*} ;;
  esac
  intra=${intra:-32}
  case $intra in 32 | 8 | 4 | 2) ;; *) echo "bench-cluster: bad intra-node bits in config $1" >&2; exit 2 ;; esac
  case $c in
    post32) echo "--aggr-mode post --bits 32 --exchange $exch --intra-bits $intra" ;;
    hyb32) echo "--aggr-mode hybrid --bits 32 --exchange $exch --intra-bits $intra" ;;
    hyb2 | hyb4 | hyb8) echo "--aggr-mode hybrid --bits ${c#hyb} --exchange $exch --intra-bits $intra" ;;
    *) echo "bench-cluster: unknown config $1" >&2; exit 2 ;;
  esac
}
for cfg in $CONFIGS; do config_flags "$cfg" >/dev/null; done

# median KEY FILE: median over epochs 2.. of a numeric key of the epoch records.
median() {
  awk -v k="\"$1\":" 'index($0, "\"epoch\":") == 2 {
      i = index($0, k); if (!i) next
      v = substr($0, i + length(k)); sub(/[,}].*/, "", v)
      e = $0; sub(/^\{"epoch":/, "", e); sub(/,.*/, "", e)
      if (e + 0 >= 2) a[n++] = v + 0 }
    END { if (!n) { print "nan"; exit }
      for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      if (n % 2) print a[int(n / 2)]; else print (a[n / 2 - 1] + a[n / 2]) / 2 }' "$2"
}
final() { awk -v k="\"$1\":" '/"final":true/ { i = index($0, k); v = substr($0, i + length(k)); sub(/[,}].*/, "", v); print v }' "$2"; }

csv=${CSV:-$WORK/results.csv}
keys="epoch_s aggr_s comm_s quant_s dense_s sync_s eval_s other_s reduce_s comm_bytes eval_bytes intra_bytes"
header="model,config,link,ranks,nodes,threads,$(echo $keys | tr ' ' ','),last_test_acc"
[ -f "$csv" ] || echo "$header" >"$csv"
[ "$(head -1 "$csv")" = "$header" ] || { echo "bench-cluster: $csv has other columns (an older version's): move it away" >&2; exit 2; }
for model in $MODELS; do
  links="$RATES"
  [ "${LINKS_SHM:-1}" = 0 ] || links="shm $RATES"
  for link in $links; do
    for cfg in $CONFIGS; do
      m=$WORK/$model-$cfg-$link-np$NP.jsonl
      launcher=(mpirun --bind-to none -np "$NP")
      nodes=1
      rm -f "$m.links"
      if [ "$link" != shm ]; then
        launcher=(env EMU_STATS="$m.links" scripts/emu-cluster.sh "$NODES" $(( NP / NODES )) "$link" --)
        nodes=$NODES
      fi
      echo "== $model $cfg $link ($NP ranks, $nodes node(s))" >&2
      # shellcheck disable=SC2046
      if ! "${launcher[@]}" "$BIN" train "${input[@]}" $(model_flags "$model") $(config_flags "$cfg") \
          --epochs "$EPOCHS" --threads "$THREADS" --quiet --metrics "$m" $EXTRA >"$m.log" 2>&1; then
        echo "bench-cluster: $model $cfg $link failed:" >&2; tail -5 "$m.log" >&2
        continue
      fi
      [ ! -s "$m.links" ] || echo "   links: $(cat "$m.links")" >&2
      row="$model,$cfg,$link,$NP,$nodes,$THREADS"
      for k in $keys; do row="$row,$(median "$k" "$m")"; done
      echo "$row,$(final last_test_acc "$m")" >>"$csv"
    done
  done
done

[ "${TABLES:-1}" = 1 ] || exit 0
# Tables: epoch seconds (median of epochs 2..) per link × config, per model.
md=$WORK/results.md
awk -F, -v np="$NP" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  $col["ranks"] == np {
    key = $1 SUBSEP $3 SUBSEP $2; v[key] = $col["epoch_s"]; q[key] = $col["quant_s"]; c[key] = $col["comm_s"]
    if (!($1 in seenm)) { seenm[$1] = 1; models[nm++] = $1 }
    if (!(($1, $3) in seenl)) { seenl[$1, $3] = 1; links[$1, nl[$1]++] = $3 }
    if (!(($1, $2) in seenc)) { seenc[$1, $2] = 1; cfgs[$1, nc[$1]++] = $2 } }
  END {
    for (a = 0; a < nm; a++) { m = models[a]
      printf "\n%s, %d ranks: epoch seconds, median of epochs 2.. (comm_s / quant_s in brackets)\n\n| link |", m, np
      for (j = 0; j < nc[m]; j++) printf " %s |", cfgs[m, j]; printf "\n|---|"
      for (j = 0; j < nc[m]; j++) printf "---|"; printf "\n"
      for (i = 0; i < nl[m]; i++) { l = links[m, i]; printf "| %s |", l
        for (j = 0; j < nc[m]; j++) { k = m SUBSEP l SUBSEP cfgs[m, j]
          if (k in v) printf " %.2f (%.2f / %.2f) |", v[k], c[k], q[k]; else printf " – |" }
        printf "\n" } } }' "$csv" | tee "$md"
"$BIN" plot --bench "$csv" --out "$WORK" >&2

#!/usr/bin/env bash
# The projection of docs/SCALING.md: predicted epoch time and parallel
# efficiency of GCN training at 64 … 8,192 ranks on a Fugaku-like (A64FX,
# Tofu-D) machine, a Xeon-cluster-like one (2× Xeon Gold 6148, InfiniBand
# EDR) and a cluster of the measured 64-core Xeon (InfiniBand HDR), for the
# products-scale graph and a papers100M-shaped graph, by the performance
# model (supergcn predict) on real METIS partitions.
#
#   scripts/projection.sh                              # everything (hours of METIS on a small box)
#   GRAPHS=products PARTS="64 256" scripts/projection.sh   # a subset; results append, done points are skipped
#   PLOT_ONLY=1 scripts/projection.sh                  # tables and plots from the .jsonl files in OUT
#
# Environment (defaults in brackets):
#   GRAPHS ["products papers"]: the ogbn-products-like and the ogbn-papers100M-like presets of supergcn gen
#     (docs/GRAPHS.md); PRODUCTS_SPEC [products,feat=0] and PAPERS_SPEC [papers,nodes=…,feat=0] replace their specs,
#     e.g. PRODUCTS_SPEC=sbm-products,feat=0 for the stochastic block model of earlier projections (WORK keeps each
#     graph's spec in NAME.spec and refuses a graph of another spec: use another WORK)
#   PARTS [products: "64 256 1024 4096 8192"; papers: "64 256 768 1024 4096 8192"]
#   PAPERS_SCALE [64]: the papers-shaped graph has 111,059,956/PAPERS_SCALE nodes and papers100M's mean
#     degree; per-rank volumes are multiplied by PAPERS_SCALE (predict --scale; docs/SCALING.md says why)
#   WORK [out/projection] graphs and (transient) partitions; OUT [WORK] the .jsonl, .md and .png results
#   METHOD [metis] partitioner (partition --method); LAUNCH: prefix for it, e.g. LAUNCH="mpirun -np 16" METHOD=parmetis
#   PARTITION_FLAGS: more partition flags, e.g. "--weights degree" (one balance constraint). Without it, a failed
#     partition is retried once with --weights degree: METIS 5.1 returned METIS_ERROR for the products graph at
#     8,192 parts with the default two constraints (docs/SCALING.md)
#   VOLUMES [WORK/volumes] each partition's planned volumes (predict --save-volumes); a point whose volumes file
#     exists is predicted from it, without the partition (no METIS); RECOMPUTE=1 predicts every such point again
#     (the model changed) and rewrites the .jsonl
#   MACHINES ["fugaku xeon xeon64"]: fugaku (derived A64FX profile, Tofu-D, 4 ranks × 12 threads a node), xeon
#     (derived Xeon Gold 6148 profile, InfiniBand EDR, 2 × 20), xeon64 (the 64-core Xeon's measured profile,
#     docs/data/profile-xeon64.json, InfiniBand HDR, 8 × 8)
#   BIN [bin/supergcn]; KEEP=1 keeps each partition after predicting on it
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/supergcn}
GRAPHS=${GRAPHS:-products papers}
WORK=${WORK:-out/projection}
OUT=${OUT:-$WORK}
PAPERS_SCALE=${PAPERS_SCALE:-64}
PROFILES=perfmodel/profiles
MACHINES=${MACHINES:-fugaku xeon xeon64}
METHOD=${METHOD:-metis}
LAUNCH=${LAUNCH:-}
PARTITION_FLAGS=${PARTITION_FLAGS:-}
VOLUMES=${VOLUMES:-$WORK/volumes}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p "$WORK" "$OUT" "$VOLUMES"
papers_nodes=111059956
# ogbn-papers100M: 1,615,685,872 directed citations, used symmetrised: 29.1 entries a node;
# 1.2M / 125k / 214k train / valid / test nodes; 172 classes; 128 features.
papers_spec() {
  echo "${PAPERS_SPEC:-papers,name=papers-shaped,nodes=$(( (papers_nodes + PAPERS_SCALE / 2) / PAPERS_SCALE )),feat=0}"
}

# machine NAME: the predict flags of a machine (profile, network, ranks per node, threads).
machine() {
  case $1 in
    fugaku) echo "--profile $PROFILES/a64fx.json --network tofu-d --ranks-per-node 4 --threads 12" ;;
    xeon) echo "--profile $PROFILES/xeon-gold-6148.json --network ib-edr --ranks-per-node 2 --threads 20" ;;
    xeon64) echo "--profile docs/data/profile-xeon64.json --network ib-hdr --ranks-per-node 8 --threads 8" ;;
    *) echo "projection: unknown machine $1 (fugaku, xeon, xeon64)" >&2; return 2 ;;
  esac
}
for m in $MACHINES; do machine "$m" >/dev/null || exit 2; done
model_flags() {
  case $1 in
    products) echo "--model gcn --layers 2 --hidden 128 --in-width 100 --classes 47" ;;
    papers) echo "--model gcn --layers 3 --hidden 128 --in-width 128 --classes 172" ;;
  esac
}

if [ -z "${PLOT_ONLY:-}" ]; then
  for g in $GRAPHS; do
    case $g in
      products) spec=${PRODUCTS_SPEC:-products,feat=0} scale=1 parts=${PARTS:-64 256 1024 4096 8192} ;;
      papers) spec=$(papers_spec) scale=$PAPERS_SCALE parts=${PARTS:-64 256 768 1024 4096 8192} ;;
      *) echo "projection: unknown graph $g (products, papers)" >&2; exit 2 ;;
    esac
    graph=$WORK/$g.sgb
    if [ ! -f "$graph" ]; then
      echo "== gen $g: $spec" >&2
      "$BIN" gen --spec "$spec" --out "$graph" >&2
      echo "$spec" >"$WORK/$g.spec"
    elif [ "$(cat "$WORK/$g.spec" 2>/dev/null)" != "$spec" ]; then
      echo "projection: $graph was generated from $(cat "$WORK/$g.spec" 2>/dev/null || echo 'an unknown spec (no .spec file)'), not $spec: set another WORK" >&2
      exit 2
    fi
    jl=$OUT/projection-$g.jsonl
    if [ -n "${RECOMPUTE:-}" ] && [ -f "$jl" ]; then
      # keep the points whose volumes are gone; the others are predicted again below
      tmp=$jl.keep.$$
      grep -v -E "\"ranks\":($(ls "$VOLUMES" 2>/dev/null | sed -n "s/^$g-p\([0-9]*\)\.json\$/\1/p" | paste -sd'|' -)),\"" "$jl" >"$tmp" || true
      mv "$tmp" "$jl"
    fi
    for p in $parts; do
      if [ -f "$jl" ] && grep -q "\"ranks\":$p," "$jl"; then
        echo "== $g $p parts: already in $jl" >&2
        continue
      fi
      pdir=$WORK/$g-p$p
      vol=$VOLUMES/$g-p$p.json
      if [ ! -f "$vol" ] && [ ! -f "$pdir/meta.json" ]; then
        echo "== partition $g into $p parts ($METHOD $PARTITION_FLAGS)" >&2
        t0=$(date +%s)
        # shellcheck disable=SC2086
        if ! $LAUNCH "$BIN" partition --data "$graph" --parts "$p" --method "$METHOD" $PARTITION_FLAGS --out "$pdir" >&2; then
          # METIS 5.1 can fail with two balance constraints on small parts (products at 8,192); one may succeed
          [ -z "$PARTITION_FLAGS" ] || exit 1
          echo "== $g $p parts: retrying with one balance constraint (--weights degree)" >&2
          # shellcheck disable=SC2086
          $LAUNCH "$BIN" partition --data "$graph" --parts "$p" --method "$METHOD" --weights degree --out "$pdir" >&2
        fi
        echo "   $(( $(date +%s) - t0 ))s" >&2
      fi
      if [ ! -f "$vol" ]; then
        src=(--partitions "$pdir" --save-volumes "$vol")
      else
        src=(--volumes "$vol")
      fi
      tmp=$jl.tmp.$$
      : >"$tmp"
      for m in $MACHINES; do
        # shellcheck disable=SC2046
        "$BIN" predict "${src[@]}" $(machine $m) $(model_flags "$g") --aggr-mode post,hybrid --bits 32,2 --exchange flat \
          --eval-every 0 --scale "$scale" --label "$g" --json >>"$tmp"
        src=(--volumes "$vol")
      done
      cat "$tmp" >>"$jl" && rm -f "$tmp"
      [ -n "${KEEP:-}" ] || rm -rf "$pdir"
    done
  done
fi

# Tables and plots from whatever .jsonl files OUT holds.
md=$OUT/projection.md
: >"$md"
for jl in "$OUT"/projection-*.jsonl; do
  [ -f "$jl" ] || continue
  g=$(basename "$jl" .jsonl); g=${g#projection-}
  {
    echo
    echo "$g: predicted seconds per training epoch (parallel efficiency)"
    echo
    awk 'function key(k,  i, v) { i = index($0, "\"" k "\":"); if (!i) return ""; v = substr($0, i + length(k) + 3); sub(/[,}].*/, "", v); gsub(/"/, "", v); return v }
      { c = key("profile") " " key("network") " " key("aggr_mode") " " (key("bits") == 32 ? "fp32" : "int" key("bits"))
        r = key("ranks") + 0; t[c, r] = sprintf("%.3f (%.0f%%)", key("epoch_s"), 100 * key("efficiency"))
        if (!(c in sc)) { sc[c] = 1; cs[nc++] = c } if (!(r in sr)) { sr[r] = 1; rs[nr++] = r } }
      END { for (i = 0; i < nr; i++) for (j = i + 1; j < nr; j++) if (rs[j] < rs[i]) { x = rs[i]; rs[i] = rs[j]; rs[j] = x }
        printf "| machine, exchange |"; for (i = 0; i < nr; i++) printf " %d |", rs[i]; printf "\n|---|"
        for (i = 0; i < nr; i++) printf "---|"; printf "\n"
        for (j = 0; j < nc; j++) { printf "| %s |", cs[j]; for (i = 0; i < nr; i++) printf " %s |", ((cs[j], rs[i]) in t) ? t[cs[j], rs[i]] : "–"; printf "\n" } }' "$jl"
  } >>"$md"
  refs=()
  if [ "$g" = papers ]; then
    # SuperGCN (Fugaku, papers100M, 192 A64FX = 768 CMG ranks): with and without its communication methods.
    refs=(--ref "SuperGCN 192 A64FX:768:0.823" --ref "SuperGCN 192 A64FX, no comm. methods:768:2.163")
  fi
  "$BIN" predict --plot "$jl" --out "$OUT" "${refs[@]}" >&2
done
cat "$md"

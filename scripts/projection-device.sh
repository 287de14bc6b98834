#!/usr/bin/env bash
# Measures a 16-core box for the performance model (each STEP < 10 min):
#
#   STEP=profile  the box's machine profile: supergcn bench profile (kernel rates with the node full, with one
#                 copy (--loads 1), and the exchange pattern), then the intra-node link measured by
#                 `mpirun -np $(nproc) supergcn bench alltoall --profile` → $OUT/profile-box.json (and $WORK)
#   STEP=recheck  predict only: scripts/validate-model.sh with that profile against every saved node CSV and the saved
#                 volumes of their partition (docs/data/volumes-products-p16.json), no graph or METIS → $OUT/recheck/
#   STEP=validate regenerate the graph and the 16-part METIS partition scripts/bench-cluster.sh trained on
#                 (same commands, same seed: same partition), then scripts/validate-model.sh against
#                 docs/data/*.csv with that profile → $OUT/validate/{validate.md,validate.csv}
#   STEP=projection  scripts/projection.sh for GRAPHS/PARTS (partitions made here; the .jsonl accumulate in
#                 $WORK/projection across calls; all of them, the tables and the plots are copied to $OUT)
#   STEP=all      profile, then recheck, then validate
#
#   BIN=bin/supergcn OUT=/tmp/o STEP=profile scripts/projection-device.sh
#   BIN=bin/supergcn OUT=/tmp/o PROFILE=/tmp/o/profile-box.json STEP=validate scripts/projection-device.sh
#   BIN=bin/supergcn OUT=/tmp/o STEP=projection GRAPHS=products PARTS="64 256" scripts/projection-device.sh
#
# Environment: BIN [bin/supergcn], OUT [out/model-device], WORK [out/bench-cluster] (graph.sgb, p16),
# PROFILE [$WORK/profile-box.json] (validate), PROFILE_FLAGS (more bench profile flags, e.g. for a tiny test),
# SPEC [products] (validate: the graph; a smaller spec only to test this script; the CSVs in docs/data were
# measured on SPEC=sbm-products, so validating against them needs it and a WORK of its own), NP [16] parts,
# INTRA_ROWS [43000] and INTRA_WIDTH [100]: the rows a peer of the intra-node measurement (a 16-part products rank
# sends about 43 k hybrid rows of 100 values to each peer), INTRA=0: keep the assumed intra-node link.
# OPENBLAS_CORETYPE=Prescott makes the profile's GEMMs those of the binaries that measured docs/data's CSVs.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/supergcn}
OUT=${OUT:-out/model-device}
WORK=${WORK:-out/bench-cluster}
STEP=${STEP:?projection-device: set STEP=profile, recheck, validate, all or projection}
NP=${NP:-16}
SPEC=${SPEC:-products}
mkdir -p "$OUT" "$WORK"
export BIN
profile() {
  # shellcheck disable=SC2086
  "$BIN" bench profile --out "$WORK/profile-box.json" --name "box-$(nproc)c" ${PROFILE_FLAGS:-}
  if [ "${INTRA:-1}" != 0 ]; then
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
      mpirun --bind-to none -np "$(nproc)" "$BIN" bench alltoall --rows "${INTRA_ROWS:-43000}" --width "${INTRA_WIDTH:-100}" \
      --profile "$WORK/profile-box.json"
  fi
  cp "$WORK/profile-box.json" "$OUT/"
}
recheck() {
  PROFILE=${PROFILE:-$WORK/profile-box.json} VOLUMES=docs/data/volumes-products-p16.json OUT=$OUT/recheck \
    scripts/validate-model.sh docs/data/bench-cluster-np16-prescott-gcn.csv docs/data/bench-cluster-np16-prescott-gcn-intn.csv \
    docs/data/bench-cluster-np16-prescott-sage.csv docs/data/bench-cluster-np16-prescott-4x4-twolevel.csv docs/data/bench-cluster-np16-prescott-2x8-twolevel.csv
}
validate() {
  PROFILE=${PROFILE:-$WORK/profile-box.json}
  graph=$WORK/graph.sgb pdir=$WORK/p$NP
  if [ ! -f "$graph" ]; then
    "$BIN" gen --spec "$SPEC" --out "$graph" >&2
    echo "$SPEC" >"$WORK/graph.spec"
  elif [ "$(cat "$WORK/graph.spec" 2>/dev/null)" != "$SPEC" ]; then
    echo "projection-device: $graph was generated from SPEC=$(cat "$WORK/graph.spec" 2>/dev/null || echo 'unknown (no graph.spec; a WORK made before graph.spec existed holds sbm-products)'), not $SPEC: set another WORK" >&2
    exit 2
  fi
  [ -f "$pdir/meta.json" ] || "$BIN" partition --data "$graph" --parts "$NP" --method metis --out "$pdir" >&2
  PROFILE=$PROFILE PDIR=$pdir OUT=$OUT/validate scripts/validate-model.sh
}
case $STEP in
  profile) profile ;;
  validate) validate ;;
  recheck) recheck ;;
  all) profile && recheck && validate ;;
  projection)
    pw=$WORK/projection
    WORK=$pw OUT=$pw scripts/projection.sh
    cp "$pw"/projection-* "$pw"/projection.md "$OUT/"
    ;;
  *) echo "projection-device: STEP=$STEP: want profile, recheck, validate, all or projection" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# The device half of issue 17 (run on the lent box; each STEP < 10 min):
#
#   STEP=profile  the box's machine profile: supergcn bench profile → $OUT/profile-box.json (and $WORK, for the next step)
#   STEP=validate regenerate the graph and the 16-part METIS partition scripts/bench-cluster.sh trained on
#                 (same commands, same seed: same partition), then scripts/validate-model.sh against
#                 docs/data/*.csv with that profile → $OUT/validate/{validate.md,validate.csv}
#   STEP=projection  scripts/projection.sh for GRAPHS/PARTS (partitions made here; the .jsonl accumulate in
#                 $WORK/projection across calls; all of them, the tables and the plots are copied to $OUT)
#   STEP=all      profile, then validate
#
#   BIN=bin/supergcn OUT=/tmp/o STEP=profile scripts/projection-device.sh
#   BIN=bin/supergcn OUT=/tmp/o PROFILE=/tmp/o/profile-box.json STEP=validate scripts/projection-device.sh
#   BIN=bin/supergcn OUT=/tmp/o STEP=projection GRAPHS=products PARTS="64 256" scripts/projection-device.sh
#
# Environment: BIN [bin/supergcn], OUT [out/model-device], WORK [out/bench-cluster] (graph.sgb, p16),
# PROFILE [$WORK/profile-box.json] (validate), PROFILE_FLAGS (more bench profile flags, e.g. for a tiny test),
# SPEC [products] (validate: the graph; a smaller spec only to test this script), NP [16] parts.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/supergcn}
OUT=${OUT:-out/model-device}
WORK=${WORK:-out/bench-cluster}
STEP=${STEP:?projection-device: set STEP=profile, validate or projection}
NP=${NP:-16}
SPEC=${SPEC:-products}
mkdir -p "$OUT" "$WORK"
export BIN
profile() {
  # shellcheck disable=SC2086
  "$BIN" bench profile --out "$WORK/profile-box.json" --name "lent-box-$(nproc)c" ${PROFILE_FLAGS:-}
  cp "$WORK/profile-box.json" "$OUT/"
}
validate() {
  PROFILE=${PROFILE:-$WORK/profile-box.json}
  graph=$WORK/graph.sgb pdir=$WORK/p$NP
  [ -f "$graph" ] || "$BIN" gen --spec "$SPEC" --out "$graph" >&2
  [ -f "$pdir/meta.json" ] || "$BIN" partition --data "$graph" --parts "$NP" --method metis --out "$pdir" >&2
  PROFILE=$PROFILE PDIR=$pdir OUT=$OUT/validate scripts/validate-model.sh
}
case $STEP in
  profile) profile ;;
  validate) validate ;;
  all) profile && validate ;;
  projection)
    pw=$WORK/projection
    WORK=$pw OUT=$pw scripts/projection.sh
    cp "$pw"/projection-* "$pw"/projection.md "$OUT/"
    ;;
  *) echo "projection-device: STEP=$STEP: want profile, validate, all or projection" >&2; exit 2 ;;
esac

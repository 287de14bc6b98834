#!/usr/bin/env bash
# Communication-volume report: Cora (OGB directory) and dblp-2010 (edge list,
# 16 synthetic features) partitioned with METIS into 8, 16 and 64 parts, then
# `supergcn stats` on each partition:
#   1. rows each layer moves (all ordered rank pairs, one direction) under
#      pre, post and hybrid aggregation, and min(pre, post)/hybrid;
#   2. bytes of the hybrid rows per layer at fp32 and at int2 (--bits 2, data
#      + per-row parameters: --quant-params fp32, bf16 or block) for the
#      row widths WIDTHS, with the measured ratio and 16F/(F+32) (16F/(F+16)).
#
#   scripts/volume-report.sh                       # build bin/supergcn, run, print the tables
#   PARTS="8 64" WIDTHS="16 128" scripts/volume-report.sh
#
# Env: SUPERGCN_DATASETS (default ../shared/datasets), PARTS ("8 16 64"),
# WIDTHS ("16 128 256"; 16 is the model's hidden width), ROWS_WIDTH (128: the
# width of the rows table's stats call; rows do not depend on it), BITS (2),
# SUPERGCN_BIN (binary; built into bin/supergcn when unset), KEEP=1 keeps the
# partition directories and JSON files.
set -euo pipefail
cd "$(dirname "$0")/.."

DATASETS=${SUPERGCN_DATASETS:-../shared/datasets}
PARTS=${PARTS:-8 16 64}
WIDTHS=${WIDTHS:-16 128 256}
ROWS_WIDTH=${ROWS_WIDTH:-128}
BITS=${BITS:-2}

if [ -z "${SUPERGCN_BIN:-}" ]; then
  TAGS=$(pkg-config --exists openblas 2>/dev/null && echo openblas || true)
  go build -tags "$TAGS" -o bin/supergcn ./cmd/supergcn
  SUPERGCN_BIN=bin/supergcn
fi

# name|data path|extra partition flags
DATA=(
  "cora|$DATASETS/cora|"
  "dblp-2010|$DATASETS/dblp-2010/edges.txt.gz|--synthetic-features 16"
)
for d in "${DATA[@]}"; do
  IFS='|' read -r _ path _ <<<"$d"
  [ -e "$path" ] || { echo "volume-report: $path not found (set SUPERGCN_DATASETS)" >&2; exit 1; }
done

OUT=$(mktemp -d "${TMPDIR:-/tmp}/volume-report.XXXXXX")
[ "${KEEP:-}" = 1 ] || trap 'rm -rf "$OUT"' EXIT

# jget FILE KEY: a number from the stats JSON (two-space indent); KEY is a
# top-level key ("data_bytes") or object.key ("rows.pre").
jget() {
  awk -v want="$2" '
    /^  "[a-z_0-9]+": \{/ { obj = $1; gsub(/[":]/, "", obj); next }
    /^  [^ ]/ { obj = "" }
    {
      line = $0; sub(/,$/, "", line); n = split(line, f, /": /); if (n != 2) next
      key = f[1]; sub(/^ *"/, "", key)
      k = (obj != "" && line ~ /^    "/) ? obj "." key : key
      if (line ~ /^  "/ || line ~ /^    "/) if (k == want) { print f[2]; exit }
    }' "$1"
}

# stats DIR OUTFILE ARGS...: run `supergcn stats --json`, echoing the command.
stats() {
  local dir=$1 out=$2
  shift 2
  echo "+ $SUPERGCN_BIN stats $dir --json $*" >>"$OUT/commands.log"
  "$SUPERGCN_BIN" stats "$dir" --json "$@" >"$out"
}

rows_table=()
bytes_table=()
for d in "${DATA[@]}"; do
  IFS='|' read -r name path extra <<<"$d"
  for parts in $PARTS; do
    dir="$OUT/$name-$parts"
    # shellcheck disable=SC2086  # $extra is a list of flags
    cmd=("$SUPERGCN_BIN" partition --data "$path" $extra --parts "$parts" --method metis --out "$dir")
    echo "+ ${cmd[*]}" >>"$OUT/commands.log"
    if ! "${cmd[@]}" >"$dir.log" 2>&1; then
      echo "volume-report: ${cmd[*]} failed:" >&2
      cat "$dir.log" >&2
      exit 1
    fi
    j="$dir.rows.json"
    stats "$dir" "$j" --width "$ROWS_WIDTH"
    pre=$(jget "$j" rows.pre) post=$(jget "$j" rows.post) hyb=$(jget "$j" rows.hybrid)
    ratio=$(awk -v a="$pre" -v b="$post" -v h="$hyb" 'BEGIN { m = a < b ? a : b; if (h > 0) printf "%.3f", m / h; else print "-" }')
    rows_table+=("$(printf '%-10s %5d %10d %10d %10d %14s' "$name" "$parts" "$pre" "$post" "$hyb" "$ratio")")
    for w in $WIDTHS; do
      for half in fp32 bf16 block; do
        flags=(--width "$w" --bits "$BITS" --quant-params "$half")
        j="$dir.w$w.$half.json"
        stats "$dir" "$j" "${flags[@]}"
        data=$(jget "$j" data_bytes) param=$(jget "$j" param_bytes) tot=$(jget "$j" bytes.hybrid) fp=$(jget "$j" fp32_bytes)
        pb=8
        [ "$half" = bf16 ] && pb=4
        [ "$half" = block ] && pb=3.0625
        bytes_table+=("$(awk -v n="$name" -v p="$parts" -v w="$w" -v h="$half" -v r="$(jget "$j" rows.hybrid)" \
          -v fp="$fp" -v d="$data" -v pa="$param" -v t="$tot" -v b="$BITS" -v pb="$pb" 'BEGIN {
            # theory: fp32 4F bytes a row, int-b ceil(F*b/8) data + pb params
            th = 4 * w / (int((w * b + 7) / 8) + pb)
            printf "%-10s %5d %5d %-5s %8d %12d %11d %11d %11d %8.2f %8.2f", n, p, w, h, r, fp, d, pa, t, fp / t, th }')")
      done
    done
  done
done

echo "machine: $(uname -srm), $(nproc) cores ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)), $(go version 2>/dev/null | awk '{ print $3 }')"
echo "binary:  $SUPERGCN_BIN; partitions: METIS, default flags (weights degree+train; dblp-2010 gets 16 synthetic features and their random split)"
echo
echo "rows per layer, one direction, summed over all ordered rank pairs"
printf '%-10s %5s %10s %10s %10s %14s\n' dataset parts pre post hybrid 'min(pre,post)/hyb'
printf '%s\n' "${rows_table[@]}"
echo
echo "bytes per layer, one direction, of the hybrid rows: fp32 vs int$BITS (data + per-row params; params fp32 = 8 B/row, bf16 = 4 B/row)"
echo "ratio = fp32 / int$BITS total; theory = 4F / (ceil(F*$BITS/8) + param bytes)"
printf '%-10s %5s %5s %-5s %8s %12s %11s %11s %11s %8s %8s\n' dataset parts width param rows fp32 "int$BITS-data" "int$BITS-param" "int$BITS-total" ratio theory
printf '%s\n' "${bytes_table[@]}"
echo
echo "commands:"
sed 's|'"$OUT"'/|$OUT/|g' "$OUT/commands.log"

#!/usr/bin/env bash
# Checks the documentation against the repository (part of scripts/test.sh):
#   - every table generated from docs/data equals what its data file gives (scripts/docstables -check);
#   - every docs/data file and image the docs name exists;
#   - every validation table in docs/data (scripts/validate-model.sh's validate.csv) is what
#     the current model predicts from the measured rows, profile and volumes it names
#     (needs bin/supergcn, or BIN; about 20 s a table on 2 cores);
#   - docs/RESULTS.md and docs/SCALING.md together stay within 600 lines;
#   - no words about how the work was organised, in the docs, the commands' help or the main packages.
set -euo pipefail
cd "$(dirname "$0")/.."
fail() { echo "test-docs: FAIL: $*" >&2; exit 1; }

go run ./scripts/docstables -check

docs=(README.md CHANGELOG.md docs/*.md)
missing=$(grep -ohE 'docs/data/[A-Za-z0-9._-]+\.(csv|json|jsonl|txt)' "${docs[@]}" | sort -u | while read -r f; do [ -e "$f" ] || echo "$f"; done)
[ -z "$missing" ] || fail "named in the docs but absent: $missing"
for d in README.md docs/*.md; do
	base=$(dirname "$d")
	for img in $(grep -oE '\]\([^)]*\.png\)' "$d" | sed 's/^](//; s/)$//'); do
		[ -e "$base/$img" ] || fail "$d links $img, which does not exist"
	done
done

# TABLE EVAL_CACHE PROFILE VOLUMES ROWS(comma-separated), all in docs/data
BIN=${BIN:-bin/supergcn}
if [ -x "$BIN" ]; then
	T=$(mktemp -d)
	trap 'rm -rf "$T"' EXIT
	while read -r table cache profile volumes rows; do
		args=()
		for r in ${rows//,/ }; do args+=("docs/data/$r"); done
		# every table's rows come from binaries that quantised same-node rows in the flat exchange
		BIN=$BIN FLAT_INTRA=bits EVAL_CACHE=$cache PROFILE=docs/data/$profile VOLUMES=docs/data/$volumes OUT=$T \
			scripts/validate-model.sh "${args[@]}" >"$T/log" 2>&1 || { cat "$T/log"; fail "validate-model.sh for $table"; }
		cmp -s "$T/validate.csv" "docs/data/$table" || fail "docs/data/$table is not what the model predicts now (scripts/validate-model.sh)"
	done <<'TABLES'
validate-model-np16-lockstep.csv true profile-xeon16-lockstep.json volumes-products-p16.json bench-cluster-np16.csv
validate-model-np16-shards.csv true profile-xeon16-shards.json volumes-products-p16.json bench-cluster-np16.csv
validate-model-np16-unsynced.csv true profile-xeon16-unsynced.json volumes-products-p16.json bench-cluster-np16.csv
validate-model-np16-twolevel-gcn-lockstep.csv true profile-xeon16-lockstep.json volumes-products-p16.json bench-cluster-np16-twolevel-gcn.csv
validate-model-np16-twolevel-gcn-shards.csv true profile-xeon16-shards.json volumes-products-p16.json bench-cluster-np16-twolevel-gcn.csv
validate-model-np16-twolevel-sage-lockstep.csv true profile-xeon16-lockstep.json volumes-products-p16.json bench-cluster-np16-twolevel-sage.csv
validate-model-np16-twolevel-sage-shards.csv true profile-xeon16-shards.json volumes-products-p16.json bench-cluster-np16-twolevel-sage.csv
validate-model-np16-samebox.csv true profile-xeon16-samebox.json volumes-products-p16.json bench-cluster-np16-samebox.csv
validate-model-np32-xeon32.csv true profile-xeon32.json volumes-products-p32.json bench-cluster-np32-xeon32.csv
validate-model-np16-prescott.csv false profile-xeon16-prescott.json volumes-products-p16.json bench-cluster-np16-prescott-gcn.csv,bench-cluster-np16-prescott-gcn-intn.csv,bench-cluster-np16-prescott-sage.csv,bench-cluster-np16-prescott-4x4-twolevel.csv,bench-cluster-np16-prescott-2x8-twolevel.csv
validate-model-devprofile.csv false profile-dev-2c.json volumes-products-p16.json bench-cluster-np16-prescott-gcn.csv,bench-cluster-np16-prescott-gcn-intn.csv,bench-cluster-np16-prescott-sage.csv
TABLES
else
	echo "test-docs: SKIP: the validation tables ($BIN not built)"
fi

n=$(cat docs/RESULTS.md docs/SCALING.md | wc -l)
[ "$n" -le 600 ] || fail "docs/RESULTS.md + docs/SCALING.md have $n lines (limit 600)"

words=$(grep -rnwIiE 'sessions?|lent|integrator|(second|third|fourth|fifth) pass' README.md docs/ cmd/ perfmodel/ exchange/ train/ || true)
[ -z "$words" ] || fail "words about how the work was organised:
$words"
echo "test-docs: ok (tables match docs/data, links resolve, RESULTS + SCALING $n lines)"

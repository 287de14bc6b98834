#!/usr/bin/env bash
# Checks the documentation against the repository (part of scripts/test.sh):
#   - every table generated from docs/data equals what its data file gives (scripts/docstables -check);
#   - every docs/data file and image the docs name exists;
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

n=$(cat docs/RESULTS.md docs/SCALING.md | wc -l)
[ "$n" -le 600 ] || fail "docs/RESULTS.md + docs/SCALING.md have $n lines (limit 600)"

words=$(grep -rnwIiE 'sessions?|lent|integrator|(second|third|fourth|fifth) pass' README.md docs/ cmd/ perfmodel/ exchange/ train/ || true)
[ -z "$words" ] || fail "words about how the work was organised:
$words"
echo "test-docs: ok (tables match docs/data, links resolve, RESULTS + SCALING $n lines)"

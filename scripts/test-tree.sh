#!/usr/bin/env bash
# Checks that the tree holds sources, not products (part of scripts/test.sh):
#   - no tracked file is a build product or a cache: an executable or object file (ELF, Mach-O, PE,
#     an ar archive), Python bytecode or its cache directory, a Go test binary or profile;
#   - every file in docs/data is cited by a doc (README.md or docs/*.md), by its name or by a glob
#     such as bench-cluster-np16-prescott-*.csv: data nobody cites is deleted (git keeps it).
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0

while IFS= read -r -d '' f; do
	[ -f "$f" ] || continue
	case $f in
	*.pyc | *.pyo | */__pycache__/* | __pycache__/* | *.test | *.prof | *.o | *.so | *.a | *.exe)
		echo "test-tree: $f is a build product or cache: git rm --cached it"
		fail=1
		continue
		;;
	esac
	magic=$(head -c 4 "$f" | od -An -tx1 | tr -d ' \n')
	case $magic in
	7f454c46 | cffaedfe | cefaedfe | feedfacf | feedface | 213c6172 | 4d5a*)
		echo "test-tree: $f is a binary (magic $magic): git rm --cached it"
		fail=1
		;;
	esac
done < <(git ls-files -z)

docs=(README.md docs/*.md)
# the globs the docs cite (bench-cluster-np16-prescott-*.csv, docs/data/products-np16-*.jsonl)
mapfile -t globs < <(grep -ohE '[A-Za-z0-9._-]*[*][A-Za-z0-9._*-]*[.](csv|json|jsonl|txt|png)' "${docs[@]}" | sort -u)
for f in docs/data/*; do
	[ -e "$f" ] || continue
	name=${f#docs/data/}
	grep -qF -- "$name" "${docs[@]}" && continue
	cited=0
	for g in "${globs[@]}"; do
		# shellcheck disable=SC2053 # g is a glob on purpose
		if [[ $name == ${g##*/} ]]; then
			cited=1
			break
		fi
	done
	if [ "$cited" = 0 ]; then
		echo "test-tree: $f is cited by no doc (README.md, docs/*.md): cite it where its numbers are, or git rm it"
		fail=1
	fi
done
[ "$fail" = 0 ] || exit 1
echo "test-tree: ok ($(git ls-files | wc -l) tracked files, no binaries or caches; $(ls docs/data | wc -l) docs/data files, each cited)"

#!/usr/bin/env bash
# Checks that imports go one way, as docs/DESIGN.md ("Layers") documents:
#   internal → {comm, mpi, vcover} → graph → partition → {nn, aggr, quant, attn, dense, …} → exchange
#   → {train, perfmodel} → cmd, scripts
# A package may import packages of its own layer or below, never above; a package
# the table below does not place fails the check (place it when you add it).
# Non-test imports only (part of scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(scripts/buildenv.sh)"
mod=$(go list -m)

# layer of a package (path relative to the module), or "" when unplaced
layer() {
	case $1 in
	internal/*) echo 0 ;;
	comm | comm/* | mpi | mpi/* | vcover) echo 1 ;;
	graph) echo 2 ;;
	partition | partition/*) echo 3 ;;
	nn | aggr | quant | attn | dense | dense/* | labelprop | interop | dataset) echo 4 ;;
	exchange | task) echo 5 ;;
	train | perfmodel | perfmodel/*) echo 6 ;;
	cmd/* | scripts/*) echo 7 ;;
	*) echo "" ;;
	esac
}

bad=0
while read -r pkg imports; do
	p=${pkg#"$mod"}
	p=${p#/}
	lp=$(layer "$p")
	if [ -z "$lp" ]; then
		echo "test-layering: $p is in no layer (scripts/test-layering.sh and docs/DESIGN.md place every package)"
		bad=1
		continue
	fi
	for imp in $imports; do
		case $imp in "$mod"/*) ;; *) continue ;; esac
		q=${imp#"$mod"/}
		lq=$(layer "$q")
		if [ -z "$lq" ] || [ "$lq" -gt "$lp" ]; then
			echo "test-layering: $p (layer $lp) imports $q (layer ${lq:-none}): against docs/DESIGN.md's order"
			bad=1
		fi
	done
done < <(go list -tags "$TAGS" -f '{{.ImportPath}} {{join .Imports " "}}' ./...)
[ "$bad" = 0 ] || exit 1
echo "test-layering: ok (every import goes down or within a layer)"

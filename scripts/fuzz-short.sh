#!/usr/bin/env bash
# Runs each graph/ parser fuzz target for a short time (FUZZTIME, default
# 10s each). Any panic or failed invariant fails the script; new crashers
# are written by `go test` under graph/testdata/fuzz/<Target>/.
#   FUZZTIME=30s scripts/fuzz-short.sh        longer runs
#   FUZZPARALLEL=1 scripts/fuzz-short.sh      one worker (shared machines)
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-10s}
par=()
if [ -n "${FUZZPARALLEL:-}" ]; then
	par=(-parallel "$FUZZPARALLEL")
fi
for target in FuzzEdgeList FuzzMetis FuzzOGBCSV FuzzNpyHeader; do
	echo "fuzz: graph $target for $FUZZTIME"
	"$GO" test ./graph/ -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "${par[@]}"
done

#!/usr/bin/env bash
# Runs every fuzz target for a short budget (FUZZTIME, default 20000x: twenty
# thousand inputs each, a few seconds on two cores): the
# text parsers (edge lists, METIS, OGB CSV, npy headers), the .sgb binary
# format, partition part files and meta.json, checkpoints, the performance
# model's machine profiles and volumes files (read, then predicted from) and
# the train command line. Any panic or failed invariant fails the script; new crashers
# are written by `go test` under <pkg>/testdata/fuzz/<Target>/ (commit them
# once fixed: they become regression seeds). The default budget is a count,
# not a duration: before Go 1.27 a duration budget can end a run that found
# nothing with "context deadline exceeded" on a loaded machine (the fuzzing
# coordinator's race at the deadline, golang/go#75804).
#   FUZZTIME=2m scripts/fuzz-short.sh         longer runs (make fuzz)
#   FUZZPARALLEL=1 scripts/fuzz-short.sh      one worker (shared machines)
#   scripts/fuzz-short.sh FuzzCheckpoint      only the named targets
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-20000x}
par=()
if [ -n "${FUZZPARALLEL:-}" ]; then
	par=(-parallel "$FUZZPARALLEL")
fi
targets=(
	graph:FuzzEdgeList graph:FuzzMetis graph:FuzzOGBCSV graph:FuzzNpyHeader graph:FuzzBinary
	partition:FuzzMeta partition:FuzzPartFile
	train:FuzzCheckpoint
	perfmodel:FuzzProfile perfmodel:FuzzVolumes
	cmd/supergcn:FuzzTrainFlags
)
for t in "${targets[@]}"; do
	pkg=${t%%:*} target=${t#*:}
	if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$target"; then
		continue
	fi
	echo "fuzz: $pkg $target for $FUZZTIME"
	"$GO" test "./$pkg/" -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "${par[@]}"
done

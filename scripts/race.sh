#!/usr/bin/env bash
# The race detector over the packages with concurrent code: the thread pool
# (internal/par) that aggregation, quantisation, dense products, loaders and
# preprocessing run on, the in-process communicator, the asynchronous
# boundary exchange, label propagation, and the trainer running ranks as
# goroutines. -race costs 5-20x, so exhaustive numeric tests are left to the
# plain run; what remains still drives every pool and every exchange path.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
TAGS=${TAGS-$(pkg-config --exists openblas 2>/dev/null && echo openblas || true)}
race=("$GO" test -race -count=1 -tags "$TAGS")
"${race[@]}" -short ./internal/par/ ./quant/ ./comm/ ./dense/ ./labelprop/ ./exchange/ ./internal/rowk/
"${race[@]}" -run 'TestConcurrentApply|TestPlanCovers|TestKernels$' ./aggr/
"${race[@]}" -short -skip 'TestLoadDBLP|TestLoadWave|TestParseFloat32MatchesStrconv|TestGenerateProperties' ./graph/
"${race[@]}" -run 'TestConcurrentSmall|TestMetrics|TestCheckpointForged|TestCheckpointRoundTripAndNoTmp' ./train/

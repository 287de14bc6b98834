#!/usr/bin/env bash
# Runs the MPI binding tests (mpi/, comm/mpicomm/): each package's launcher
# tests start the test binary under mpirun with 1, 2 and 4 ranks, plus an
# Abort job at 2 ranks. Without mpirun in PATH the tests skip (and say so).
#   MPI_TAGS=mpich scripts/test-mpi.sh    # build against MPICH instead
set -euo pipefail
cd "$(dirname "$0")/.."

# Open MPI in a container: root, more ranks than cores, ranks that yield
# instead of spinning, no CMA single-copy (often blocked by ptrace rules).
# MPICH ignores these.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_btl_vader_single_copy_mechanism="${OMPI_MCA_btl_vader_single_copy_mechanism:-none}"
# cgo pointer checks on (the default, stated so a caller's GODEBUG cannot drop them).
export GODEBUG="${GODEBUG:+$GODEBUG,}cgocheck=1"

command -v mpirun >/dev/null || echo "test-mpi: mpirun not found: the MPI tests will skip"
tags=(); [ -n "${MPI_TAGS:-}" ] && tags=(-tags "$MPI_TAGS")
# -p 1: one package at a time, so at most 4 ranks share the cores.
go test "${tags[@]}" -count=1 -p 1 ./mpi/... ./comm/mpicomm/...

#!/usr/bin/env bash
# Builds supergcn the ways docs/INSTALL.md describes for a site's libraries
# (scripts/buildenv.sh) and checks that each build uses what it names:
#   1. MPICH through pkg-config (MPI=mpich, tag mpich) and through its compiler
#      wrapper's flags (MPICC=mpicc.mpich, tag mpienv): the test binary of
#      package mpi links libmpich, not Open MPI, and the MPI binding tests
#      (mpi/, comm/mpicomm/) pass under MPICH's launcher, mpirun.mpich.
#      Debian's MPICH and Open MPI dev packages install side by side; Open MPI
#      stays the default mpicc/mpirun.
#   2. BLAS=mkl with MKLROOT: the MKL binding type-checks (go vet) against a
#      stand-in mkl.h (dense/openblas/testdata/mkl-stub; MKL is not in Debian
#      main, so it is not linked here).
#   3. METIS_DIR and SCOTCH_DIR naming prefixes outside the compiler's search
#      path (links to Debian's METIS and its 64-bit PT-Scotch,
#      /usr/{include,lib/x86_64-linux-gnu}/scotch-int64), built with -tags
#      scotch64: the binary resolves libmetis and libptscotch under those
#      prefixes, `info` reports a 64-bit SCOTCH_Num, and a 2-rank parmetis
#      partitioning of Cora completes.
# Parts whose packages are missing and cannot be installed skip, saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "test-site-build: FAIL: $*" >&2; exit 1; }
log() { echo "test-site-build: $*"; }
unset MPI MPICC MPI_CFLAGS MPI_LIBS METIS_DIR SCOTCH_DIR OPENBLAS_DIR MKLROOT
export BLAS=gonum TAGS=

# 1. MPICH
scripts/deps.sh --optional libmpich-dev mpich
if ! command -v mpicc.mpich >/dev/null || ! command -v mpirun.mpich >/dev/null || ! pkg-config --exists mpich; then
	log "SKIP: MPICH builds (libmpich-dev and mpich not installed)"
else
	for how in MPI=mpich MPICC=mpicc.mpich; do
		(
			export "${how?}"
			# GCC 12 warns wrongly about MPICH's MPI_STATUSES_IGNORE (the mpich tag says the same)
			export CGO_CFLAGS="-O2 -g -Wno-stringop-overflow"
			eval "$(scripts/buildenv.sh)"
			log "$how: tags '$TAGS', CGO_CFLAGS '$CGO_CFLAGS', CGO_LDFLAGS '$CGO_LDFLAGS'"
			go test -c -tags "$TAGS" -o "$T/mpi.test" ./mpi/
			libs=$(ldd "$T/mpi.test")
			grep -q 'libmpich\.so' <<<"$libs" || fail "$how: the mpi test binary does not link libmpich: $libs"
			! grep -q 'libmpi\.so' <<<"$libs" || fail "$how: the mpi test binary links Open MPI's libmpi: $libs"
			SUPERGCN_MPIRUN=mpirun.mpich go test -tags "$TAGS" -count=1 -p 1 ./mpi/ ./comm/mpicomm/
		) || exit 1
	done
	log "ok: MPICH through pkg-config and through mpicc.mpich -show"
fi

# 2. BLAS=mkl through MKLROOT: MKL is not in Debian's main archive, so the
# binding is type-checked against a stand-in mkl.h (never linked).
mkdir -p "$T/mkl/include" "$T/mkl/lib/intel64"
cp dense/openblas/testdata/mkl-stub/mkl.h "$T/mkl/include/"
(
	export MKLROOT=$T/mkl BLAS=mkl
	eval "$(scripts/buildenv.sh)"
	[ "$TAGS" = mkl ] || fail "BLAS=mkl: tags '$TAGS', want mkl"
	go vet -tags "$TAGS" ./dense/openblas/ ./cmd/supergcn/
) || exit 1
log "ok: BLAS=mkl with MKLROOT type-checks (against a stand-in mkl.h)"

# 3. METIS_DIR and SCOTCH_DIR
s64=/usr/lib/x86_64-linux-gnu/scotch-int64
if [ ! -f /usr/include/scotch-int64/scotch.h ] || [ ! -f $s64/libptscotchparmetisv3.so ] || [ ! -f /usr/include/metis.h ]; then
	log "SKIP: METIS_DIR/SCOTCH_DIR build (Debian's libmetis-dev and libptscotch-dev with scotch-int64 not installed)"
	exit 0
fi
mkdir -p "$T/metis/include" "$T/metis/lib" "$T/scotch"
ln -s /usr/include/metis.h "$T/metis/include/"
ln -s /usr/lib/x86_64-linux-gnu/libmetis.so* "$T/metis/lib/"
ln -s /usr/include/scotch-int64 "$T/scotch/include"
ln -s $s64 "$T/scotch/lib"
(
	export METIS_DIR=$T/metis SCOTCH_DIR=$T/scotch TAGS=scotch64
	eval "$(scripts/buildenv.sh)"
	log "METIS_DIR, SCOTCH_DIR: tags '$TAGS', CGO_CFLAGS '$CGO_CFLAGS'"
	go build -tags "$TAGS" -o "$T/supergcn" ./cmd/supergcn
) || exit 1
libs=$(ldd "$T/supergcn")
grep -q "libmetis\.so.* => $T/metis/lib/" <<<"$libs" || fail "libmetis not resolved under METIS_DIR: $libs"
grep -q "libptscotch-.* => $T/scotch/lib/" <<<"$libs" || fail "libptscotch not resolved under SCOTCH_DIR: $libs"
info=$("$T/supergcn" info --no-mpi)
grep -q "64-bit SCOTCH_Num" <<<"$info" || fail "info does not report the 64-bit PT-Scotch: $info"
if command -v mpirun >/dev/null; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
	cora=$ROOT/internal/testdataset/testdata/cora
	mpirun -np 2 "$T/supergcn" partition --data "$cora" --method parmetis --parts 4 --out "$T/p4" | tail -n 1
	[ "$(ls "$T/p4" | grep -c '^part-.*\.bin$')" -eq 4 ] || fail "the scotch64 build wrote $(ls "$T/p4" | tr '\n' ' ') for 4 parts"
else
	log "SKIP: the 2-rank partitioning (mpirun not found)"
fi
log "ok: METIS_DIR and SCOTCH_DIR (64-bit PT-Scotch, -tags scotch64)"

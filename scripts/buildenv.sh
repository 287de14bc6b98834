#!/usr/bin/env bash
# Prints, as shell assignments to eval, the build tags and cgo flags that
# build supergcn against the MPI, METIS, PT-Scotch and BLAS these variables
# name (docs/INSTALL.md); `make build` and scripts/test.sh use it:
#   eval "$(scripts/buildenv.sh)" && go build -tags "$TAGS" ./cmd/supergcn
#
#   MPI_CFLAGS, MPI_LIBS  a site's MPI by its compile and link flags (tag mpienv)
#   MPICC                 else an MPI compiler wrapper whose flags are read from
#                         `$MPICC -show` (MPICH, Intel MPI) or `-showme` (Open MPI,
#                         Fujitsu MPI): mpicc.mpich, mpiicc, mpifccpx (tag mpienv)
#   MPI=ompi|mpich        else the MPI pkg-config finds by that name; by default
#                         ompi when its .pc file exists, else mpich
#   METIS_DIR             prefix of METIS (include/metis.h, lib/libmetis)
#   SCOTCH_DIR            prefix of PT-Scotch (include/scotch.h, lib/libptscotch*)
#   BLAS=openblas|mkl|gonum  OpenBLAS through pkg-config (default when found), Intel
#                         MKL's libmkl_rt (from MKLROOT, else pkg-config mkl-sdl), or
#                         gonum's pure-Go BLAS
#   OPENBLAS_DIR          prefix of an OpenBLAS without a .pc file (implies BLAS=openblas)
#   TAGS                  further build tags, kept (e.g. scotch64, parmetis)
# CGO_CFLAGS and CGO_LDFLAGS already set are kept, after the flags added here.
# OPENBLAS_DIR writes build/pkgconfig/openblas.pc and adds it to PKG_CONFIG_PATH.
# Exits non-zero, saying why, when a named library is not where it is said to be.
set -euo pipefail

die() { echo "buildenv: $*" >&2; exit 1; }
q() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

tags=${TAGS:-}
cflags=() ldflags=()
add_prefix() { # NAME DIR HEADER: -I, -L and an rpath for a library installed under DIR
	[ -f "$2/include/$3" ] || die "$1=$2: no $2/include/$3"
	local lib=$2/lib
	[ -d "$2/lib64" ] && [ ! -d "$2/lib" ] && lib=$2/lib64
	cflags+=("-I$2/include")
	ldflags+=("-L$lib" "-Wl,-rpath,$lib")
}

# MPI
if [ -n "${MPI_CFLAGS:-}${MPI_LIBS:-}" ]; then
	[ -n "${MPI_LIBS:-}" ] || die "MPI_CFLAGS is set but MPI_LIBS is not (both name a site's MPI)"
	tags="$tags mpienv"
	read -r -a f <<<"${MPI_CFLAGS:-}"; cflags+=("${f[@]}")
	read -r -a f <<<"$MPI_LIBS"; ldflags+=("${f[@]}")
elif [ -n "${MPICC:-}" ]; then
	command -v "$MPICC" >/dev/null || die "MPICC=$MPICC: not found"
	show=$("$MPICC" -show 2>/dev/null || "$MPICC" -showme 2>/dev/null) || die "MPICC=$MPICC: neither -show nor -showme prints its flags"
	read -r -a words <<<"$show"
	tags="$tags mpienv"
	for w in "${words[@]:1}"; do # the first word is the compiler
		case $w in
		-I* | -D* | -pthread) cflags+=("$w") ;;
		-c | -o) ;;
		*) ldflags+=("$w") ;;
		esac
	done
else
	mpi=${MPI:-}
	if [ -z "$mpi" ]; then
		if pkg-config --exists ompi 2>/dev/null; then mpi=ompi
		elif pkg-config --exists mpich 2>/dev/null; then mpi=mpich
		else die "no MPI found: pkg-config knows neither ompi nor mpich; set MPI_CFLAGS/MPI_LIBS or MPICC (docs/INSTALL.md)"
		fi
	fi
	case $mpi in
	ompi) ;;
	mpich) tags="$tags mpich" ;;
	*) die "MPI=$mpi: want ompi or mpich (or MPI_CFLAGS/MPI_LIBS, MPICC for others)" ;;
	esac
	pkg-config --exists "$mpi" 2>/dev/null || die "MPI=$mpi: pkg-config finds no $mpi.pc (PKG_CONFIG_PATH?)"
fi

# METIS and PT-Scotch
[ -n "${METIS_DIR:-}" ] && add_prefix METIS_DIR "$METIS_DIR" metis.h
[ -n "${SCOTCH_DIR:-}" ] && add_prefix SCOTCH_DIR "$SCOTCH_DIR" scotch.h

# BLAS
blas=${BLAS:-}
[ -n "${OPENBLAS_DIR:-}" ] && blas=${blas:-openblas}
if [ -z "$blas" ]; then
	blas=gonum
	pkg-config --exists openblas 2>/dev/null && blas=openblas
fi
case $blas in
openblas)
	tags="$tags openblas"
	if [ -n "${OPENBLAS_DIR:-}" ]; then
		# dense/openblas asks pkg-config for openblas: a .pc file for this prefix.
		[ -f "$OPENBLAS_DIR/include/cblas.h" ] || die "OPENBLAS_DIR=$OPENBLAS_DIR: no include/cblas.h"
		pc=$(cd "$(dirname "$0")/.." && pwd)/build/pkgconfig
		mkdir -p "$pc"
		lib=$OPENBLAS_DIR/lib
		[ -d "$OPENBLAS_DIR/lib64" ] && [ ! -d "$lib" ] && lib=$OPENBLAS_DIR/lib64
		printf 'Name: openblas\nDescription: OpenBLAS at %s\nVersion: 0\nCflags: -I%s/include\nLibs: -L%s -Wl,-rpath,%s -lopenblas\n' \
			"$OPENBLAS_DIR" "$OPENBLAS_DIR" "$lib" "$lib" >"$pc/openblas.pc"
		echo "export PKG_CONFIG_PATH=$(q "$pc${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}")"
	else
		pkg-config --exists openblas 2>/dev/null || die "BLAS=openblas: pkg-config finds no openblas.pc (set OPENBLAS_DIR, or BLAS=gonum)"
	fi
	;;
gonum) ;;
mkl)
	tags="$tags mkl"
	if [ -n "${MKLROOT:-}" ]; then
		[ -f "$MKLROOT/include/mkl.h" ] || die "MKLROOT=$MKLROOT: no include/mkl.h"
		lib=$MKLROOT/lib/intel64
		[ -d "$lib" ] || lib=$MKLROOT/lib
		cflags+=("-I$MKLROOT/include")
		ldflags+=("-L$lib" "-Wl,-rpath,$lib")
	elif pkg-config --exists mkl-sdl 2>/dev/null; then
		read -r -a f <<<"$(pkg-config --cflags mkl-sdl)"; cflags+=(${f[@]+"${f[@]}"})
		read -r -a f <<<"$(pkg-config --libs-only-L mkl-sdl)"; ldflags+=(${f[@]+"${f[@]}"})
	else
		die "BLAS=mkl: set MKLROOT (MKL's setvars.sh or module does) or make pkg-config find mkl-sdl"
	fi
	;;
*) die "BLAS=$blas: want openblas, mkl or gonum" ;;
esac

tags=$(echo $tags | tr " " ",")
echo "export TAGS=$(q "$tags")"
# (go's default for both is -O2 -g, kept when they were unset)
echo "export CGO_CFLAGS=$(q "$(echo ${cflags[@]+"${cflags[@]}"} ${CGO_CFLAGS--O2 -g})")"
echo "export CGO_LDFLAGS=$(q "$(echo ${ldflags[@]+"${ldflags[@]}"} ${CGO_LDFLAGS--O2 -g})")"

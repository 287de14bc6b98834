#!/usr/bin/env bash
# Cross-compiles bin/supergcn-arm64 with cgo against Debian's arm64 Open MPI,
# METIS, PT-Scotch and OpenBLAS (`make build-arm64`). The arm64 libraries
# are not installed: their packages are downloaded (apt-get download, after
# `dpkg --add-architecture arm64`) and unpacked into build/arm64-sysroot, so
# the host's amd64 METIS and PT-Scotch (not co-installable across
# architectures) stay as they are. The compiler is gcc-aarch64-linux-gnu.
# The sysroot also runs the binary under qemu:
#   qemu-aarch64-static -L build/arm64-sysroot -E LD_LIBRARY_PATH=$(scripts/build-arm64.sh --libpath) bin/supergcn-arm64 info --no-mpi
#
# Usage: scripts/build-arm64.sh [--libpath]   (--libpath: print the library path for qemu and exit)
set -euo pipefail
cd "$(dirname "$0")/.."
S=$PWD/build/arm64-sysroot
L=$S/usr/lib/aarch64-linux-gnu
LIBPATH=$L/openmpi/lib:$L/openblas-pthread:$L:$S/lib/aarch64-linux-gnu
if [ "${1:-}" = --libpath ]; then
	echo "$LIBPATH"
	exit 0
fi

# The -dev packages and the run-time closure of their libraries (Debian 12).
PKGS="libopenmpi-dev libmetis-dev libptscotch-dev libscotch-dev libopenblas-dev libopenblas-pthread-dev
libc6-dev linux-libc-dev libevent-dev libhwloc-dev libibverbs-dev libltdl-dev libnl-3-dev libnl-route-3-dev
libnuma-dev libpmix-dev zlib1g-dev
libc6 libgcc-s1 libstdc++6 libatomic1 libgomp1 libitm1 libgfortran5 libopenmpi3 libmetis5 libptscotch-7.0
libscotch-7.0 libopenblas0 libopenblas0-pthread libbz2-1.0 liblzma5 libzstd1 zlib1g libevent-2.1-7
libevent-core-2.1-7 libevent-extra-2.1-7 libevent-openssl-2.1-7 libevent-pthreads-2.1-7 libfabric1 libffi8
libhwloc15 libhwloc-plugins libibverbs1 librdmacm1 libicu72 libjansson4 libltdl7 libmunge2 libnl-3-200
libnl-route-3-200 libnuma1 libpciaccess0 libpmix2 libssl3 libucx0 libudev1 libx11-6 libxau6 libxcb1
libxdmcp6 libxext6 libxml2 libxnvctrl0"

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
if [ ! -f "$S/.complete" ]; then
	scripts/deps.sh gcc-aarch64-linux-gnu pkg-config
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		echo "build-arm64: adding the arm64 architecture to dpkg (package lists only; nothing arm64 is installed)"
		$SUDO dpkg --add-architecture arm64
		$SUDO apt-get update -q
	fi
	debs=$(mktemp -d)
	chmod 777 "$debs"
	arm=()
	for p in $PKGS; do arm+=("$p:arm64"); done
	(cd "$debs" && apt-get download -q "${arm[@]}" 2>&1 | grep -v '^Get:' || true)
	n=$(ls "$debs"/*.deb 2>/dev/null | wc -l)
	[ "$n" -eq "$(wc -w <<<"$PKGS")" ] || { echo "build-arm64: downloaded $n of $(wc -w <<<"$PKGS") packages" >&2; exit 1; }
	rm -rf "$S"
	mkdir -p "$S"
	for d in "$debs"/*.deb; do dpkg -x "$d" "$S"; done
	rm -rf "$debs"
	touch "$S/.complete"
fi

TAGS=${TAGS-openblas}
mkdir -p bin
CGO_ENABLED=1 GOARCH=arm64 CC="aarch64-linux-gnu-gcc --sysroot=$S" \
	PKG_CONFIG_SYSROOT_DIR=$S PKG_CONFIG_LIBDIR=$L/pkgconfig:$L/openblas-pthread/pkgconfig:$L/openmpi/lib/pkgconfig \
	CGO_CFLAGS="-O2 -I$S/usr/include/scotch -I$S/usr/include/aarch64-linux-gnu -I$S/usr/include" \
	CGO_LDFLAGS="-L$L -L$L/openblas-pthread -Wl,-rpath-link,$LIBPATH" \
	go build -tags "$TAGS" -ldflags "${LDFLAGS:-}" -o bin/supergcn-arm64 ./cmd/supergcn
echo "build-arm64: wrote bin/supergcn-arm64"

#!/usr/bin/env bash
# Installs, with apt-get, the Debian packages given as arguments that are not
# installed yet (as root, or through sudo).
#   scripts/deps.sh PKG...              fails, saying what to do, when it cannot
#   scripts/deps.sh --optional PKG...   names what it cannot install and succeeds:
#                                       the tests that need those packages skip
# Where there is no dpkg (not Debian/Ubuntu) it installs nothing and says so:
# docs/INSTALL.md lists the libraries and how to name a site's copies.
set -euo pipefail
optional=0
if [ "${1:-}" = --optional ]; then optional=1; shift; fi

cannot() { # WHY
	if [ $optional = 1 ]; then
		echo "deps: not installing ${missing[*]} ($1): the tests that need them will skip"
		exit 0
	fi
	echo "deps: missing ${missing[*]} ($1)." >&2
	echo "deps: install them, or build against a site's libraries with make build (docs/INSTALL.md)" >&2
	exit 1
}

if ! command -v dpkg-query >/dev/null; then
	echo "deps: no dpkg here: install the equivalents of $* yourself (docs/INSTALL.md)"
	exit 0
fi
missing=()
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || cannot "not root, and no sudo"
	sudo -n true 2>/dev/null || [ -t 0 ] || cannot "not root, and sudo needs a password without a terminal"
	SUDO=(sudo)
fi
echo "deps: installing ${missing[*]}"
if ! { "${SUDO[@]}" apt-get update -q && DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"; }; then
	cannot "apt-get failed"
fi

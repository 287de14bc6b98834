#!/usr/bin/env bash
# Cross-compiles the arm64 tests of some packages (GOARCH=arm64 CGO_ENABLED=0)
# and runs them under qemu-user in two CPU configurations, so that both
# assembly paths run:
#   max,sve512=on  SVE with 512-bit vectors (A64FX width): the SVE kernels
#   cortex-a72     Advanced SIMD only: the NEON kernels
# and first re-checks that every `WORD $0x... // mnemonic` in the arm64
# assembly is what GNU as makes of its mnemonic (when aarch64-linux-gnu-as is
# installed: apt-get install binutils-aarch64-linux-gnu).
#
# Usage: scripts/test-arm64.sh [PACKAGE...]   (default: ./aggr/, ./internal/rowk/, ./nn/ and ./quant/)
# Environment:
#   ARM64_CPUS       qemu -cpu values, space separated (default above)
#   ARM64_RUN        go test -run pattern (default: all tests)
#   ARM64_TESTFLAGS  extra go test flags (default: -short)
#   ARM64_WORDCHECK  assembly files whose WORDs are checked (default: aggr/asm_arm64.s quant/asm_arm64.s)
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
	pkgs=(./aggr/ ./internal/rowk/ ./nn/)
	if compgen -G 'quant/*.go' >/dev/null; then pkgs+=(./quant/); fi
fi
read -r -a cpus <<<"${ARM64_CPUS:-max,sve512=on cortex-a72}"
read -r -a testflags <<<"${ARM64_TESTFLAGS:--short}"
run=()
if [ -n "${ARM64_RUN:-}" ]; then run=(-run "$ARM64_RUN"); fi

qemu=$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)
if [ -z "$qemu" ]; then
	echo "test-arm64: SKIP: qemu-aarch64-static not installed (apt-get install qemu-user-static)"
	exit 0
fi

# check_words FILE: assemble every WORD's comment and compare the encodings.
check_words() {
	local f=$1 tmp
	tmp=$(mktemp -d)
	# lines: WORD $0xXXXXXXXX // mnemonic
	sed -n -E 's@^[[:space:]]*WORD[[:space:]]+\$0x([0-9a-fA-F]{8})[[:space:]]*//[[:space:]]*(.*[^[:space:]])[[:space:]]*$@\1\t\2@p' "$f" >"$tmp/words"
	if [ ! -s "$tmp/words" ]; then
		echo "test-arm64: $f has no WORD lines to check" >&2
		rm -rf "$tmp"
		return 1
	fi
	cut -f2 "$tmp/words" | sed 's/^/\t/' >"$tmp/a.s"
	if ! aarch64-linux-gnu-as -march=armv8.2-a+sve -o "$tmp/a.o" "$tmp/a.s"; then
		echo "test-arm64: $f: a WORD comment is not an instruction GNU as accepts" >&2
		rm -rf "$tmp"
		return 1
	fi
	aarch64-linux-gnu-objdump -d "$tmp/a.o" |
		sed -n -E 's/^[[:space:]]*[0-9a-f]+:[[:space:]]+([0-9a-f]{8})[[:space:]].*/\1/p' >"$tmp/got"
	local bad
	bad=$(paste "$tmp/words" "$tmp/got" | awk -F'\t' 'tolower($1) != $3 { printf "  WORD $0x%s // %s: GNU as gives 0x%s\n", $1, $2, $3 }')
	local n
	n=$(wc -l <"$tmp/words")
	rm -rf "$tmp"
	if [ -n "$bad" ]; then
		echo "test-arm64: $f: WORD encodings differ from their mnemonics:" >&2
		echo "$bad" >&2
		return 1
	fi
	echo "test-arm64: $f: $n WORD encodings match their mnemonics"
}

if command -v aarch64-linux-gnu-as >/dev/null && command -v aarch64-linux-gnu-objdump >/dev/null; then
	for f in ${ARM64_WORDCHECK:-aggr/asm_arm64.s quant/asm_arm64.s}; do
		[ -f "$f" ] && check_words "$f"
	done
else
	echo "test-arm64: aarch64-linux-gnu-as not found: WORD encodings not re-checked (apt-get install binutils-aarch64-linux-gnu)"
fi

status=0
for c in "${cpus[@]}"; do
	echo "test-arm64: qemu -cpu $c: ${pkgs[*]}"
	if ! GOARCH=arm64 CGO_ENABLED=0 go test -count=1 "${testflags[@]}" "${run[@]}" \
		-exec "$qemu -cpu $c" "${pkgs[@]}"; then
		status=1
	fi
done
exit $status

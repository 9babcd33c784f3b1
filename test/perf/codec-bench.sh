#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Codec benchmark report: native ns per encode+decode pair (median of repetitions) and callgrind
# instructions per pair (exact and repeatable), with the harness's own cost subtracted.
#
# usage: test/perf/codec-bench.sh [BUILD_DIR]     (default: build)
set -euo pipefail

build=${1:-build}
bench=$build/test/bench_codec
[ -x "$bench" ] || { echo "no $bench: build first (ninja -C $build)"; exit 1; }

echo "== native (median of 7 runs of 10M pairs) =="
"$bench" -n 10000000 -r 7

if ! command -v valgrind >/dev/null 2>&1; then
	echo "valgrind not installed: no instruction counts"
	exit 0
fi
n=100000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ir() {
	valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$1" --toggle-collect="pair_$1" \
		"$bench" -n $n -r 1 "$1" >/dev/null 2>"$tmp/vg.$1"
	# Events collected only inside pair_<case>; the first call (a check) adds one pair.
	awk -v n=$((n + 1)) '/^summary:/ { printf "%.1f", $2 / n }' "$tmp/cg.$1"
}
echo
echo "== callgrind instructions per encode+decode pair =="
base=$(ir empty)
printf "%-10s %10s %10s\n" case "Ir/pair" "net"
printf "%-10s %10s %10s\n" harness "$base" "-"
for c in v1_null v1_chunks v2_null v2_chunks; do
	v=$(ir $c)
	printf "%-10s %10s %10s\n" "$c" "$v" "$(awk -v a="$v" -v b="$base" 'BEGIN { printf "%.1f", a - b }')"
done

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Engine benchmark report: NULL-call round trip and rate between two pinned processes (native),
# and callgrind instructions per NULL call per side (exact and repeatable), split by library.
#
# usage: test/perf/xprt-bench.sh [BUILD_DIR] [--quick]
#   BUILD_DIR (default build-perf) is configured with -Ddebug=true if it does not exist, so that
#   callgrind can tell the libraries apart (release optimisation, debug information).
#   XPRT_BENCH_DEV=DEVARGS: the device of the callgrind table (default shm; mlx5model: the mlx5
#   driver's data path on the in-process queue model, test/rdev/mlx5_model_drv.c).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build-perf}
quick=""
[ "${2:-}" = "--quick" ] && quick="--quick"
if [ ! -d "$build" ]; then
	meson setup "$build" "$top" -Ddebug=true -Dtests=true >/dev/null
fi
ninja -C "$build" test/bench_xprt >/dev/null
bench=$build/test/bench_xprt

echo "== native: two processes, pinned =="
"$bench" $quick

if ! command -v valgrind >/dev/null 2>&1; then
	echo "valgrind not installed: no instruction counts"
	exit 0
fi
n=20000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo
dev=${XPRT_BENCH_DEV:-shm}
echo "== callgrind: instructions per call, client and server polled in turn on one core ($dev) =="
printf "%-20s %8s %8s %8s %8s %8s %8s\n" side engine chunk driver dpdk libc total
# (depth, READ size or -, r: reverse direction or -, m: registration per call or -, v2: version 2)
for run in "1" "64" "64 16" "64 65536" "64 65536 - m" "1 - r" "16 - r" "1 - - - v2" "64 - - - v2"; do
set -- $run
depth=$1 rd=${2:-} rev=${3:-} mrs=${4:-} v2=${5:-}
[ "$rd" = - ] && rd=""
[ "$rev" = - ] && rev=""
[ "$mrs" = - ] && mrs=""
for side in client server; do
	label=$side/$depth${rd:+ READ $rd}${mrs:+ reg}${v2:+ v2}
	if [ -n "$rev" ]; then
		# The reverse direction: the requester is the server's poller, the responder the
		# client's (bench_xprt --reverse).
		[ $side = client ] && label="requester/$depth rev" || label="responder/$depth rev"
	fi
	valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$tmp/cg.$side" \
		"$bench" --dev "$dev" --loopback $n --depth $depth --side $side ${rd:+--read $rd} ${rev:+--reverse} \
		${mrs:+--reg-per-call} ${v2:+--rpcrdma-version 2} \
		>/dev/null 2>"$tmp/vg.$side"
	callgrind_annotate --auto=no --threshold=100 "$tmp/cg.$side" 2>/dev/null |
		awk -v n=$n -v side="$label" '
		/^ *[0-9,]+ +\(/ && /:/ {
			ir = $1; gsub(",", "", ir)
			if ($0 ~ /PROGRAM TOTALS/) next
			if ($0 ~ /lib\/(xprt|proto|oncrpc|xdr)\//) e += ir
			else if ($0 ~ /lib\/(chunk|mem)\//) c += ir
			else if ($0 ~ /(drivers\/|lib\/rdev\/)/) d += ir
			else if ($0 ~ /dpdk|librte/) p += ir
			else if ($0 ~ /libc|ld-linux|nptl|sysdeps/) l += ir
			else o += ir
			t += ir
		}
		END { printf "%-20s %8.0f %8.0f %8.0f %8.0f %8.0f %8.0f\n", side, e/n, c/n, d/n, p/n, l/n, t/n }'
done
done
echo "(side/N: N calls outstanding, NULL calls unless READ L: READ of L bytes, its 4-byte argument"
echo " encoded, its results built by the test program as an mbuf chain, sent inline below 1 KiB,"
echo " else written into a write chunk: a memory window bound and invalidated per call on shm,"
echo " or, with \"reg\", a registration made and removed per call (--reg-per-call);"
echo " requester/responder N rev: the server's NULL calls to its client (RFC 8167), counted on the"
echo " side that calls (the server's poller) and the side that answers (the client's);"
echo " engine: lib/xprt + lib/proto + lib/oncrpc + lib/xdr;"
echo " chunk: lib/chunk + lib/mem;"
echo " driver: drivers/ + lib/rdev; dpdk: inline DPDK code outside the functions above)"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# Instructions the mlx5 driver's data path spends per work queue entry posted and per completion
# polled, on the queue model (test/perf/bench_mlx5_dp.c), from callgrind: exact and repeatable.
# Inclusive of what the functions call (memcpy of inline data); the model's own work is not
# counted.
#
# usage: test/perf/mlx5-dp-bench.sh [BUILD_DIR]   (default build-perf, configured -Ddebug=true)
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build-perf}
if [ ! -d "$build" ]; then
	meson setup "$build" "$top" -Ddebug=true -Dtests=true >/dev/null
fi
ninja -C "$build" test/bench_mlx5_dp >/dev/null
bench=$build/test/bench_mlx5_dp
command -v valgrind >/dev/null || { echo "valgrind not installed"; exit 77; }
n=20000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf "%-26s %10s %10s %10s\n" "op, bytes, burst" "per WQE" "per recv" "per CQE"
# One run per function counted: callgrind's total is then that function's, inclusive.
count() { # FUNCTION OP LEN BURST -> total instructions in FUNCTION
	valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$tmp/cg" \
		--toggle-collect="$1" "$bench" --op "$2" --len "$3" --burst "$4" --iters $n \
		>"$tmp/out" 2>"$tmp/vg"
	callgrind_annotate --auto=no "$tmp/cg" 2>/dev/null |
		awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
}
for run in "send 32 1" "send 32 16" "send 4096 1" "send 4096 16" "write 4096 1" \
	"write 4096 16" "read 4096 16" "write 64 16" "bind 4096 2" "bind 4096 16"; do
	set -- $run
	s=$(count mlx5_post_send "$@")
	p=$(count mlx5_poll_cq "$@")
	r=-
	[ "$1" = send ] && r=$(count mlx5_post_recv "$@")
	read -r wqes recvs cqes < <(sed -E 's/.*wqes ([0-9]+) recvs ([0-9]+) cqes ([0-9]+).*/\1 \2 \3/' "$tmp/out")
	awk -v s="$s" -v r="$r" -v p="$p" -v w="$wqes" -v rv="$recvs" -v c="$cqes" \
		-v label="$1 $2 B x$3" 'BEGIN {
			printf "%-26s %10.1f %10s %10.1f\n", label, s / w,
				(r == "-" ? "-" : sprintf("%.1f", r / rv)), p / c }'
done
echo "(per WQE: mlx5_post_send's instructions over the work requests it posted, the doorbell"
echo " once per burst and the copy of inline data included; per recv: mlx5_post_recv's over"
echo " the receives; per CQE: mlx5_poll_cq's over the completions it returned, the"
echo " consumer-index update included)"

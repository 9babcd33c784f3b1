#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# System calls per RPC on the data path: rpcr-perf's ECHO of 4 KiB with its argument in a read
# chunk and its result in a write chunk (DDP threshold 1 KiB), one call at a time, under
# `strace -f -c`, measured twice (1 s and 3 s of traffic) so that set-up and teardown cancel
# out: each system call's count difference over the calls' difference (rpcr-perf's own count of
# the calls it sent, from its JSON). Lines with fewer than 0.001 per call are left out; a count
# that does not grow with the calls (timers, the clock where it is no vDSO call, polling of the
# control sockets) shows as noise, even below zero, and is named as such.
#
# usage: test/perf/syscalls.sh BUILD_DIR ROLE [rpcr-perf options...]
#   ROLE: --loopback (shm: both processes are traced), or client (a server running elsewhere:
#   give --dev and --addr), e.g.
#   test/perf/syscalls.sh build --loopback
#   test/perf/syscalls.sh build --loopback --reg-per-call
#   test/perf/syscalls.sh build client --dev ibverbs:dev=rxe_a --addr 10.77.1.2:20092
set -eu
build=$1
shift
perf=$build/apps/rpcr-perf/rpcr-perf
[ -x "$perf" ] || { echo "syscalls.sh: no $perf" >&2; exit 2; }
command -v strace >/dev/null || { echo "syscalls.sh: strace not installed" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for s in 1 3; do
	strace -f -c -o "$tmp/st$s" "$perf" "$@" bw --sizes 4K --procs echo --baseline none \
		--threshold 1024 --seconds $s --warmup 0.1 --quiet --json "$tmp/p$s.json" \
		>"$tmp/out$s" 2>&1 || { cat "$tmp/out$s"; exit 1; }
done
calls() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['client']['calls_sent'])" "$1"; }
c1=$(calls "$tmp/p1.json")
c3=$(calls "$tmp/p3.json")
echo "rpcr-perf $* ECHO 4 KiB (read and write chunks): $((c3 - c1)) calls between the runs"
# strace -c: "% time seconds usecs/call calls [errors] syscall"
table() { awk '$1 ~ /^[0-9.]+$/ && NF >= 5 { print $NF, $4 }' "$1" | sort; }
join -a 1 -a 2 -e 0 -o 0,1.2,2.2 <(table "$tmp/st1") <(table "$tmp/st3") |
	awk -v n=$((c3 - c1)) '
	$1 != "total" {
		d = ($3 - $2) / n
		if (d >= 0.001) { printf "  %-16s %8.3f per call\n", $1, d; t += d }
		else if (d <= -0.001) printf "  %-16s %8.3f (fewer in the longer run: not per call)\n", $1, d
	}
	END { printf "  %-16s %8.3f per call\n", "all of them", t }'

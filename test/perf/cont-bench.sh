#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# RPC-over-RDMA version 2's message continuation against the chunks it replaces, same machine,
# same run: rpcr-perf --loopback (shm), version 2, nothing DDP-eligible (threshold 64 KiB), so
# that a READ's results and an ECHO's data travel inside the RPC messages. With --cont-max 56K
# a reply longer than a Send comes in several Sends (continuation) and a call longer than a
# Send goes in several; with --cont-max none the reply goes through a reply chunk (RDMA Write)
# and the call through a position-zero read chunk (RDMA Read). The two alternate run by run
# (ABBA, ROUNDS rounds); per point, the median and the best of the runs of each, and the ratio
# continuation / chunk (bytes per second: above 1, continuation is faster). The size policy,
# rpcr_clnt_conf::cont_max's default, follows these figures (doc/rpcrdma-v2.md "Continuation").
#
# usage: test/perf/cont-bench.sh [BUILD_DIR] [ROUNDS]      (defaults: build, 4)
# Environment: RPCR_PERF_ARGS (extra rpcr-perf options, e.g. "--seconds 1").
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
rounds=${2:-4}
perf=$build/apps/rpcr-perf/rpcr-perf
[ -x "$perf" ] || { echo "no $perf: build first"; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# (READ: results of 8 to 56 KiB, the call small; ECHO: a call of 6 KiB, which fits a message
# buffer, both ways. 56 KiB is about the longest message a reassembly buffer holds.)
args=(--loopback --baseline none -q --seconds 0.5 --warmup 0.2 bw --threshold 65536
	--rpcrdma-version 2 ${RPCR_PERF_ARGS:-})
points=(--procs read,echo --sizes 6K,8K,16K,32K,56K)
for r in $(seq 1 "$rounds"); do
	order="cont chunk"
	[ $((r % 2)) -eq 0 ] && order="chunk cont"
	for m in $order; do
		if [ "$m" = cont ]; then cm=56K; else cm=none; fi
		"$perf" "${args[@]}" "${points[@]}" --cont-max $cm --json "$tmp/$m-$r.json" \
			>"$tmp/$m-$r.txt" 2>&1 || {
			echo "rpcr-perf --cont-max $cm round $r failed:"
			tail -5 "$tmp/$m-$r.txt"
			exit 1
		}
	done
	echo "round $r/$rounds done" >&2
done
python3 - "$tmp" "$rounds" <<'EOF'
import json, statistics, sys

tmp, rounds = sys.argv[1], int(sys.argv[2])
runs = {m: [json.load(open("%s/%s-%d.json" % (tmp, m, r))) for r in range(1, rounds + 1)]
        for m in ("cont", "chunk")}
for m in runs:
    for d in runs[m]:
        if d["config"].get("rdma_version") != 2 or d["errors"]["rpcr"]["calls"] != 0:
            sys.exit("%s: a run spoke version %s or failed calls" % (m, d["config"].get("rdma_version")))
rows = {}
for m in runs:
    for d in runs[m]:
        for p in d["bw"]:
            if p.get("rpcr"):
                rows.setdefault((p["proc"], p["size"]), {"cont": [], "chunk": []})[m].append(
                    p["rpcr"]["bytes_per_s"] / 1e9)
print("Continuation / chunk, rpcr-perf --loopback (shm), version 2, bytes per second, medians of "
      "%d alternating runs each" % rounds)
print("%-14s %10s %10s %7s   %10s %10s %7s" % ("point", "cont med", "chunk med", "ratio",
                                              "cont best", "chunk best", "ratio"))
for k in sorted(rows, key=lambda k: (k[0], k[1])):
    v = rows[k]
    mc, mk = statistics.median(v["cont"]), statistics.median(v["chunk"])
    bc, bk = max(v["cont"]), max(v["chunk"])
    print("%-14s %10.3f %10.3f %7.3f   %10.3f %10.3f %7.3f  (GB/s)"
          % ("%s %d" % k, mc, mk, mc / mk, bc, bk, bc / bk))
EOF

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# RPC-over-RDMA version 1 against version 2 on the same machine in the same run: rpcr-perf
# --loopback (shm) with the same points for each version, the versions alternating run by run
# (ROUNDS rounds, in ABBA order: v1 v2, v2 v1, ...) so that a machine whose speed drifts or jumps
# between two states (shared 2-core VMs do) weighs on both alike; per point and version, the
# median and the best of the runs, and version 2's ratio to version 1 for each (latency: p50;
# bandwidth: bytes/s; rate: calls/s). On a machine that jumps between states the best-of-runs
# ratio is the steadier one; callgrind's instruction counts (xprt-bench.sh) are steadier still.
#
# usage: test/perf/versions-bench.sh [BUILD_DIR] [ROUNDS]      (defaults: build, 5)
# Environment: RPCR_PERF_ARGS (extra rpcr-perf options, e.g. "--seconds 1").
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
rounds=${2:-5}
perf=$build/apps/rpcr-perf/rpcr-perf
[ -x "$perf" ] || { echo "no $perf: build first"; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# (Points: NULL and ECHO of 64 B and 4 KiB one at a time; READ of 64 KiB and 1 MiB through a
# write chunk; NULL rates at 1 and 16 outstanding on one connection.)
args=(--loopback --baseline none -q --seconds 0.5 --warmup 0.2 lat bw rate --lat-sizes 0,64,4096
	--sizes 64K,1M --procs read --outstanding 1,16 --conns 1 ${RPCR_PERF_ARGS:-})
for r in $(seq 1 "$rounds"); do
	# (ABBA: the order alternates, so that a slowdown that comes every other run does not
	# fall on one version only.)
	order="1 2"
	[ $((r % 2)) -eq 0 ] && order="2 1"
	for v in $order; do
		"$perf" "${args[@]}" --rpcrdma-version $v --json "$tmp/v$v-$r.json" >"$tmp/v$v-$r.txt" 2>&1 || {
			echo "rpcr-perf version $v round $r failed:"
			tail -5 "$tmp/v$v-$r.txt"
			exit 1
		}
	done
	echo "round $r/$rounds done" >&2
done
python3 - "$tmp" "$rounds" <<'EOF'
import json, statistics, sys

tmp, rounds = sys.argv[1], int(sys.argv[2])
runs = {v: [json.load(open("%s/v%d-%d.json" % (tmp, v, r))) for r in range(1, rounds + 1)]
        for v in (1, 2)}
for v in (1, 2):
    for d in runs[v]:
        if d["config"].get("rdma_version") != v or d["errors"]["rpcr"]["calls"] != 0:
            sys.exit("version %d: a run spoke %s or failed calls" % (v, d["config"].get("rdma_version")))


def key(p):
    return (p["proc"], p["size"], p.get("connections", 1), p.get("outstanding", 1))


def figures(kind, get):
    rows = {}
    for v in (1, 2):
        for d in runs[v]:
            for p in d[kind]:
                if p.get("rpcr"):
                    rows.setdefault(key(p), {1: [], 2: []})[v].append(get(p["rpcr"]))
    return rows


print("RPC-over-RDMA version 2 / version 1, rpcr-perf --loopback (shm), medians of %d "
      "alternating runs each" % rounds)
print("%-26s %9s %9s %7s   %9s %9s %7s" % ("point", "v1 med", "v2 med", "v2/v1", "v1 best",
                                            "v2 best", "v2/v1"))
for kind, get, unit, best in (
        ("lat", lambda r: r["latency_us"]["p50"], "us p50", min),
        ("bw", lambda r: r["bytes_per_s"] / 1e9, "GB/s", max),
        ("rate", lambda r: r["calls_per_s"] / 1e6, "M calls/s", max)):
    for k, v in sorted(figures(kind, get).items()):
        m1, m2 = statistics.median(v[1]), statistics.median(v[2])
        b1, b2 = best(v[1]), best(v[2])
        name = "%s %s %s B x%d" % (kind, k[0], k[1], k[3])
        print("%-26s %9.3f %9.3f %7.3f   %9.3f %9.3f %7.3f  (%s)"
              % (name, m1, m2, m2 / m1 if m1 else 0, b1, b2, b2 / b1 if b1 else 0, unit))
EOF

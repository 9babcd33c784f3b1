#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# rpcr against perftest on the same soft-RoCE pair, in the same boot (perf-rxe.sh's files):
#   NULL round trip p50 / (2 x ib_send_lat's typical one-way time: one RPC is two Sends)
#   READ 1 MiB bytes/s / ib_write_bw's average bytes/s (both 8 outstanding)
# Prints both ratios (the goals: at most 1.3, at least 0.8). Under emulation: reported, not
# enforced; fails only when a figure is missing. A perftest figure that is not a finite positive
# number (ib_send_lat has printed "inf") gives no ratio, said so, rather than a ratio of 0.
#
# usage: perf-ratios.sh DIR
set -u
d=$1
sl=$(awk '/^ *2 +[0-9]+ /{print $5}' "$d/ibsl.txt")
wb=$(awk '/^ *1048576 +[0-9]+ /{print $4}' "$d/ibwb.txt")
read -r p50 rbw < <(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
lat = d["lat"][0]["rpcr"]["latency_us"]["p50"]
bw = d["bw"][0]["rpcr"]["bytes_per_s"]
print(lat, bw)' "$d/perf-rxe.json") || { echo "no rpcr-perf figures"; exit 1; }
[ -n "$sl" ] && [ -n "$wb" ] && [ -n "$p50" ] || { echo "missing figures"; exit 1; }
finite() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v x="$1" 'BEGIN {exit !(x > 0)}'; }
if finite "$sl"; then
	awk -v sl="$sl" -v p50="$p50" 'BEGIN {
		printf "NULL round trip: rpcr p50 %.2f us, ib_send_lat 2 x %.2f = %.2f us: ratio %.2f (goal <= 1.3)\n", p50, sl, 2 * sl, p50 / (2 * sl)
	}'
else
	printf "NULL round trip: rpcr p50 %.2f us, ib_send_lat gave no finite figure (%s): no ratio\n" "$p50" "$sl"
fi
if finite "$wb"; then
	awk -v wb="$wb" -v rbw="$rbw" 'BEGIN {
		printf "1 MiB: rpcr READ %.1f MB/s, ib_write_bw %.1f MB/s: ratio %.2f (goal >= 0.8)\n", rbw / 1e6, wb, rbw / 1e6 / wb
	}'
else
	printf "1 MiB: rpcr READ %.1f MB/s, ib_write_bw gave no finite figure (%s): no ratio\n" "$(awk -v r="$rbw" 'BEGIN {print r / 1e6}')" "$wb"
fi

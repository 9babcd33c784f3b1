#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Where the time of a call goes, natively, at many connections and at few: bench_scale's two
# rate runs (1000 x 1 and 4 x 250 by default) under perf's sampling of CPU time (cpu-clock: a
# software event, so it works in a VM without hardware counters), each run's samples taken
# from its own window (bench_scale's SCALE_MARKS), as nanoseconds a call per function, side by
# side, sorted by how much more a call costs at many connections.
#
# Callgrind (xprt-bench.sh, doc/xprt.md) counts instructions and simulated misses; this shows
# what they cost on this machine, stalls included. A sample lands on the instruction after
# the one that waited (skid): perf annotate on the function tells which load that was.
#
# usage: test/perf/scale-profile.sh [BUILD_DIR] [SECONDS] [bench_scale options...]
#   BUILD_DIR (default build-perf) is configured with -Ddebug=true if it does not exist.
#   SCALE_CPU (default 0) and the other SCALE_* variables of bench_scale apply.
#   PROFILE_KEEP=DIR keeps perf.data and bench_scale's output there.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build-perf}
secs=${2:-4}
shift $(($# > 2 ? 2 : $#))
if ! command -v perf >/dev/null 2>&1; then
	echo "perf is not installed (Debian: apt-get install linux-perf): no profile"
	exit 0
fi
if [ ! -d "$build" ]; then
	meson setup "$build" "$top" -Ddebug=true -Dtests=true >/dev/null
fi
ninja -C "$build" test/bench_scale >/dev/null
tmp=${PROFILE_KEEP:-$(mktemp -d)}
mkdir -p "$tmp"
[ -z "${PROFILE_KEEP:-}" ] && trap 'rm -rf "$tmp"' EXIT
hz=999

SCALE_MARKS=1 SCALE_RATE_ONLY=1 SCALE_CPU=${SCALE_CPU:-0} \
	perf record -q -k CLOCK_MONOTONIC -e cpu-clock -F $hz -o "$tmp/perf.data" -- \
	"$build/test/bench_scale" --seconds "$secs" "$@" >"$tmp/out" 2>"$tmp/err" || {
	echo "bench_scale failed:"
	tail -20 "$tmp/err" "$tmp/out"
	exit 1
}
grep -v '^mark ' "$tmp/out"
echo

# One profile per measured run: "mark N x D: t0 t1 CALLS calls".
runs=()
while read -r _ n _ d t0 t1 calls _; do
	label="${n}x${d%:}"
	perf report -q -i "$tmp/perf.data" --time "$t0,$t1" --no-children -n --sort sym \
		--stdio 2>/dev/null >"$tmp/prof.$label" || true
	echo "$label $calls" >>"$tmp/runs"
	runs+=("$label")
done < <(grep '^mark ' "$tmp/out")
if [ ${#runs[@]} -lt 1 ]; then
	echo "no measured run marked: bench_scale too old?"
	exit 1
fi

python3 - "$tmp" "$hz" "${runs[@]}" <<'EOF'
import re, sys

tmp, hz, runs = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
calls = dict(l.split() for l in open(f"{tmp}/runs"))
ns = {}  # run -> symbol -> ns a call
for r in runs:
    per = {}
    for line in open(f"{tmp}/prof.{r}"):
        m = re.match(r"\s*([\d.]+)%\s+(\d+)\s+\[(.)\]\s+(.*\S)", line)
        if not m:
            continue
        sym = m.group(4) if m.group(3) != "k" else "[kernel] " + m.group(4)
        if re.match(r"0x[0-9a-f]+$", sym):
            sym = "(unnamed)"
        per[sym] = per.get(sym, 0.0) + int(m.group(2)) * 1e9 / hz / int(calls[r])
    ns[r] = per
syms = set().union(*(ns[r].keys() for r in runs))
first, last = runs[0], runs[-1]
rows = sorted(syms, key=lambda s: ns[first].get(s, 0) - ns[last].get(s, 0), reverse=True)
print("ns a call by function (samples of CPU time at %d Hz; a sample is %.2f ms)" % (hz, 1e3 / hz))
print("%-36s" % "function" + "".join("%12s" % r for r in runs) +
      ("%12s" % "difference" if len(runs) > 1 else ""))
for s in rows[:30]:
    v = [ns[r].get(s, 0.0) for r in runs]
    if max(v) < 1:
        continue
    print("%-36s" % s[:36] + "".join("%12.0f" % x for x in v) +
          ("%12.0f" % (v[0] - v[-1]) if len(runs) > 1 else ""))
tot = [sum(ns[r].values()) for r in runs]
print("%-36s" % "all" + "".join("%12.0f" % x for x in tot) +
      ("%12.0f" % (tot[0] - tot[-1]) if len(runs) > 1 else ""))
EOF

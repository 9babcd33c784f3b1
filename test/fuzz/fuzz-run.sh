#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Run one libFuzzer target for a bounded time over its seed corpus (the golden messages plus
# test/fuzz/corpus/<target> when present) and report executions. Exit non-zero on any crash,
# leak, timeout or undocumented error.
#
# usage: fuzz-run.sh BUILD_DIR TARGET SECONDS [WORK_DIR]
#   TARGET: v1 v2 xchar cm call reply authsys conf_req conf_reply xprt_svc xprt_clnt xprt_svc_v2
#           xprt_clnt_v2 (the engine targets start from the version 1 seeds; *_v2 from version
#           2's)
set -euo pipefail

build=$1 target=$2 seconds=${RPCR_FUZZ_SECONDS:-$3}
work=${4:-$build/fuzz-work}
src=$(cd "$(dirname "$0")" && pwd)

mkdir -p "$work"
"$build/test/gen_corpus" "$work/seeds" >/dev/null
mkdir -p "$work/corpus/$target" "$work/artifacts"
seeds=$target
case $target in xprt_*_v2) seeds=v2 ;; xprt_*) seeds=v1 ;; esac
dirs=("$work/corpus/$target" "$work/seeds/$seeds")
[ -d "$src/corpus/$target" ] && dirs+=("$src/corpus/$target")

log=$work/$target.log
set +e
"$build/test/fuzz_$target" -max_total_time="$seconds" -print_final_stats=1 \
	-timeout=10 -rss_limit_mb=2048 -artifact_prefix="$work/artifacts/$target-" \
	"${dirs[@]}" >"$log" 2>&1
rc=$?
set -e
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
if [ $rc -ne 0 ]; then
	tail -40 "$log"
	echo "fuzz_$target: FAILED (exit $rc) after ${execs:-?} executions; artifacts in $work/artifacts"
	exit 1
fi
echo "fuzz_$target: ${execs:-0} executions in ${seconds}s, 0 crashes"

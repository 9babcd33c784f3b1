#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# A longer fuzzing campaign than CI's 20 s per target: every libFuzzer target (or those named)
# for SECONDS each, JOBS at a time, on a corpus kept between campaigns, so that runs add up.
# Each run is appended to a ledger (DIR/ledger.tsv: campaign start, target, seconds, executions,
# result);
# the summary gives, per target, this campaign's executions and everything the ledger holds,
# against the goal of 10^7 executions per decoder. Crashes leave their input in DIR/artifacts
# and make the exit status 1.
#
# usage: usertools/rpcr-fuzz.sh [-t SECONDS] [-j JOBS] [-d DIR] [TARGET ...]
#   -t SECONDS  per target (default 300)
#   -j JOBS     targets run at once (default: the number of CPUs)
#   -d DIR      corpus, artifacts and ledger (default $RPCR_FUZZ_DIR, else ~/.cache/rpcr-fuzz)
#   TARGET      v1 v2 xchar cm call reply authsys conf_req conf_reply xprt_svc xprt_clnt xprt_svc_v2 xprt_clnt_v2
#               (default: all)
# Builds build-fuzz (clang, ASan+UBSan, libFuzzer) first if it is not there, as rpcr-test.sh does.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
all="v1 v2 xchar cm call reply authsys conf_req conf_reply xprt_svc xprt_clnt xprt_svc_v2 xprt_clnt_v2"
seconds=300
jobs=$(nproc 2>/dev/null || echo 1)
dir=${RPCR_FUZZ_DIR:-${HOME:-/tmp}/.cache/rpcr-fuzz}
while getopts "t:j:d:h" o; do
	case $o in
	t) seconds=$OPTARG ;;
	j) jobs=$OPTARG ;;
	d) dir=$OPTARG ;;
	*) sed -n '5,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
targets=${*:-$all}
for t in $targets; do
	case " $all " in *" $t "*) ;; *) echo "rpcr-fuzz: no target $t (targets: $all)" >&2; exit 2 ;; esac
done
case $seconds in '' | *[!0-9]*) echo "rpcr-fuzz: -t takes whole seconds" >&2; exit 2 ;; esac
case $jobs in '' | *[!0-9]* | 0) echo "rpcr-fuzz: -j takes a positive number" >&2; exit 2 ;; esac

build=$top/build-fuzz
if [ ! -f "$build/build.ninja" ]; then
	CC=clang meson setup "$build" "$top" -Dbuildtype=debugoptimized -Dwerror=true \
		-Db_sanitize=address,undefined -Db_lundef=false -Dfuzz=true >/dev/null || exit 1
fi
ninja -C "$build" >/dev/null || { echo "rpcr-fuzz: build-fuzz does not build"; exit 1; }
mkdir -p "$dir" || exit 1
ledger=$dir/ledger.tsv
[ -f "$ledger" ] || printf 'campaign\ttarget\tseconds\texecutions\tresult\n' >"$ledger"
campaign=$(date -u +%FT%TZ)

echo "rpcr-fuzz: $(echo $targets | wc -w) targets, ${seconds}s each, $jobs at a time, in $dir"
run() { # target
	local t=$1 out rc execs
	out=$(UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		"$top/test/fuzz/fuzz-run.sh" "$build" "$t" "$seconds" "$dir" 2>&1)
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/$t.log" | tail -1)
	printf '%s\t%s\t%s\t%s\t%s\n' "$campaign" "$t" "$seconds" "${execs:-0}" \
		"$([ $rc -eq 0 ] && echo ok || echo crash)" >>"$ledger"
	echo "$out" | tail -1
	return $rc
}
failed=0
running=0
pids=()
for t in $targets; do
	run "$t" &
	pids+=($!)
	running=$((running + 1))
	if [ $running -ge "$jobs" ]; then
		wait -n || failed=$((failed + 1))
		running=$((running - 1))
	fi
done
while [ $running -gt 0 ]; do
	wait -n || failed=$((failed + 1))
	running=$((running - 1))
done

echo
printf '%-12s %16s %16s %8s  %s\n' target "this campaign" "all campaigns" crashes "goal 1e7"
for t in $targets; do
	awk -F'\t' -v t="$t" -v c="$campaign" '
		NR > 1 && $2 == t { all += $4; if ($5 != "ok") bad++; if ($1 == c) now += $4 }
		END { printf "%-12s %16.0f %16.0f %8d  %s\n", t, now, all, bad,
			(all >= 1e7 ? "met" : "not yet") }' "$ledger"
done
echo "ledger: $ledger; crash inputs: $dir/artifacts"
[ $failed -eq 0 ]

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# Run every test suite, in three builds, and print "N passed, N failed" last:
#   build        the release build rpcr-setup.sh made: unit, tshark, apps, tools and link suites
#                (link: the ibverbs driver's rdma-core linkage, and a -Dibverbs_link=dlopen tree
#                under build/ibverbs-dlopen)
#   build-asan   gcc, ASan + UBSan, warnings as errors: unit, tshark and apps suites
#   build-fuzz   clang, ASan + UBSan, warnings as errors, libFuzzer: unit suite, and every fuzz
#                target for RPCR_FUZZ_SECONDS seconds (default 20)
# plus the style check (clang-format), and, run as root, the soft-RoCE suite (vm): a QEMU guest
# with real verbs (rxe) and the Linux kernel's NFS/RDMA server, in which the ibverbs driver's
# conformance, the engine end to end, the knfsd interop, the tshark wire check and the perftest
# ratios run (test/vm/vm-suite.sh; qemu and the guest kernel are installed on first use; about
# two minutes). Exit status is non-zero when anything failed.
#
# usage: usertools/rpcr-test.sh [--quick] [--vm | --no-vm]
#   --quick  the release build's suites only (and the vm suite if asked with --vm)
#   --vm     the vm suite even with --quick (it needs root)
#   --no-vm  not the vm suite
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
quick=0
vm=auto
for a in "$@"; do
	case $a in
	--quick) quick=1 ;;
	--vm) vm=1 ;;
	--no-vm) vm=0 ;;
	*) echo "rpcr-test: unknown option $a" >&2; exit 2 ;;
	esac
done
if [ "$vm" = auto ]; then
	vm=0
	if [ $quick -eq 1 ]; then
		:
	elif [ "$(id -u)" -eq 0 ]; then
		vm=1
	else
		echo "rpcr-test: not root: no soft-RoCE (vm) suite (it boots a QEMU guest as root)"
	fi
fi

passed=0
failed=0
failures=()

# meson's testlog.json has one JSON object per test; count them.
count() { # dir [log name]
	local log=$1/meson-logs/${2:-testlog}.json p f
	[ -f "$log" ] || return 0
	p=$(grep -c '"result": "OK"' "$log" || true)
	f=$(grep -c -E '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log" || true)
	passed=$((passed + p))
	failed=$((failed + f))
	if [ "$f" -gt 0 ]; then
		failures+=("$(grep -E '"result": "(FAIL|TIMEOUT|ERROR)"' "$log" |
			sed -E 's/.*"name": "([^"]*)".*/\1/' | sed "s|^|$1: |")")
	fi
}

step() { # name, command...
	local name=$1
	shift
	echo "== rpcr-test: $name"
	if ! "$@"; then
		echo "== rpcr-test: $name FAILED"
		failed=$((failed + 1))
		failures+=("$name")
		return 1
	fi
}

configure() { # dir, meson options...
	local dir=$1
	shift
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" "$@" >"$top/$dir.setup.log" 2>&1 || { cat "$top/$dir.setup.log"; return 1; }
	fi
	ninja -C "$dir"
}

run_suites() { # dir, suites...
	local dir=$1 args=()
	shift
	for s in "$@"; do args+=(--suite "$s"); done
	rm -f "$dir/meson-logs/testlog.json"
	meson test -C "$dir" --print-errorlogs --num-processes 2 "${args[@]}"
	count "$dir"
}

if step "build (release)" configure build; then
	run_suites build unit tshark apps tools style link
	if [ $vm -eq 1 ]; then
		rm -f build/meson-logs/testlog-vm.json
		meson test -C build --setup vm --suite vm --print-errorlogs
		count build testlog-vm
	fi
fi

if [ $quick -eq 0 ]; then
	if step "build-asan (gcc, ASan+UBSan, -Werror)" configure build-asan \
		-Dbuildtype=debugoptimized -Dwerror=true -Db_sanitize=address,undefined \
		-Db_lundef=false; then
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 run_suites build-asan unit tshark apps
	fi
	if step "build-fuzz (clang, ASan+UBSan, libFuzzer, -Werror)" env CC=clang \
		bash -c "$(declare -f configure); top='$top'; configure build-fuzz \
		-Dbuildtype=debugoptimized -Dwerror=true -Db_sanitize=address,undefined \
		-Db_lundef=false -Dfuzz=true"; then
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 run_suites build-fuzz unit fuzz
	fi
fi

echo
if [ -f build-fuzz/meson-logs/testlog.txt ]; then
	echo "Fuzzing (RPCR_FUZZ_SECONDS=${RPCR_FUZZ_SECONDS:-20} per target):"
	grep -h -E '^fuzz_[a-z0-9_]+: ' build-fuzz/meson-logs/testlog.txt | sed 's/^/  /' || true
fi
if [ $vm -eq 1 ] && [ -f build/meson-logs/testlog-vm.txt ]; then
	echo "Soft-RoCE suite (test/vm, one guest boot):"
	grep -h -E '^(ok|FAIL) |^    (capture|NULL round trip|1 MiB):' \
		build/meson-logs/testlog-vm.txt | sed 's/^/  /' || true
fi
if [ $failed -ne 0 ]; then
	echo "Failed:"
	printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]

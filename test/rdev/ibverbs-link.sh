#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# The ibverbs driver's link modes (-Dibverbs_link, drivers/rdev/ibverbs/vrb_glue.h):
#   - this build's librpcr.so: a shared build NEEDs libibverbs.so.1 and librdmacm.so.1; a dlopen
#     build NEEDs neither and leaves no ibv_/rdma_ symbol undefined;
#   - a dlopen build (this one, or else a second tree, BUILD/ibverbs-dlopen, configured here once
#     and built for librpcr.so and the test programs only): its programs do not link rdma-core;
#     test_vrb_glue, with LD_LIBRARY_PATH at an empty directory, finds rdma-core on the standard
#     path and fills the glue table; pointed by RPCR_RDMA_CORE_DIR at no library, at a
#     libibverbs.so.1 without verbs, or at libibverbs without librdmacm, it gets no ibverbs device,
#     one log line naming what is missing, and a working shm driver; pointed at both, it works.
#
# usage: test/rdev/ibverbs-link.sh BUILD_DIR SOURCE_DIR MODE      (MODE: BUILD_DIR's ibverbs_link)
set -u -o pipefail

build=$1 src=$2 mode=$3
# meson test points LD_LIBRARY_PATH at the build tree; the programs below must find rdma-core
# only where the system (or RPCR_RDMA_CORE_DIR) says.
unset LD_LIBRARY_PATH
fails=0
ok() { echo "ok   $*"; }
fail() {
	echo "FAIL $*"
	fails=$((fails + 1))
}

# The DT_NEEDED entries of ELF file $1 that are rdma-core's.
rdma_needed() {
	readelf -d "$1" | sed -n -E 's/.*\(NEEDED\).*\[(libibverbs|librdmacm)(\.so[^]]*)\]/\1\2/p' |
		sort | tr '\n' ' '
}

check_lib() { # tree mode
	local lib=$1/librpcr.so need undef
	need=$(rdma_needed "$lib")
	if [ "$2" = shared ]; then
		if [ "$need" = "libibverbs.so.1 librdmacm.so.1 " ]; then
			ok "$lib ($2) needs $need"
		else
			fail "$lib ($2) needs '$need', not libibverbs.so.1 and librdmacm.so.1"
		fi
		return
	fi
	undef=$(nm -D --undefined-only "$lib" | awk '$2 ~ /^(ibv|rdma)_/ { print $2 }' | tr '\n' ' ')
	if [ -z "$need" ] && [ -z "$undef" ]; then
		ok "$lib ($2) needs nothing of rdma-core"
	else
		fail "$lib ($2) needs '$need', leaves '$undef' undefined"
	fi
}

check_lib "$build" "$mode"

if [ "$mode" = dlopen ]; then
	dl=$build
else
	dl=$build/ibverbs-dlopen
	if [ ! -f "$dl/build.ninja" ]; then
		# Unoptimised: it is compiled for this check only.
		if ! meson setup "$dl" "$src" -Dibverbs_link=dlopen -Dtests=true -Dbuildtype=debug \
			>"$build/ibverbs-dlopen.setup.log" 2>&1; then
			cat "$build/ibverbs-dlopen.setup.log"
			fail "configuring $dl"
			exit 1
		fi
	fi
	if ! meson compile -C "$dl" rpcr:shared_library test_vrb_glue libibverbs:shared_module \
		>"$build/ibverbs-dlopen.build.log" 2>&1; then
		tail -30 "$build/ibverbs-dlopen.build.log"
		fail "building $dl"
		exit 1
	fi
	check_lib "$dl" dlopen
fi

prog=$dl/test/test_vrb_glue
need=$(rdma_needed "$prog")
if [ -z "$need" ]; then
	ok "$prog needs nothing of rdma-core"
else
	fail "$prog needs $need"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/empty" "$work/none" "$work/verbs-only" "$work/both"

run() { # name, what, env assignments and command...
	local name=$1 what=$2
	shift 2
	if env "$@" >"$work/$name.log" 2>&1; then
		ok "$name: $what"
	else
		fail "$name: $what"
		sed 's/^/    /' "$work/$name.log"
	fi
}

run standard "LD_LIBRARY_PATH empty: rdma-core found on the standard path, the table filled" \
	LD_LIBRARY_PATH="$work/empty" "$prog"
sed -n 's/^ *\(lib[a-z]*\.so\.1 from .*\)/    \1/p' "$work/standard.log"
# Where the standard path has them, as the table's own entries said.
ibv=$(sed -n 's/^ *libibverbs\.so\.1 from //p' "$work/standard.log")
cm=$(sed -n 's/^ *librdmacm\.so\.1 from //p' "$work/standard.log")

run no_library "RPCR_RDMA_CORE_DIR with no library: libibverbs.so.1 named, no device, shm works" \
	RPCR_RDMA_CORE_DIR="$work/none" "$prog" --missing libibverbs.so.1
run no_symbol "RPCR_RDMA_CORE_DIR at a libibverbs without verbs: the first symbol named" \
	RPCR_RDMA_CORE_DIR="$dl/test/rdev/glue_stub" "$prog" --missing ibv_get_device_name
if [ -n "$ibv" ] && [ -n "$cm" ]; then
	ln -s "$ibv" "$work/verbs-only/libibverbs.so.1"
	ln -s "$ibv" "$work/both/libibverbs.so.1"
	ln -s "$cm" "$work/both/librdmacm.so.1"
	run no_rdmacm "RPCR_RDMA_CORE_DIR with libibverbs only: librdmacm.so.1 named" \
		RPCR_RDMA_CORE_DIR="$work/verbs-only" "$prog" --missing librdmacm.so.1
	run override "RPCR_RDMA_CORE_DIR with both libraries: the table filled from there" \
		RPCR_RDMA_CORE_DIR="$work/both" "$prog"
else
	fail "the standard run did not say where rdma-core is"
fi

[ $fails -eq 0 ]

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# The embedding examples (apps/examples), run as a user runs them.
#
#   examples.sh DIR                the ones meson built in DIR (build/apps/examples)
#   examples.sh --installed BUILD  install BUILD into a staging prefix (meson install --destdir,
#                                  its librpcr.pc pointed at the stage), copy the examples'
#                                  installed sources (share/rpcr/examples) to a directory outside
#                                  the tree, build each with its own Makefile against the
#                                  installed librpcr.pc and headers only (warnings as errors),
#                                  then run them against the installed library
#
# Each run: calc (ADD and PUTDATA, one process), bulk_store (zero-copy objects, one process),
# calc_mp (a server process, a client process against it, then SIGTERM to the server, which must
# exit 0 having served the calls). Every command has a time limit.
set -uo pipefail

EAL=(--no-huge --no-pci --no-shconf --no-telemetry --log-level=error)
fail=0
tmp=$(mktemp -d /tmp/rpcr-examples.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# The examples listen on fixed shm names: sockets of their own, away from other runs.
export RPCR_SHM_DIR=$tmp/shm
# Lcores on any CPU (the two processes of calc_mp would otherwise share CPU 0, both polling).
ncpu=$(nproc)
cpus="(0-$((ncpu - 1)))"

ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

# The path of example $2 under $1 (meson: DIR/NAME; make: DIR/NAME/NAME).
exe() { if [ -x "$1/$2/$2" ]; then echo "$1/$2/$2"; else echo "$1/$2"; fi; }

run_all() { # dir
	local d=$1 out addr srv spid rc
	out=$(timeout 60 "$(exe "$d" calc)" "${EAL[@]}" --lcores "0@$cpus" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/    /'
	if [ $rc -eq 0 ] && grep -q '^PUTDATA(1048576 bytes): 1048576 arrived' <<<"$out"; then
		ok "calc"
	else
		bad "calc (exit $rc)"
	fi

	out=$(timeout 120 "$(exe "$d" bulk_store)" "${EAL[@]}" --lcores "0@$cpus" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/    /'
	if [ $rc -eq 0 ] && [ "$(echo "$out" | grep -c 'GET the same bytes')" -eq 3 ]; then
		ok "bulk_store"
	else
		bad "bulk_store (exit $rc)"
	fi

	addr="calc_mp-$$-$RANDOM"
	srv="$tmp/server.log"
	timeout 120 "$(exe "$d" calc_mp)" "${EAL[@]}" --lcores "0@$cpus" -- server "$addr" >"$srv" 2>&1 &
	spid=$!
	for _ in $(seq 100); do grep -q 'serving on' "$srv" && break; sleep 0.1; done
	out=$(timeout 60 "$(exe "$d" calc_mp)" "${EAL[@]}" --lcores "0@$cpus,1@$cpus" -- client "$addr" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/    /'
	kill -TERM "$spid" 2>/dev/null
	wait "$spid"
	local src=$?
	sed 's/^/    server: /' "$srv"
	if [ $rc -eq 0 ] && [ $src -eq 0 ] && grep -q 'served 100[0-9] calls' "$srv"; then
		ok "calc_mp (two processes)"
	else
		bad "calc_mp (client exit $rc, server exit $src)"
	fi
}

if [ "${1:-}" = --installed ]; then
	build=$(cd "$2" && pwd)
	stage=$tmp/stage
	if ! meson install -C "$build" --destdir "$stage" --no-rebuild --quiet >"$tmp/install.log" 2>&1; then
		cat "$tmp/install.log"
		echo "FAIL meson install --destdir"
		exit 1
	fi
	pc=$(find "$stage" -name librpcr.pc | head -1)
	[ -n "$pc" ] || { echo "FAIL no librpcr.pc installed"; exit 1; }
	prefix=$(sed -n 's/^prefix=//p' "$pc")
	sed -i "s|^prefix=.*|prefix=$stage$prefix|" "$pc"
	PKG_CONFIG_PATH=$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
	export PKG_CONFIG_PATH
	libdir=$(pkg-config --variable=libdir librpcr)
	echo "installed: $stage$prefix (librpcr.pc: ${pc#$stage})"
	# Outside the tree, from the installed sources alone.
	work=$tmp/outside
	mkdir -p "$work"
	cp -r "$stage$prefix/share/rpcr/examples/." "$work/"
	for e in calc calc_mp bulk_store; do
		if [ ! -f "$work/$e/Makefile" ]; then
			bad "$e: no installed sources ($prefix/share/rpcr/examples/$e)"
		elif make -C "$work/$e" CFLAGS="-O2 -g -Wall -Wextra -Werror" >"$tmp/make-$e.log" 2>&1; then
			ok "$e: built outside the tree with its Makefile (pkg-config librpcr)"
		else
			cat "$tmp/make-$e.log"
			bad "$e: make"
		fi
	done
	# (ldd's output whole first: grep -q stops reading at its match, and under pipefail the
	# SIGPIPE ldd may then get fails the pipeline, more often the more libraries follow.)
	deps=$(LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ldd "$work/calc/calc")
	if ! grep -q "librpcr.so.* => $libdir/" <<<"$deps"; then
		LD_LIBRARY_PATH=$libdir ldd "$work/calc/calc" | grep rpcr
		bad "calc does not load the installed librpcr.so"
	fi
	export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	run_all "$work"
	# (The C sources' line counts, for the record: the single-process one is to stay short.)
	wc -l "$work"/*/*.c | sed 's/^/    /'
else
	run_all "$1"
fi
exit $fail

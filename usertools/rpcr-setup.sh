#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# Set up a Debian 12 machine for rpcr, from nothing: install every package the build and the
# tests need, reserve 2 MiB hugepages when possible, configure and build. Safe to run again.
#
# usage: usertools/rpcr-setup.sh [--no-install] [--hugepages N] [--build-dir DIR]
#   --no-install    skip apt (the packages are there already)
#   --hugepages N   2 MiB pages to reserve (default 512 = 1 GiB; 0 = leave as is)
#   --build-dir D   meson build directory (default: build)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
install=1
hugepages=512
build=build

while [ $# -gt 0 ]; do
	case $1 in
	--no-install) install=0 ;;
	--hugepages) hugepages=$2; shift ;;
	--build-dir) build=$2; shift ;;
	-h|--help) sed -n '2,12p' "$0"; exit 0 ;;
	*) echo "rpcr-setup: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done

sudo=
if [ "$(id -u)" -ne 0 ]; then
	sudo=sudo
fi

# Build: compilers, meson, the chosen dependencies (DPDK 22.11, rdma-core 44, libhugetlbfs).
# Tests: tshark (independent decoder), valgrind (instruction counts), clang's libFuzzer runtime
# and clang-format (style check), libtirpc (the TCP baseline), python3.
packages=(
	build-essential clang libclang-rt-14-dev clang-format meson ninja-build pkg-config python3
	libdpdk-dev libibverbs-dev librdmacm-dev ibverbs-providers rdma-core
	libhugetlbfs-dev libhugetlbfs-bin libnuma-dev libtirpc-dev
	tshark valgrind tmux python3-matplotlib
)

if [ $install -eq 1 ]; then
	echo "== rpcr-setup: installing packages"
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -q
	# tshark asks whether non-root users may capture; the answer does not matter here.
	echo "wireshark-common wireshark-common/install-setuid boolean false" |
		$sudo debconf-set-selections
	$sudo apt-get install -y -q --no-install-recommends "${packages[@]}"
fi

if [ "$hugepages" -gt 0 ]; then
	now=$(cat /proc/sys/vm/nr_hugepages 2>/dev/null || echo 0)
	if [ "$now" -lt "$hugepages" ]; then
		if echo "$hugepages" | $sudo tee /proc/sys/vm/nr_hugepages >/dev/null 2>&1; then
			echo "== rpcr-setup: $(cat /proc/sys/vm/nr_hugepages) hugepages of 2 MiB reserved"
		else
			echo "== rpcr-setup: could not reserve hugepages (not root?): rpcr falls back to ordinary shared memory"
		fi
	else
		echo "== rpcr-setup: $now hugepages of 2 MiB already reserved"
	fi
	if ! grep -qs ' /dev/hugepages hugetlbfs ' /proc/mounts; then
		$sudo mkdir -p /dev/hugepages 2>/dev/null || true
		$sudo mount -t hugetlbfs -o pagesize=2M nodev /dev/hugepages 2>/dev/null ||
			echo "== rpcr-setup: could not mount hugetlbfs on /dev/hugepages"
	fi
fi

echo "== rpcr-setup: building in $build"
cd "$top"
if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build"
fi
ninja -C "$build"
echo "== rpcr-setup: done. Try: $build/apps/rpcr-perf/rpcr-perf --loopback"

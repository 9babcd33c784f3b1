#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# In the soft-RoCE guest, from the build directory: throughput of rpcr-nfsd against the kernel's
# knfsd for the same workload in the same boot, rounds alternating between the two servers so
# that a slow patch of the emulated machine hits both, after an unmeasured warm-up pass on
# each. Each round: 64 MiB written with dd
# (conv=fsync), the client's cache dropped, read back with dd and compared with cmp. Both
# servers are mounted by the kernel client over RDMA (rxe_a -> rxe_b) for the whole run.
# Prints a line per round and a RATIO line with the medians: rpcr-nfsd / knfsd. A write or read
# hit by the kernel client's rxe stall (below) is marked and left out of the medians.
#
# usage (in the guest): bash test/vm/nfsd-ratio.sh      (cwd: the build directory)
# Environment: NFSD_ROUNDS (default 3), NFSD_BUDGET_S (no round starts after the rounds have
# taken this long, default 240: the kernel client's stalls below cost a minute or more each,
# and one CI run lost 13 minutes to four of them), NFSD_MIB (file size, default 64), NFSD_ARGS (more
# rpcr-nfsd options), NFSD_MOUNT_OPTS (more mount options for both mounts), NFSD_SCHED=other
# (rpcr-nfsd busy-polls at normal priority instead of SCHED_IDLE), NFSD_CLIENT_CPU (dd runs
# pinned to that guest CPU), NFSD_LCORES (rpcr-nfsd's EAL lcore list, default 1: one poller;
# 0-1: two pollers, the connections round-robin over them; give the client several connections
# with NFSD_MOUNT_OPTS=nconnect=2).
set -u
. /run/vmlab-lib.sh
if ! grep -qs rdma /proc/fs/nfsd/portlist; then
	vm_nfs_server /export >/dev/null || { echo "knfsd set-up failed"; exit 1; }
fi
mkdir -p vm-logs /mnt/rpcr /mnt/knfsd
nfsd=apps/rpcr-nfsd/rpcr-nfsd
[ -x "$nfsd" ] || { echo "no $nfsd in this build (libtirpc missing?)"; exit 1; }
# SCHED_IDLE, as in rpcr-nfsd-nfs3.sh (doc/nfsd.md, "Throughput"); NFSD_SCHED=other: without.
sched="chrt --idle 0"
[ "${NFSD_SCHED:-idle}" = other ] && sched=
$sched "$nfsd" -l "${NFSD_LCORES:-1}" --no-huge --no-pci --iova-mode=va --log-level=error --file-prefix=rpcr-ratio -- \
	--dev ibverbs:dev=rxe_b --addr 10.77.1.2:20052 --mount-port 20053 --allow 10.77.1.0/24 \
	${NFSD_ARGS:-} >vm-logs/nfsd-ratio-srv.txt 2>&1 &
srv=$!
for _ in $(seq 100); do
	grep -q "MOUNT v3 on TCP" vm-logs/nfsd-ratio-srv.txt && break
	sleep 0.1
done
pin=${NFSD_CLIENT_CPU:+taskset -c $NFSD_CLIENT_CPU}
rounds=${NFSD_ROUNDS:-3} mib=${NFSD_MIB:-64} extra=${NFSD_MOUNT_OPTS:+,$NFSD_MOUNT_OPTS}
rc=0
mount -t nfs -o vers=3,proto=rdma,port=20052,mountproto=tcp,mountport=20053,nolock$extra \
	10.77.1.2:/export /mnt/rpcr || { echo "FAIL: mount rpcr-nfsd"; rc=1; }
mount -t nfs -o vers=3,proto=rdma,port=20049,nolock$extra 10.77.1.2:/export /mnt/knfsd ||
	{ echo "FAIL: mount knfsd"; rc=1; }
grep -E ' /mnt/(rpcr|knfsd) ' /proc/mounts
head -c $((mib << 20)) /dev/urandom >/tmp/src
ms() { echo $(($(date +%s%N) / 1000000)); }
# The kernel client's own stall (see doc/nfsd.md): Debian 6.1's rdma_rxe refuses a fast-register
# WR of the client's ("rxe_reg_fast_mr: mr->lkey = ... not free") and its send queue stops without
# a completion, so the client's calls sit until timeo (60 s), then it reconnects and resends.
# A write or read during which that happened and that took over 55 s measures the client's timeout,
# not the server (the message alone does not always come with a stall).
nfree() { dmesg | grep -c 'rxe_reg_fast_mr.*not free'; }
# one SERVER MOUNTPOINT: appends the write and read MB/s to /tmp/ratio.SERVER.{w,r} (or to
# /tmp/ratio.stalled)
one() {
	local s=$1 f=$2/ratio-big t0 t1 wr rd n0 n1 n2 mark= ws=0 rs=0
	rm -f "$f"
	sync
	n0=$(nfree)
	t0=$(ms)
	if ! $pin timeout 300 dd if=/tmp/src of="$f" bs=1M conv=fsync status=none; then
		# Several of the client's stalls in a row can outlast the timeout: that pass
		# measured nothing of the server; another round may.
		if [ "$(nfree)" != "$n0" ]; then
			echo "round $r $s: write timed out in the client's rxe stalls, left out"
			echo timeout >>/tmp/ratio.stalled
			rm -f "$f"
			return 0
		fi
		echo "FAIL: $s write"
		return 1
	fi
	t1=$(ms)
	n1=$(nfree)
	[ "$n1" != "$n0" ] && [ $((t1 - t0)) -ge 55000 ] && ws=1
	wr=$(awk "BEGIN{printf \"%.1f\", $mib * 1048.576 / ($t1 - $t0 + 1)}")
	echo 3 >/proc/sys/vm/drop_caches
	t0=$(ms)
	if ! $pin timeout 300 dd if="$f" of=/tmp/back bs=1M status=none; then
		if [ "$(nfree)" != "$n1" ]; then
			echo "round $r $s: read timed out in the client's rxe stalls, left out"
			echo timeout >>/tmp/ratio.stalled
			rm -f "$f" /tmp/back
			return 0
		fi
		echo "FAIL: $s read"
		return 1
	fi
	t1=$(ms)
	rd=$(awk "BEGIN{printf \"%.1f\", $mib * 1048.576 / ($t1 - $t0 + 1)}")
	n2=$(nfree)
	[ "$n2" != "$n1" ] && [ $((t1 - t0)) -ge 55000 ] && rs=1
	cmp -s /tmp/src /tmp/back || { echo "FAIL: $s: data read back differ"; return 1; }
	rm -f /tmp/back "$f"
	if [ $ws = 1 ]; then
		mark="$mark (write stalled: the client's rxe fast-register failure, left out)"
		echo "$wr" >>/tmp/ratio.stalled
	else
		echo "$wr" >>/tmp/ratio.$s.w
	fi
	if [ $rs = 1 ]; then
		mark="$mark (read stalled: the client's rxe fast-register failure, left out)"
		echo "$rd" >>/tmp/ratio.stalled
	else
		echo "$rd" >>/tmp/ratio.$s.r
	fi
	echo "round $r $s: write $wr MB/s, read $rd MB/s, cmp identical$mark"
}
rm -f /tmp/ratio.*
# A warm-up pass on each server first, not measured (but compared): whichever server went first
# would otherwise also pay for the guest's first run of the client's code under emulation, and
# for the client's first MRs on its mount (xprtrdma makes them on demand).
if [ $rc = 0 ]; then
	for m in /mnt/rpcr /mnt/knfsd; do
		head -c $((16 << 20)) /tmp/src >/tmp/warm
		dd if=/tmp/warm of=$m/ratio-warm bs=1M conv=fsync status=none &&
			echo 3 >/proc/sys/vm/drop_caches && cmp -s /tmp/warm $m/ratio-warm ||
			{ echo "FAIL: warm-up pass on $m"; rc=1; }
		rm -f $m/ratio-warm /tmp/warm
	done
	echo "warm-up: 16 MiB written and read back on each server"
fi
done_rounds=0
if [ $rc = 0 ]; then
	budget=${NFSD_BUDGET_S:-240}
	t_rounds=$(ms)
	for r in $(seq "$rounds"); do
		if [ $r -gt 1 ] && [ $(($(ms) - t_rounds)) -gt $((budget * 1000)) ]; then
			echo "the rounds' budget of $budget s is spent after $done_rounds round(s): no more"
			break
		fi
		done_rounds=$r
		if [ $((r % 2)) = 1 ]; then
			one rpcr /mnt/rpcr && one knfsd /mnt/knfsd || { rc=1; break; }
		else
			one knfsd /mnt/knfsd && one rpcr /mnt/rpcr || { rc=1; break; }
		fi
	done
fi
umount /mnt/rpcr 2>/dev/null
umount /mnt/knfsd 2>/dev/null
kill -INT $srv
wait $srv || rc=1
median() { sort -g | awk '{v[NR]=$1} END {printf "%.1f", (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
if [ $rc = 0 ] && [ -s /tmp/ratio.rpcr.w ] && [ -s /tmp/ratio.knfsd.w ] &&
	[ -s /tmp/ratio.rpcr.r ] && [ -s /tmp/ratio.knfsd.r ]; then
	rw=$(median </tmp/ratio.rpcr.w) rr=$(median </tmp/ratio.rpcr.r)
	kw=$(median </tmp/ratio.knfsd.w) kr=$(median </tmp/ratio.knfsd.r)
	st=$(cat /tmp/ratio.stalled 2>/dev/null | wc -l)
	echo "RATIO medians of $done_rounds rounds ($st stalled passes left out), $mib MiB: rpcr-nfsd write $rw read $rr MB/s," \
		"knfsd write $kw read $kr MB/s: write $(awk "BEGIN{printf \"%.2f\", $rw/($kw?$kw:1)}")x" \
		"read $(awk "BEGIN{printf \"%.2f\", $rr/($kr?$kr:1)}")x"
fi
dmesg | grep -i -E 'rpcrdma|xprtrdma|svcrdma|nfs:|rxe' | tail -20
tail -3 vm-logs/nfsd-ratio-srv.txt
rm -f /tmp/src /tmp/ratio.*
exit $rc

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# In the soft-RoCE guest, from the build directory: rpcr-nfsd on rxe_b (ibverbs driver) mounted
# by the kernel's NFS client over RDMA (rxe_a -> rxe_b), and the same workload against the
# kernel's NFS server (knfsd, tmpfs export) in the same boot as the baseline:
#   mkdir/rmdir; 2000 files created and listed with ls -l; 64 MiB written with dd and read back
#   (client cache dropped) and compared with cmp; rename; symlink + readlink; hard link; chmod and
#   truncate (SETATTR); rm -r; umount.
# Prints one RESULT line per server with the write and read throughput (MB/s). rpcr-nfsd's part
# is captured (headers only: vm-logs/rpcr-nfsd.pcap) for the host's check of its Send with
# Invalidate toward the kernel client, which sets R (check-send-inv.sh); its counter must agree.
#
# usage (in the guest): bash test/vm/rpcr-nfsd-nfs3.sh   (cwd: the build directory)
# Environment: NFSD_FILES (files to create, default 2000), NFSD_ONLY=rpcr|knfsd (one server),
# NFSD_ARGS (more rpcr-nfsd options).
set -u
. /run/vmlab-lib.sh
# In vm-suite.sh knfsd is up already (knfsd_nfs3). Never set it up twice: a second rdma listener
# on 20049 fails and Debian 6.1's svcrdma oopses freeing it (__svc_rdma_free -> rdma_destroy_id);
# in that boot the kernel client's RDMA mount of rpcr-nfsd then timed out.
if grep -qs rdma /proc/fs/nfsd/portlist; then
	echo "knfsd already serves RDMA: $(tr '\n' ' ' </proc/fs/nfsd/portlist)"
else
	vm_nfs_server /export >/dev/null || { echo "knfsd set-up failed"; exit 1; }
fi
mkdir -p vm-logs /mnt/rpcr /mnt/knfsd
nfsd=apps/rpcr-nfsd/rpcr-nfsd
[ -x "$nfsd" ] || { echo "no $nfsd in this build (libtirpc missing?)"; exit 1; }
# On lcore 1: the guest's CPU 0 takes most of the interrupts and soft-RoCE's work. SCHED_IDLE: the
# guest has no core to spare for a busy poller, and the kernel's work for this very traffic
# (soft-RoCE, the client's completions) also runs on CPU 1; see "Throughput" in doc/nfsd.md.
chrt --idle 0 "$nfsd" -l 1 --no-huge --no-pci --iova-mode=va --log-level=error --file-prefix=rpcr-nfsd -- \
	--dev ibverbs:dev=rxe_b --addr 10.77.1.2:20050 --mount-port 20051 --allow 10.77.1.0/24 \
	--stats 10 ${NFSD_ARGS:-} >vm-logs/rpcr-nfsd.txt 2>&1 &
srv=$!
for _ in $(seq 100); do
	grep -q "MOUNT v3 on TCP" vm-logs/rpcr-nfsd.txt && break
	sleep 0.1
done
cat vm-logs/rpcr-nfsd.txt
head -c $((64 << 20)) /dev/urandom >/tmp/src64

fail() {
	echo "FAIL ($1): $2"
	dmesg | tail -20
	tail -5 vm-logs/rpcr-nfsd.txt
	return 1
}

ms() { echo $(($(date +%s%N) / 1000000)); }
# The kernel client's soft-RoCE fast-register failures so far (see nfsd-ratio.sh).
nfree() { dmesg | grep -c 'rxe_reg_fast_mr.*not free'; }

# The workload on mount point $1 (label $2).
workload() {
	local m=$1 l=$2 w=$1/w t0 t1 n n0
	mkdir "$w" || { fail "$l" mkdir; return 1; }
	mkdir "$w/d1" && [ -d "$w/d1" ] && rmdir "$w/d1" && [ ! -e "$w/d1" ] ||
		{ fail "$l" "mkdir/rmdir"; return 1; }
	mkdir "$w/many" || { fail "$l" "mkdir many"; return 1; }
	t0=$(ms)
	(cd "$w/many" && seq -f 'file-%04g' $files | xargs touch) || { fail "$l" "touch $files"; return 1; }
	t1=$(ms)
	n=$(ls -l "$w/many" | grep -c '^-rw')
	[ "$n" = "$files" ] || { fail "$l" "ls -l lists $n files, not $files"; return 1; }
	echo "$l: $files files created in $((t1 - t0)) ms, ls -l lists $n"
	t0=$(ms)
	echo "$l: dd write"
	n0=$(nfree)
	if ! timeout 300 dd if=/tmp/src64 of="$w/big" bs=1M conv=fsync status=none; then
		# Several of the kernel client's own stalls in a row (doc/nfsd.md, "Throughput")
		# can outlast the timeout: say so, and write the file once more.
		[ "$(nfree)" != "$n0" ] || { fail "$l" "dd write"; return 1; }
		echo "$l: dd write timed out in the client's rxe stalls" \
			"($(($(nfree) - n0)) fast-register failures): once more"
		t0=$(ms)
		timeout 300 dd if=/tmp/src64 of="$w/big" bs=1M conv=fsync status=none ||
			{ fail "$l" "dd write (again)"; return 1; }
	fi
	t1=$(ms)
	wr=$((64 * 1000 / (t1 - t0 + 1)))
	sync
	echo 3 >/proc/sys/vm/drop_caches
	t0=$(ms)
	echo "$l: dd read"
	timeout 300 dd if="$w/big" of=/tmp/back64 bs=1M status=none || { fail "$l" "dd read"; return 1; }
	t1=$(ms)
	rd=$((64 * 1000 / (t1 - t0 + 1)))
	cmp /tmp/src64 /tmp/back64 || { fail "$l" "cmp of the 64 MiB read back"; return 1; }
	rm -f /tmp/back64
	echo "$l: 64 MiB written at $wr MB/s, read back at $rd MB/s, cmp identical"
	mv "$w/big" "$w/big2" && [ -f "$w/big2" ] && [ ! -e "$w/big" ] || { fail "$l" rename; return 1; }
	ln -s big2 "$w/sl" && [ "$(readlink "$w/sl")" = big2 ] || { fail "$l" "symlink"; return 1; }
	cmp <(head -c 4096 "$w/sl") <(head -c 4096 /tmp/src64) || { fail "$l" "read via symlink"; return 1; }
	ln "$w/big2" "$w/hl" && [ "$(stat -c %h "$w/big2")" = 2 ] || { fail "$l" "hard link"; return 1; }
	chmod 600 "$w/hl" && [ "$(stat -c %a "$w/big2")" = 600 ] || { fail "$l" chmod; return 1; }
	truncate -s 1000 "$w/hl" && [ "$(stat -c %s "$w/big2")" = 1000 ] ||
		{ fail "$l" truncate; return 1; }
	cmp <(head -c 1000 /tmp/src64) "$w/big2" || { fail "$l" "data after truncate"; return 1; }
	rm -r "$w" && [ ! -e "$w" ] || { fail "$l" "rm -r"; return 1; }
	echo "$l: rename, symlink/readlink, hard link, chmod, truncate, rm -r: ok"
	echo "RESULT $l write_MBps=$wr read_MBps=$rd"
}

rc=0
files=${NFSD_FILES:-2000}
only=${NFSD_ONLY:-}
if [ "$only" != knfsd ]; then
	tcpdump -i veth0 -w vm-logs/rpcr-nfsd.pcap -s 64 udp port 4791 >vm-logs/rpcr-nfsd-tcpdump.txt 2>&1 &
	cap=$!
	sleep 1
	if mount -t nfs -o vers=3,proto=rdma,port=20050,mountproto=tcp,mountport=20051,nolock \
		10.77.1.2:/export /mnt/rpcr; then
		workload /mnt/rpcr rpcr-nfsd || rc=1
		umount /mnt/rpcr || { echo "FAIL: umount rpcr-nfsd"; rc=1; }
	else
		echo "FAIL: mount rpcr-nfsd"
		dmesg | tail -20
		rc=1
	fi
fi
kill -INT $srv
wait $srv || rc=1
cat vm-logs/rpcr-nfsd.txt
if [ "$only" != knfsd ]; then
	sleep 1
	kill -INT $cap 2>/dev/null
	wait $cap
	# The kernel client sets R (RFC 8797): rpcr-nfsd invalidates its keys with its Sends.
	si=$(grep -o 'send_invs [0-9]*' vm-logs/rpcr-nfsd.txt | tail -1 | awk '{print $2}')
	echo "rpcr-nfsd: Send with Invalidate sent ${si:-?} times"
	[ "${si:-0}" -gt 0 ] || { echo "FAIL: rpcr-nfsd sent no Send with Invalidate"; rc=1; }
fi
if [ "$only" != rpcr ]; then
	if mount -t nfs -o vers=3,proto=rdma,port=20049,nolock 10.77.1.2:/export /mnt/knfsd; then
		workload /mnt/knfsd knfsd || rc=1
		umount /mnt/knfsd || { echo "FAIL: umount knfsd"; rc=1; }
	else
		echo "FAIL: mount knfsd"
		rc=1
	fi
fi
rm -f /tmp/src64
[ $rc = 0 ] && echo "rpcr-nfsd-nfs3: ok" || echo "rpcr-nfsd-nfs3: FAILED"
exit $rc

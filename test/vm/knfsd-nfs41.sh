#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# In the soft-RoCE guest (vm-suite.sh), from the build directory: NFSv4.1 against the kernel NFS
# server over RDMA with the back channel on the client's own connection (RFC 8167). Then:
#   1. test/nfs41_probe from rxe_a: session with CONN_BACK_CHAN, READ/WRITE 0 B..1 MiB, 8 x 1 MiB
#      throughput, 20 recalls of read delegations by a local writer, a forced disconnect and
#      BIND_CONN_TO_SESSION, one recall more (its output: "OPS", "RECALLS", "BENCH" lines).
#   2. test/nfs3_probe --bench 8: NFSv3 throughput from the same client to the same server.
#   3. The kernel's NFSv4.1 client, mounted over RDMA, through the same delegation dance: its
#      recall times beside the probe's.
# Captured on veth0, each client apart (vm-logs/knfsd41.pcap, knfsd41-kernel.pcap), for the host's
# checks (check-nfs41.sh).
set -u
. /run/vmlab-lib.sh
# knfsd is set up once a boot (never twice, nor restarted: a second rdma listener on 20049 fails
# and Debian 6.1's svcrdma oopses freeing it, see rpcr-nfsd-nfs3.sh). First in the suite, this
# test starts it, with the shortest lease and grace (10 s), which can only be set while it is
# stopped; after another test started it, the probe waits out whatever grace is left (--grace).
if ! grep -qs rdma /proc/fs/nfsd/portlist; then
	modprobe nfsd
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd
	echo 10 >/proc/fs/nfsd/nfsv4leasetime
	echo 10 >/proc/fs/nfsd/nfsv4gracetime
	vm_nfs_server /export >/dev/null || { echo "NFS server set-up failed"; exit 1; }
fi
echo "knfsd: lease $(cat /proc/fs/nfsd/nfsv4leasetime) s, grace $(cat /proc/fs/nfsd/nfsv4gracetime) s," \
	"versions $(cat /proc/fs/nfsd/versions), ports $(tr '\n' ' ' </proc/fs/nfsd/portlist)"
# knfsd's callback tracepoints: what it did with the back channel, in the log.
tr=/sys/kernel/tracing
mountpoint -q $tr || mount -t tracefs nodev $tr 2>/dev/null
for e in nfsd/nfsd_cb_probe nfsd/nfsd_cb_setup nfsd/nfsd_cb_setup_err nfsd/nfsd_cb_state \
	nfsd/nfsd_cb_lost nfsd/nfsd_cb_nodelegs nfsd/nfsd_cb_work nfsd/nfsd_cb_done \
	nfsd/nfsd_cb_recall nfsd/nfsd_cb_recall_done nfsd/nfsd_cb_bc_update nfsd/nfsd_cb_shutdown; do
	[ -e $tr/events/$e/enable ] && echo 1 >$tr/events/$e/enable
done
tcpdump -i veth0 -w vm-logs/knfsd41.pcap -s 0 udp port 4791 >/dev/null 2>&1 &
td=$!
sleep 1
rc=0
timeout 240 test/nfs41_probe --dev ibverbs:dev=rxe_a --server 10.77.1.2 --local /export \
	--bench 8 --recalls 20 --rebind --grace 150 || rc=1
# NFSv3 from the same client stack to the same server, for the throughput beside v4.1's.
if [ -x test/nfs3_probe ]; then
	test/nfs3_probe --dev ibverbs:dev=rxe_a --server 10.77.1.2 --export /export --bench 8 |
		grep -E '^(BENCH|nfs3_probe)'
fi
echo "knfsd's callback trace:"
grep -v '^#' $tr/trace 2>/dev/null | sed 's/^ *//' | cut -c1-200 | head -60
echo 0 >$tr/tracing_on 2>/dev/null
sleep 1
kill -INT $td
wait $td
tcpdump -i veth0 -w vm-logs/knfsd41-kernel.pcap -s 0 udp port 4791 >/dev/null 2>&1 &
td=$!
sleep 1

# The kernel client: a read delegation on each of 5 files (a process holds the file open for
# reading), then a writer on the server's side; how long its open waits.
mkdir -p /mnt/k41
if mount -t nfs -o vers=4.1,proto=rdma,port=20049 10.77.1.2:/ /mnt/k41; then
	for i in 1 2 3 4 5; do
		f=kdeleg41-$i
		echo kernel >/export/$f
		exec 3</mnt/k41/$f
		cat <&3 >/dev/null
		held=$(cat /proc/fs/nfsd/clients/*/states 2>/dev/null | grep -c 'type: deleg')
		t0=$(date +%s%N)
		echo more >>/export/$f
		t1=$(date +%s%N)
		exec 3<&-
		echo "kernel client recall $i: delegations listed before $held, writer's open took" \
			"$(((t1 - t0) / 1000)) us"
	done
	umount /mnt/k41
else
	echo "kernel client: mount over RDMA failed"
	rc=1
fi
sleep 1
kill -INT $td
wait $td
exit $rc

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# In the soft-RoCE guest (vm-suite.sh), from the build directory: the kernel NFS server on rxe_b,
# a 2000-entry directory in its export, then test/nfs3_probe from rxe_a twice: with RFC 8797
# private data and without. The traffic of both runs is captured on veth0 (vm-logs/knfsd.pcap).
# Then a client of RPC-over-RDMA versions 1 and 2 (version 2's §4.2.3): knfsd answers its first
# message ERR_VERS and it goes on in version 1 on the same connection, through the same run;
# captured on its own (vm-logs/knfsd-v2.pcap, checked on the host by check-v2-fallback.sh).
set -u
. /run/vmlab-lib.sh
# (Once a boot: knfsd_nfs41 may have started it; see rpcr-nfsd-nfs3.sh.)
if ! grep -qs rdma /proc/fs/nfsd/portlist; then
	vm_nfs_server /export >/dev/null || { echo "NFS server set-up failed"; exit 1; }
fi
mkdir -p /export/dir2000
(cd /export/dir2000 && seq -f 'entry-with-a-longish-name-%04g' 2000 | xargs touch)
tcpdump -i veth0 -w vm-logs/knfsd.pcap -s 0 udp port 4791 >/dev/null 2>&1 &
td=$!
sleep 1
rc=0
for opt in "" --no-pdata; do
	test/nfs3_probe --dev ibverbs:dev=rxe_a --server 10.77.1.2 --export /export \
		--local /export --dir dir2000 --entries 2000 $opt || rc=1
	rm -f /export/rpcr-interop
done
sleep 1
kill -INT $td
wait $td

tcpdump -i veth0 -w vm-logs/knfsd-v2.pcap -s 0 udp port 4791 >/dev/null 2>&1 &
td=$!
sleep 1
test/nfs3_probe --dev ibverbs:dev=rxe_a --server 10.77.1.2 --export /export \
	--local /export --dir dir2000 --entries 2000 --rpcrdma-version 2 | tee vm-logs/knfsd-v2.out ||
	rc=1
rm -f /export/rpcr-interop
sleep 1
kill -INT $td
wait $td
# Version 1 from the first answer on, one connection, one transport error (the ERR_VERS).
for when in "after the first call" "at the end"; do
	grep -q "rpcrdma: $when: asked version 2, speaking version 1, 1 connection(s), 1 transport" \
		vm-logs/knfsd-v2.out || { echo "version-2 fallback: wrong $when"; rc=1; }
done
exit $rc

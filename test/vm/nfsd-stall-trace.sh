#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# In the soft-RoCE guest, from the build directory: catch the kernel client's write stall
# (doc/nfsd.md, "Throughput") with the kernel's rpcrdma and sunrpc trace events on. rpcr-nfsd on
# rxe_b, the kernel client on rxe_a writes 64 MiB up to six times, stopping after a write that
# took over 30 s. Leaves vm-logs/stall-trace-full.txt (the trace) and vm-logs/stall-srv.txt
# (rpcr-nfsd's counters every 2 s) in the build directory.
#
# usage: test/vm/rpcr-vm.sh -C build -t 800 -- bash ../test/vm/nfsd-stall-trace.sh
set -u
. /run/vmlab-lib.sh
mkdir -p vm-logs /mnt/rpcr
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
T=/sys/kernel/tracing
apps/rpcr-nfsd/rpcr-nfsd -l 1 --no-huge --no-pci --iova-mode=va --log-level=error --file-prefix=st -- \
	--dev ibverbs:dev=rxe_b --addr 10.77.1.2:20052 --mount-port 20053 --stats 2 >vm-logs/stall-srv.txt 2>&1 &
srv=$!
sleep 3
modprobe rpcrdma
mount -t nfs -o vers=3,proto=rdma,port=20052,mountproto=tcp,mountport=20053,nolock 10.77.1.2:/export /mnt/rpcr || exit 1
echo 20000 > $T/buffer_size_kb
for e in xprtrdma_connect xprtrdma_disconnect xprtrdma_op_connect xprtrdma_op_close xprtrdma_op_inject_dsc xprtrdma_wc_fastreg xprtrdma_wc_li xprtrdma_wc_li_wake xprtrdma_wc_li_done xprtrdma_wc_send xprtrdma_wc_receive xprtrdma_post_send_err xprtrdma_frwr_alloc xprtrdma_frwr_dereg xprtrdma_frwr_sgerr xprtrdma_frwr_maperr xprtrdma_reply_vers_err xprtrdma_reply_rqst_err xprtrdma_reply_short_err xprtrdma_reply_hdr_err xprtrdma_err_chunk xprtrdma_err_vers xprtrdma_err_unrecognized xprtrdma_mr_reminv xprtrdma_createmrs xprtrdma_nomrs_err xprtrdma_retransmit xprtrdma_op_setport xprtrdma_inline_thresh xprtrdma_remove xprtrdma_cm_event; do
	[ -e $T/events/rpcrdma/$e/enable ] && echo 1 > $T/events/rpcrdma/$e/enable
done
for e in xprt_retransmit xprt_disconnect_auto xprt_disconnect_done xprt_disconnect_force xprt_reserve_cong xprt_timer rpc_task_timeout xprt_connect; do
	[ -e $T/events/sunrpc/$e/enable ] && echo 1 > $T/events/sunrpc/$e/enable
done
echo 1 > $T/tracing_on
head -c $((64 << 20)) /dev/urandom >/tmp/src
for i in 1 2 3 4 5 6; do
	t0=$(date +%s)
	echo "=== write $i at $(cat /proc/uptime)"
	dd if=/tmp/src of=/mnt/rpcr/big bs=1M conv=fsync status=none
	t1=$(date +%s)
	echo "write $i took $((t1 - t0)) s"
	rm -f /mnt/rpcr/big
	[ $((t1 - t0)) -gt 30 ] && break
done
echo 0 > $T/tracing_on
dmesg | grep -i 'not free\|rxe\|rpcrdma' | tail
cp $T/trace vm-logs/stall-trace-full.txt
grep -c . $T/trace
umount /mnt/rpcr
kill -INT $srv; wait $srv

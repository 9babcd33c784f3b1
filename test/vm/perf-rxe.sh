#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# In the soft-RoCE guest (vm-suite.sh), from the build directory: perftest and rpcr-perf on the
# same rxe pair in the same boot, and a capture of rpcr's traffic on veth0 for tshark on the host.
#   ib_send_lat (2-byte Sends, rdma_cm)  vs  rpcr NULL calls, one at a time
#   ib_write_bw (1 MiB, 8 outstanding)   vs  rpcr READ of 1 MiB (a write chunk), 8 outstanding
# Results in vm-logs/: ibsl.txt, ibwb.txt, perf-rxe.txt/.json (the measurement), perf-srv2.txt;
# rpcr.pcap, perf-capture.txt, perf-srv.txt (the captured run), rpcr-own-cli.pcapng and
# rpcr-own-srv.pcapng (the same run as rpcr-perf captured it itself); rpcr-v2.pcap, perf-capture-v2.txt,
# perf-srv-v2.txt (the same in RPC-over-RDMA version 2).
L=vm-logs
export PATH=$PATH:/usr/sbin
rc=0
# perftest PROG OUT ARGS...: server on rxe_b, client on rxe_a, each bounded (90 s); a run that
# stalls (rxe under emulation once left ib_write_bw waiting for good, and the whole boot timed
# out) is killed and tried once more.
perftest() {
	local prog=$1 out=$2 try sp
	shift 2
	for try in 1 2; do
		timeout 90 "$prog" -R -d rxe_b "$@" >$L/$out-srv.txt 2>&1 &
		sp=$!
		sleep 1
		if timeout 90 "$prog" -R -d rxe_a "$@" 10.77.1.2 >$L/$out.txt 2>&1; then
			wait $sp
			return 0
		fi
		echo "$prog: try $try failed or stalled: $(tail -1 $L/$out.txt)"
		kill $sp 2>/dev/null
		wait $sp
		sleep 1
	done
	return 1
}
perftest ib_send_lat ibsl -n 5000 || rc=1
# Its typical latency came out "inf" in 2 of the 8 CI logs kept from stops 43-48 (the run itself
# passed): a figure perftest could not compute, not one of the link. Keep that output and measure
# once more (perf-ratios.sh reports no ratio rather than a wrong one if it is still not finite).
if ! awk '/^ *2 +[0-9]+ /{ok = $5 ~ /^[0-9]+(\.[0-9]+)?$/ && $5 > 0} END {exit !ok}' $L/ibsl.txt; then
	echo "ib_send_lat: no finite typical latency ($(awk '/^ *2 +[0-9]+ /{print $5}' $L/ibsl.txt)), again"
	cp $L/ibsl.txt $L/ibsl-notfinite.txt
	perftest ib_send_lat ibsl -n 5000 || rc=1
fi
perftest ib_write_bw ibwb -s 1048576 -n 200 -t 8 || rc=1
# The wire check's capture: a short run of every message shape (NULL; ECHO and READ with read
# chunks, write chunks, inline), on its own server so that the frames match its counts.
tcpdump -i veth0 -w $L/rpcr.pcap -s 256 udp port 4791 >$L/tcpdump.txt 2>&1 &
td=$!
# Both rpcr-perfs capture too (--pcap), for check-own-capture.sh: their files against tcpdump's.
apps/rpcr-perf/rpcr-perf -- server --dev ibverbs:dev=rxe_b --addr 10.77.1.2:20090 \
	--pcap $L/rpcr-own-srv.pcapng >$L/perf-srv.txt 2>&1 &
sp=$!
sleep 3
timeout 120 apps/rpcr-perf/rpcr-perf -- client --dev ibverbs:dev=rxe_a --addr 10.77.1.2:20090 \
	lat bw --lat-sizes 64 --sizes 64,4K,1M --procs echo,read --seconds 0.2 --warmup 0 \
	--pcap $L/rpcr-own-cli.pcapng >$L/perf-capture.txt 2>&1 || rc=1
kill -INT $sp
wait $sp
sleep 1
kill -INT $td
wait $td
# Version 2, for rpcr's dissector (check-v2-capture.py on the host): the same shapes but 1 MiB,
# captured whole, on a server of versions 1 and 2, the client asking version 2.
tcpdump -i veth0 -w $L/rpcr-v2.pcap -s 0 udp port 4791 >$L/tcpdump-v2.txt 2>&1 &
td=$!
apps/rpcr-perf/rpcr-perf -- server --dev ibverbs:dev=rxe_b --addr 10.77.1.2:20092 \
	--rpcrdma-version 2 >$L/perf-srv-v2.txt 2>&1 &
sp=$!
sleep 3
timeout 120 apps/rpcr-perf/rpcr-perf -- client --dev ibverbs:dev=rxe_a --addr 10.77.1.2:20092 \
	--rpcrdma-version 2 lat bw --lat-sizes 64 --sizes 64,4K --procs echo,read --seconds 0.2 \
	--warmup 0 >$L/perf-capture-v2.txt 2>&1 || rc=1
# ... and message continuation (§4.4.2): ECHO and READ of 6000 bytes with nothing DDP-eligible,
# calls and replies in two Sends each, every Send several packets at soft-RoCE's MTU.
timeout 120 apps/rpcr-perf/rpcr-perf -- client --dev ibverbs:dev=rxe_a --addr 10.77.1.2:20092 \
	--rpcrdma-version 2 --threshold 65536 bw --sizes 6000 --procs echo,read --seconds 0.1 \
	--warmup 0 >>$L/perf-capture-v2.txt 2>&1 || rc=1
kill -INT $sp
wait $sp
sleep 1
kill -INT $td
wait $td
# The measurement, with nothing else running, as perftest's was (tcpdump copies every frame to
# user space: under emulation that takes CPU from the guest's two vCPUs).
apps/rpcr-perf/rpcr-perf -- server --dev ibverbs:dev=rxe_b --addr 10.77.1.2:20091 \
	>$L/perf-srv2.txt 2>&1 &
sp=$!
sleep 3
timeout 240 apps/rpcr-perf/rpcr-perf -- client --dev ibverbs:dev=rxe_a --addr 10.77.1.2:20091 \
	lat bw --lat-sizes "" --sizes 1M --procs read --bw-outstanding 8 --seconds 3 \
	--json $L/perf-rxe.json >$L/perf-rxe.txt 2>&1 || rc=1
kill -INT $sp
wait $sp
exit $rc

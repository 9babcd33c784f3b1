#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# The independent wire check: tshark (its own RPC-over-RDMA dissector, not rpcr's code) must decode
# every rpcr message of a RoCEv2 capture as rpcordma with an RPC inside (but for calls with read
# chunks, whose RPC it can only show reassembled with the chunks, cut by the snap length), and
# find nothing malformed; the number of rpcordma frames must be what rpcr's server counted
# (calls + replies).
#
# usage: check-capture.sh PCAP SERVER_REPORT [RPCR_IP]
#   SERVER_REPORT: rpcr-perf server's output, or "-" for a server that does not count (knfsd):
#   then rpcr's own frames (from RPCR_IP) must decode with nothing malformed, and there must be
#   rpcordma frames carrying NFS; the peer's malformed frames are reported, not held against rpcr
set -u
pcap=$1
report=$2
command -v tshark >/dev/null || { echo "tshark is not installed"; exit 1; }
if [ "$report" = - ]; then
	ip=${3:?give the address of the rpcr side}
	count() { tshark -r "$pcap" -Y "$1" -T fields -e frame.number 2>/dev/null | wc -l; }
	bad_expr="(_ws.malformed || _ws.expert.severity == error)"
	rdma=$(count "rpcordma && ip.src == $ip")
	nfs=$(count "rpcordma && nfs && ip.src == $ip")
	bad=$(count "$bad_expr && ip.src == $ip")
	peer=$(count "rpcordma && ip.src != $ip")
	peerbad=$(count "$bad_expr && ip.src != $ip")
	echo "capture: rpcr's rpcordma frames $rdma (with NFS $nfs), malformed $bad;" \
		"the peer's $peer, malformed $peerbad"
	[ "$bad" -eq 0 ] && [ "$rdma" -gt 0 ] && [ "$nfs" -gt 0 ]
	exit
fi
calls=$(sed -n 's/.*: \([0-9]*\) calls received, \([0-9]*\) replies sent.*/\1 \2/p' "$report")
[ -n "$calls" ] || { echo "no call count in $report"; exit 1; }
read -r ncalls nreplies <<<"$calls"
frames=$(tshark -r "$pcap" -q -z io,phs 2>/dev/null | awk '/^ +udp /{print $2}' | sed 's/frames://')
rdma=$(tshark -r "$pcap" -Y rpcordma -T fields -e frame.number 2>/dev/null | wc -l)
rpc=$(tshark -r "$pcap" -Y "rpcordma && rpc" -T fields -e frame.number 2>/dev/null | wc -l)
# A call with read chunks: tshark shows its RPC only once it has reassembled the message with
# the chunks' RDMA Read responses, whose payload the 256-byte snap length cuts.
chunked=$(tshark -r "$pcap" -Y "rpcordma && rpcordma.reads_count > 0 && !rpc" -T fields \
	-e frame.number 2>/dev/null | wc -l)
bad=$(tshark -r "$pcap" -Y "_ws.malformed || _ws.expert.severity == error" -T fields \
	-e frame.number 2>/dev/null | wc -l)
echo "capture: ${frames:-?} RoCEv2 frames; rpcordma $rdma (with RPC $rpc, calls with read" \
	"chunks $chunked); malformed $bad; server: $ncalls calls, $nreplies replies"
[ "$bad" -eq 0 ] || { echo "malformed frames"; exit 1; }
[ "$rdma" -eq $((ncalls + nreplies)) ] || { echo "rpcordma frames != calls + replies"; exit 1; }
[ "$((rpc + chunked))" -eq "$rdma" ] || { echo "rpcordma frames without an RPC inside"; exit 1; }

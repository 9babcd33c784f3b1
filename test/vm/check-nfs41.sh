#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# The host's checks of knfsd-nfs41.sh's captures, with tshark's own dissectors:
#   - rpcr's frames decode as RPC-over-RDMA carrying NFS, none malformed (check-capture.sh);
#   - the back channel: calls from knfsd's side (CB_COMPOUND to the NFSv4 callback program),
#     every one with empty chunk lists (RFC 8167 section 4), every one answered by rpcr;
#   - the recall round trip (knfsd's CB_COMPOUND sent -> the client's reply, from the capture's
#     timestamps) for rpcr and for the kernel's client, side by side.
#
# usage: check-nfs41.sh VM_LOGS_DIR
set -u
d=$1
srv=10.77.1.2
cli=10.77.1.1
here=$(cd "$(dirname "$0")" && pwd)
"$here/check-capture.sh" "$d/knfsd41.pcap" - $cli || exit 1
rtt() { # PCAP: the round trips of the CB_COMPOUNDs answered, in ms: n median max
	tshark -r "$1" -Y "rpc.msgtyp == 1 && ip.src == $cli && rpc.program == 1073741824 &&
		rpc.procedure == 1" -T fields -e rpc.time 2>/dev/null |
		sort -g | awk '{ v[NR] = $1 * 1000 } END { if (NR == 0) print "0 - -";
			else printf "%d %.3f %.3f\n", NR, v[int((NR + 1) / 2)], v[NR] }'
}
calls=$(tshark -r "$d/knfsd41.pcap" -Y "rpc.msgtyp == 0 && ip.src == $srv" -T fields \
	-e frame.number 2>/dev/null | wc -l)
chunked=$(tshark -r "$d/knfsd41.pcap" -Y "rpc.msgtyp == 0 && ip.src == $srv &&
	(rpcordma.reads_count > 0 || rpcordma.writes_count > 0 || rpcordma.reply_count > 0)" \
	-T fields -e frame.number 2>/dev/null | wc -l)
recalls=$(tshark -r "$d/knfsd41.pcap" -Y "rpc.msgtyp == 0 && ip.src == $srv && nfs.cb.operation == 4" \
	-T fields -e frame.number 2>/dev/null | wc -l)
read -r n med max <<<"$(rtt "$d/knfsd41.pcap")"
read -r kn kmed kmax <<<"$(rtt "$d/knfsd41-kernel.pcap")"
echo "back channel: $calls calls from knfsd ($recalls with CB_RECALL), $chunked with chunks;" \
	"answered by rpcr: $n"
echo "recall round trip (CB_COMPOUND -> reply, capture timestamps): rpcr median $med ms" \
	"(max $max, $n calls), kernel client median $kmed ms (max $kmax, $kn calls)"
[ "$calls" -gt 0 ] && [ "$chunked" -eq 0 ] && [ "$n" -eq "$calls" ] && [ "$recalls" -ge 21 ]

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# A client of RPC-over-RDMA versions 1 and 2 against knfsd (knfsd-nfs3.sh's last run): the
# capture must show exactly one version-2 message from rpcr (its first call, decoded by rpcr's
# own dissector, usertools/wireshark/rpcrdma2.lua), knfsd's ERR_VERS answer (version 1's layout,
# version word 2, read here from the raw bytes: Wireshark's rpcordma takes version 1 only), and
# then version 1 only from rpcr, decoded by Wireshark's own rpcordma, carrying NFS, none malformed.
#
# usage: check-v2-fallback.sh PCAP RPCR_IP
set -u
pcap=$1
ip=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
lua=$top/usertools/wireshark/rpcrdma2.lua
command -v tshark >/dev/null || { echo "tshark is not installed"; exit 1; }
ts() { tshark -X "lua_script:$lua" -r "$pcap" "$@" 2>/dev/null; }
v2=$(ts -Y "rpcrdma2 && ip.src == $ip" -T fields -e frame.number -e rpcrdma2.xid -e rpcrdma2.htype)
nv2=$(printf '%s' "$v2" | grep -c .)
v1=$(ts -Y "rpcordma && ip.src == $ip" -T fields -e frame.number | wc -l)
nfs=$(ts -Y "rpcordma && nfs && ip.src == $ip" -T fields -e frame.number | wc -l)
bad=$(ts -Y "(_ws.malformed || _ws.expert.severity == error) && ip.src == $ip" \
	-T fields -e frame.number | wc -l)
first_v1=$(ts -Y "rpcordma && ip.src == $ip" -T fields -e frame.number | head -1)
# knfsd's answer: a SEND ONLY (opcode 4) whose RPC-over-RDMA header, after the 12-byte BTH of
# the UDP payload, is xid, 2, credits, RDMA_ERROR (4), ERR_VERS (1), 1, 1.
xid=$(printf '%s\n' "$v2" | head -1 | cut -f2)
errvers=$(tshark -r "$pcap" -Y "ip.dst == $ip && infiniband.bth.opcode == 4" -T fields \
	-e frame.number -e udp.payload 2>/dev/null |
	awk -v x="${xid#0x}" '{ h = tolower(substr($2, 25)) }
		substr(h, 1, 8) == tolower(x) && substr(h, 9, 8) == "00000002" &&
		substr(h, 25, 32) == "00000004000000010000000100000001" { print $1 }')
echo "capture: rpcr's version-2 messages $nv2 (frame, xid, htype: $(printf '%s' "$v2" | tr '\t\n' ' ;'))," \
	"knfsd's ERR_VERS to it in frame(s) ${errvers:-none}; rpcr's version-1 messages $v1" \
	"(with NFS $nfs, the first in frame ${first_v1:-none}), malformed $bad"
[ "$nv2" -eq 1 ] || { echo "not exactly one version-2 message"; exit 1; }
[ -n "$errvers" ] || { echo "no ERR_VERS from knfsd"; exit 1; }
[ "$v1" -gt 0 ] && [ "$nfs" -gt 0 ] || { echo "no version-1 NFS traffic after the fallback"; exit 1; }
[ "$first_v1" -gt "$(printf '%s' "$v2" | cut -f1)" ] || { echo "version 1 before version 2"; exit 1; }
[ "$bad" -eq 0 ] || { echo "malformed frames"; exit 1; }

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# The host's check of remote invalidation on the wire (RoCE v2 frames, tshark's InfiniBand
# dissector: BTH opcodes SEND LAST WITH INVALIDATE 0x16 and SEND ONLY WITH INVALIDATE 0x17, one
# of them per Send with Invalidate):
#   - rpcr-nfsd.pcap (rpcr-nfsd-nfs3.sh): rpcr-nfsd on 10.77.1.2 sends them to the kernel's client
#     on 10.77.1.1, which set R; required, and set against rpcr-nfsd's own send_invs counter;
#   - knfsd.pcap, knfsd41.pcap: knfsd's toward rpcr's clients, reported. (knfsd sends them to a
#     client that set R; rpcr's clients set it where their keys can be invalidated: memory
#     windows, which soft-RoCE on Linux 6.1 does not carry, see doc/rdev.md.)
#
# usage: check-send-inv.sh VM_LOGS_DIR
set -u
d=$1
srv=10.77.1.2
cli=10.77.1.1
inv() { # PCAP SRC DST: Sends with Invalidate from SRC to DST
	[ -f "$1" ] || { echo 0; return; }
	tshark -r "$1" -Y "ip.src == $2 && ip.dst == $3 &&
		(infiniband.bth.opcode == 0x16 || infiniband.bth.opcode == 0x17)" \
		-T fields -e frame.number 2>/dev/null | wc -l
}
n=$(inv "$d/rpcr-nfsd.pcap" $srv $cli)
c=$(grep -o 'send_invs [0-9]*' "$d/rpcr-nfsd.txt" 2>/dev/null | tail -1 | awk '{print $2}')
k3=$(inv "$d/knfsd.pcap" $srv $cli)
k41=$(inv "$d/knfsd41.pcap" $srv $cli)
drop=$(grep -o '[0-9]* packets dropped by kernel' "$d/rpcr-nfsd-tcpdump.txt" 2>/dev/null | awk '{print $1}')
echo "rpcr-nfsd -> kernel client: $n Sends with Invalidate on the wire, rpcr-nfsd counted ${c:-?}" \
	"(tcpdump dropped ${drop:-?} frames)"
echo "knfsd -> rpcr's clients: $k3 (NFSv3), $k41 (NFSv4.1)"
# Every one counted is on the wire, unless the capture dropped frames; never more.
[ "$n" -gt 0 ] && [ -n "$c" ] && [ "$n" -le "$c" ] && { [ "${drop:-1}" != 0 ] || [ "$n" = "$c" ]; }

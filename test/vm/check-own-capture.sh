#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# rpcr's own capture (rpcr-perf --pcap, lib/xprt/capture.c) against tcpdump's of the same run on
# the veth under soft-RoCE (perf-rxe.sh): message for message, as tshark decodes both.
#   - The server's file (capturing from before the client connected): the RPC-over-RDMA messages
#     it received are, in order, those the wire carried from the client (xid, message type), the
#     ones it sent those the wire carried from the server; its RDMA Write and Read requests are,
#     in order, the wire's (remote address, key, length from the RETH of each WRITE FIRST/ONLY and
#     READ request), and it recorded as many Read responses as the client sent.
#   - The client's file (capturing once connected, until its last call): its messages each way are
#     one unbroken run of the wire's.
#   - Neither capture dropped anything, nor did tcpdump.
#
# usage: check-own-capture.sh WIRE_PCAP CLIENT_PCAPNG SERVER_PCAPNG CLIENT_IP SERVER_IP
#                             CLIENT_LOG SERVER_LOG TCPDUMP_LOG
set -u
wire=$1
cli=$2
srv=$3
cip=$4
sip=$5
clog=$6
slog=$7
tlog=$8
command -v tshark >/dev/null || { echo "tshark is not installed"; exit 1; }
for f in "$wire" "$cli" "$srv"; do
	[ -s "$f" ] || { echo "FAIL: no capture $f"; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# One line per message ("M xid type") and per RDMA request ("W|R va rkey length"), by sender:
# files SENDER.{msgs,rdma}. For the wire, the sender is the IP source; for an rpcr file, the
# direction says it (@out and @in: who sends what that side sent and received).
fields=(-T fields -E separator=';' -e ip.src -e frame.p2p_dir -e infiniband.bth.opcode
	-e rpcordma.xid -e rpcordma.msg_type -e infiniband.reth.va -e infiniband.reth.r_key
	-e infiniband.reth.dmalen)
split() {
	local f=$1 prefix=$2 out=$3 in=$4
	tshark -r "$f" "${fields[@]}" 2>/dev/null | awk -F';' -v p="$tmp/$prefix" -v o="$out" \
		-v i="$in" '
		{
			who = $1
			if (o != "") who = ($2 == 0) ? o : i
			if ($4 != "") print "M", $4, $5 > (p "." who ".msgs")
			else if ($3 == 6 || $3 == 10) print "W", $6, $7, $8 > (p "." who ".rdma")
			else if ($3 == 12) print "R", $6, $7, $8 > (p "." who ".rdma")
			# READ responses: the first packet of each (FIRST 13, ONLY 16).
			else if ($3 == 13 || $3 == 16) print "r" > (p "." who ".resp")
		}'
	local w
	for w in "$cip" "$sip"; do
		touch "$tmp/$prefix.$w.msgs" "$tmp/$prefix.$w.rdma" "$tmp/$prefix.$w.resp"
	done
}
split "$wire" wire "" ""
split "$srv" srv "$sip" "$cip"
split "$cli" cli "$cip" "$sip"

same() { # what A B
	if cmp -s "$2" "$3"; then
		echo "ok: $1: $(wc -l <"$2") the same"
	else
		echo "FAIL: $1 differ ($(wc -l <"$2") against $(wc -l <"$3")); first differences:"
		diff "$2" "$3" | head -6
		fail=1
	fi
}
same "the server's received messages and the wire's from the client" \
	"$tmp/srv.$cip.msgs" "$tmp/wire.$cip.msgs"
same "the server's sent messages and the wire's from the server" \
	"$tmp/srv.$sip.msgs" "$tmp/wire.$sip.msgs"
same "the server's RDMA Write and Read requests and the wire's" \
	"$tmp/srv.$sip.rdma" "$tmp/wire.$sip.rdma"
[ -s "$tmp/srv.$sip.rdma" ] || { echo "FAIL: no RDMA request in the server's capture"; fail=1; }
same "the RDMA Read responses the server recorded and the wire's from the client" \
	"$tmp/srv.$cip.resp" "$tmp/wire.$cip.resp"

# The client's: an unbroken run of the wire's, each way.
run_of() { # what PART WHOLE
	local n
	n=$(wc -l <"$2")
	if [ "$n" -gt 0 ] && grep -n -x -F -f <(head -1 "$2") "$3" | cut -d: -f1 | while read -r at; do
		tail -n +"$at" "$3" | head -n "$n" | cmp -s - "$2" && echo yes && break
	done | grep -q yes; then
		echo "ok: $1: $n, an unbroken run of the wire's $(wc -l <"$3")"
	else
		echo "FAIL: $1: $n messages, not a run of the wire's $(wc -l <"$3")"
		fail=1
	fi
}
run_of "the client's sent messages" "$tmp/cli.$cip.msgs" "$tmp/wire.$cip.msgs"
run_of "the client's received messages" "$tmp/cli.$sip.msgs" "$tmp/wire.$sip.msgs"

# Drops: what rpcr-perf said of each capture, and tcpdump of its own.
for f in "$clog" "$slog"; do
	d=$(sed -n 's/.*capture .*, \([0-9]*\) dropped$/\1/p' "$f")
	echo "$(basename "$f"): capture dropped ${d:-?}"
	[ "${d:-x}" = 0 ] || { echo "FAIL: $f: the capture dropped ${d:-an unknown number of} packets"; fail=1; }
done
d=$(grep -o '[0-9]* packets dropped by kernel' "$tlog" 2>/dev/null | awk '{ print $1 }')
echo "tcpdump: dropped ${d:-?}"
[ "${d:-0}" = 0 ] || { echo "FAIL: tcpdump dropped $d packets"; fail=1; }
exit $fail

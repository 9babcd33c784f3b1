#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Independent decoder agreement: rpcr's version 1 encodings, sent as RoCEv2 frames in a pcap,
# must be decoded by Wireshark's rpcordma dissector (tshark) into the same xid, credits, message
# type, chunk lists and error fields that rpcr put in. Exit 0 on agreement, 1 on any difference,
# 77 (meson's "skipped") when tshark is not installed.
#
# With --v2 LUA: version 2 and the xcharext operations (rpcr's golden messages and random ones
# of every header type), decoded by rpcr's own dissector usertools/wireshark/rpcrdma2.lua, which
# Wireshark does not have: every frame claimed, every field equal, nothing malformed.
#
# usage: tshark-check.sh [--v2 LUA_SCRIPT] MKPCAP_BINARY [WORK_DIR [RANDOM_COUNT]]
set -euo pipefail

lua=
if [ "${1:-}" = --v2 ]; then
	lua=$2
	shift 2
fi
mkpcap=$1
work=${2:-$(mktemp -d)}
count=${3:-500}

if ! command -v tshark >/dev/null 2>&1; then
	echo "tshark not installed (apt-get install tshark): skipped"
	exit 77
fi
mkdir -p "$work"

if [ -n "$lua" ]; then
	"$mkpcap" --v2 "$work/rpcr2.pcap" "$work/expected2.tsv" "$count"
	fields=(frame.number rpcrdma2.xid rpcrdma2.vers rpcrdma2.credit rpcrdma2.htype rpcrdma2.flags
		rpcrdma2.inv_handle rpcrdma2.reads_count rpcrdma2.position rpcrdma2.handle
		rpcrdma2.length rpcrdma2.offset rpcrdma2.writes_count rpcrdma2.segment_count
		rpcrdma2.reply_count rpcrdma2.err rpcrdma2.vers_low rpcrdma2.vers_high
		rpcrdma2.max_chunks rpcrdma2.max_segments rpcrdma2.chunk_index rpcrdma2.length_needed
		rpcrdma2.prop_count rpcrdma2.prop.which rpcrdma2.prop.len rpcrdma2.opttype
		rpcrdma2.xchar.which rpcrdma2.xchar.len rpcrdma2.xchar.subset_count
		rpcrdma2.xchar.subset rpcrdma2.xchar.pendclr)
	args=()
	for f in "${fields[@]}"; do args+=(-e "$f"); done
	tshark -X "lua_script:$lua" -r "$work/rpcr2.pcap" -Y rpcrdma2 -T fields -E separator=/t \
		-E occurrence=a -E aggregator=, "${args[@]}" 2>"$work/tshark2.err" \
		>"$work/tshark2.tsv" || {
		cat "$work/tshark2.err"
		exit 1
	}
	if grep -q -i "lua.*error\|error.*lua" "$work/tshark2.err"; then
		cat "$work/tshark2.err"
		exit 1
	fi
	if ! diff -u "$work/expected2.tsv" "$work/tshark2.tsv" >"$work/diff2.txt"; then
		head -40 "$work/diff2.txt"
		echo "the version-2 dissector disagrees on $(grep -c '^-[0-9]' "$work/diff2.txt") of" \
			"$(wc -l <"$work/expected2.tsv") frames (files in $work)"
		exit 1
	fi
	malformed=$(tshark -X "lua_script:$lua" -r "$work/rpcr2.pcap" \
		-Y '_ws.malformed || _ws.expert.severity >= "error"' 2>/dev/null | wc -l)
	if [ "$malformed" -ne 0 ]; then
		echo "the version-2 dissector reports $malformed malformed frame(s)"
		exit 1
	fi
	echo "rpcrdma2.lua agrees on all $(wc -l <"$work/expected2.tsv") version-2 frames" \
		"(xid, version, credits, type, flags, chunk lists, errors, properties, characteristics)"
	exit 0
fi

"$mkpcap" "$work/rpcr.pcap" "$work/expected.tsv" "$count"

fields=(frame.number rpcordma.xid rpcordma.version rpcordma.flow_control rpcordma.msg_type
	rpcordma.reads_count rpcordma.position rpcordma.rdma_handle rpcordma.rdma_length
	rpcordma.rdma_offset rpcordma.writes_count rpcordma.segment_count rpcordma.reply_count
	rpcordma.errcode rpcordma.vers_low rpcordma.vers_high rpcordma.rdma_align
	rpcordma.rdma_thresh)
args=()
for f in "${fields[@]}"; do args+=(-e "$f"); done

# Every frame must be claimed as rpcordma: -Y keeps only those, so a missing one shows in the diff.
tshark -r "$work/rpcr.pcap" -Y rpcordma -T fields -E separator=/t -E occurrence=a \
	-E aggregator=, "${args[@]}" 2>"$work/tshark.err" >"$work/tshark.tsv" || {
	cat "$work/tshark.err"
	exit 1
}
# tshark prints hex fields in lower case already; compare as text.
if ! diff -u "$work/expected.tsv" "$work/tshark.tsv" >"$work/diff.txt"; then
	head -40 "$work/diff.txt"
	echo "tshark disagrees on $(grep -c '^-[0-9]' "$work/diff.txt") of $(wc -l <"$work/expected.tsv") frames (files in $work)"
	exit 1
fi
frames=$(wc -l <"$work/expected.tsv")
# Wireshark splices read-chunk data into the inline RPC message at each chunk's XDR position;
# the synthetic messages here have positions past their short RPC body, which its RPC layer
# (not the rpcordma header decoder) reports as malformed. Any other malformed frame fails.
malformed=$(tshark -r "$work/rpcr.pcap" -Y '(_ws.malformed || _ws.expert.severity >= "error") &&
	!(rpcordma.reads_count > 0 && (rpcordma.msg_type == 0 || rpcordma.msg_type == 2))' \
	2>/dev/null | wc -l)
if [ "$malformed" -ne 0 ]; then
	echo "tshark reports $malformed malformed frame(s)"
	exit 1
fi
echo "tshark agrees on all $frames frames (xid, version, credits, type, chunk lists, errors)"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Independent decoder agreement: rpcr's version 1 encodings, sent as RoCEv2 frames in a pcap,
# must be decoded by Wireshark's rpcordma dissector (tshark) into the same xid, credits, message
# type, chunk lists and error fields that rpcr put in. Exit 0 on agreement, 1 on any difference,
# 77 (meson's "skipped") when tshark is not installed.
#
# usage: tshark-check.sh MKPCAP_BINARY [WORK_DIR [RANDOM_COUNT]]
set -euo pipefail

mkpcap=$1
work=${2:-$(mktemp -d)}
count=${3:-500}

if ! command -v tshark >/dev/null 2>&1; then
	echo "tshark not installed (apt-get install tshark): skipped"
	exit 77
fi
mkdir -p "$work"
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

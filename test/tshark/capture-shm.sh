#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# The engine's own capture (rpcr-perf --pcap, lib/xprt/capture.c) read by an independent decoder:
# rpcr-perf --loopback lat and bw over shm, both sides capturing; then, for the client's file and
# the server's, tshark (Wireshark's own rpcordma dissector) must
#   - decode every SEND frame as rpcordma, and find every other frame an RDMA WRITE, an RDMA READ
#     request or its response (as many responses as requests);
#   - find nothing malformed and no expert error;
#   - count, by direction, as many calls and replies (RDMA_MSG, RDMA_NOMSG, RDMA_MSGP) as the
#     pollers counted (rpcr-perf's JSON: the client's calls_sent and replies_recv, the server's
#     calls_recv and replies_sent);
# the capture must have dropped nothing; and for the first frames that carry chunks, the chunk
# lists tshark shows (positions, handles, lengths, offsets) must be what rpcr-decode prints for
# the same bytes. Then version 2 (rpcr-perf --rpcrdma-version 2): rpcr's dissector (LUA) must
# claim every SEND frame of both files, find nothing malformed, and count as many calls and
# replies (RDMA2_MSG, RDMA2_NOMSG) each way as the pollers counted.
#
# Exit 0 on agreement, 1 on a difference, 77 (meson's "skipped") without tshark.
#
# usage: capture-shm.sh RPCR_PERF RPCR_DECODE LUA [WORK_DIR]
set -uo pipefail

perf=$1
decode=$2
lua=$3
work=${4:-$(mktemp -d)}
nchunks=40 # frames with chunks compared with rpcr-decode, per file

if ! command -v tshark >/dev/null 2>&1; then
	echo "tshark not installed (apt-get install tshark): skipped"
	exit 77
fi
rm -rf "$work"
mkdir -p "$work"
fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}

"$perf" -- --loopback lat bw --lat-sizes 64 --sizes 0,4096,65536 --procs echo,write,read \
	--seconds 0.01 --warmup 0.005 --baseline none --quiet --pcap "$work/perf.pcapng" \
	--json "$work/perf.json" >"$work/perf.out" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	cat "$work/perf.out"
	echo "FAIL: rpcr-perf exited $rc"
	exit 1
fi
grep "capture " "$work/perf.out"
# The counters the pollers kept (rpcr-perf's JSON).
stat() { grep -o "\"$1\": [0-9]*" "$work/perf.json" | head -1 | grep -o '[0-9]*$'; }
calls_sent=$(stat calls_sent)
replies_recv=$(stat replies_recv)
calls_recv=$(stat calls_recv)
replies_sent=$(stat replies_sent)
[ -n "$calls_sent" ] && [ -n "$calls_recv" ] || {
	cat "$work/perf.json"
	echo "FAIL: no counters in rpcr-perf's JSON"
	exit 1
}
drops=$(sed -n 's/.*capture .*, \([0-9]*\) dropped$/\1/p' "$work/perf.out" | awk '{ s += $1 } END { print s }')
[ "$(grep -c 'capture .* dropped$' "$work/perf.out")" -eq 2 ] || bad "two captures expected"
[ "${drops:-x}" = 0 ] || bad "the captures dropped $drops packets"

# check FILE OUT_WANT IN_WANT: every frame's kind, nothing malformed, the counts by direction.
check() {
	local f=$1 out_want=$2 in_want=$3 name
	name=$(basename "$f" .pcapng)
	tshark -r "$f" -T fields -E separator=/t -e frame.number -e frame.p2p_dir \
		-e infiniband.bth.opcode -e rpcordma.msg_type 2>/dev/null >"$work/$name.tsv"
	local summary
	summary=$(awk -F'\t' -v ow="$out_want" -v iw="$in_want" '
		{ n++ }
		# SEND ONLY (4) and SEND ONLY with Invalidate (23): an rpcordma message each.
		$3 == 4 || $3 == 23 {
			if ($4 == "") { nodec++; next }
			if ($4 <= 2) { if ($2 == 0) out++; else inn++ } else other++
			next
		}
		# RDMA WRITE ONLY (10), RDMA READ request (12) and response (16, one per request).
		$3 == 10 || $3 == 12 || $3 == 16 { rdma++; op[$3]++; next }
		{ odd++ }
		END {
			printf "%d frames: %d calls/replies out, %d in, %d other messages, %d RDMA, ", \
				n, out, inn, other, rdma
			printf "%d SENDs not decoded, %d of no kind rpcr sends; READ requests %d, ", \
				nodec, odd, op[12]
			printf "responses %d\n", op[16]
			exit !(n > 0 && nodec == 0 && odd == 0 && out == ow && inn == iw && \
				op[12] == op[16])
		}' "$work/$name.tsv")
	local ok=$?
	echo "$name: $summary (want $out_want out, $in_want in)"
	[ $ok -eq 0 ] || bad "$name: frames or counts differ"
	# Malformed: with a filter (the protocol tree built) and in the plain listing (no tree:
	# dissectors take other paths, an RDMA Write claiming more than it carries is caught there).
	local malformed plain
	malformed=$(tshark -r "$f" -Y '_ws.malformed || _ws.expert.severity >= "error"' \
		-T fields -e frame.number 2>/dev/null | wc -l)
	plain=$(tshark -r "$f" 2>/dev/null | grep -c -i 'malformed')
	[ "$malformed" -eq 0 ] && [ "$plain" -eq 0 ] ||
		bad "$name: malformed frames: $malformed (filtered), $plain (listed)"
}

# chunks FILE: the first frames with chunks, tshark's lists against rpcr-decode's.
chunks() {
	local f=$1 name n=0 same=0
	name=$(basename "$f" .pcapng)
	# (';' between fields: a tab, being white space to read, would merge empty ones.)
	tshark -r "$f" -T fields -E separator=';' -E occurrence=a -E aggregator=, \
		-e frame.number -e infiniband.bth.opcode -e frame.cap_len -e frame.len \
		-e rpcordma.position -e rpcordma.rdma_handle -e rpcordma.rdma_length \
		-e rpcordma.rdma_offset -e udp.payload 2>/dev/null |
		awk -F';' '$6 != ""' | head -n "$nchunks" >"$work/$name.chunks"
	while IFS=';' read -r num op caplen len pos hnd dlen off payload; do
		local hex want got
		# The payload: after the BTH (and IETH), without the ICRC when the frame is whole.
		hex=${payload:24}
		[ "$op" = 23 ] && hex=${hex:8}
		[ "$caplen" = "$len" ] && hex=${hex:0:$((${#hex} - 8))}
		want="$pos|$hnd|$dlen|$off"
		got=$("$decode" "$hex" 2>&1 | awk '
			{ for (i = 1; i < NF; i++) {
				if ($i == "position") p = p (p == "" ? "" : ",") $(i + 1)
				if ($i == "handle") h = h (h == "" ? "" : ",") $(i + 1)
				if ($i == "length" && $(i - 2) == "handle") l = l (l == "" ? "" : ",") $(i + 1)
				if ($i == "offset") o = o (o == "" ? "" : ",") $(i + 1)
			} }
			END { print p "|" h "|" l "|" o }')
		n=$((n + 1))
		if [ "$want" = "$got" ]; then
			same=$((same + 1))
		else
			bad "$name frame $num: tshark $want, rpcr-decode $got"
		fi
	done <"$work/$name.chunks"
	echo "$name: chunk lists of $n frames compared with rpcr-decode, $same the same"
	[ "$n" -gt 0 ] || bad "$name: no frame with chunks"
}

check "$work/perf.pcapng" "$calls_sent" "$replies_recv"
check "$work/perf-server.pcapng" "$replies_sent" "$calls_recv"
chunks "$work/perf.pcapng"
chunks "$work/perf-server.pcapng"
echo "an excerpt (tshark -r perf-server.pcapng), frames with chunks:"
tshark -r "$work/perf-server.pcapng" -Y "frame.number in {$(cut -d';' -f1 "$work/perf-server.chunks" |
	head -3 | paste -sd',')}" 2>/dev/null

# Version 2, rpcr's dissector.
"$perf" -- --loopback lat bw --lat-sizes 64 --sizes 0,4096 --procs echo,read --seconds 0.01 \
	--warmup 0.01 --baseline none --quiet --rpcrdma-version 2 --pcap "$work/v2.pcapng" \
	--json "$work/v2.json" >"$work/v2.out" 2>&1 || {
	cat "$work/v2.out"
	bad "rpcr-perf --rpcrdma-version 2 failed"
}
grep "capture " "$work/v2.out"
grep -q 'capture .*, 0 dropped$' "$work/v2.out" && [ "$(grep -c 'capture .*, 0 dropped$' "$work/v2.out")" -eq 2 ] ||
	bad "version 2: the captures dropped packets"
v2stat() { grep -o "\"$1\": [0-9]*" "$work/v2.json" | head -1 | grep -o '[0-9]*$'; }
v2check() {
	local f=$1 out_want=$2 in_want=$3 name summary bad2
	name=$(basename "$f" .pcapng)
	summary=$(tshark -X "lua_script:$lua" -r "$f" -T fields -E separator=';' -e frame.p2p_dir \
		-e infiniband.bth.opcode -e rpcrdma2.htype 2>/dev/null | awk -F';' -v ow="$out_want" \
		-v iw="$in_want" '
		$2 == 4 || $2 == 23 {
			if ($3 == "") { nodec++; next }
			if ($3 <= 1) { if ($1 == 0) out++; else inn++ } else other++
			next
		}
		{ rdma++ }
		END {
			printf "%d calls/replies out, %d in, %d other messages, %d RDMA, %d SENDs not claimed\n", \
				out, inn, other, rdma, nodec
			exit !(nodec == 0 && out == ow && inn == iw)
		}')
	local ok=$?
	echo "$name (version 2): $summary (want $out_want out, $in_want in)"
	[ $ok -eq 0 ] || bad "$name: version-2 frames or counts differ"
	bad2=$(tshark -X "lua_script:$lua" -r "$f" -Y '_ws.malformed || _ws.expert.severity >= "error"' \
		-T fields -e frame.number 2>/dev/null | wc -l)
	[ "$bad2" -eq 0 ] || bad "$name: $bad2 malformed version-2 frames"
}
v2check "$work/v2.pcapng" "$(v2stat calls_sent)" "$(v2stat replies_recv)"
v2check "$work/v2-server.pcapng" "$(v2stat replies_sent)" "$(v2stat calls_recv)"

[ $fail -eq 0 ] && echo "capture on shm: tshark agrees" || echo "capture on shm: differences (files in $work)"
exit $fail

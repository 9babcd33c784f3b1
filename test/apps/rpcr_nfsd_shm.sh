#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# rpcr-nfsd against rpcr's own NFSv3 client (test/nfs3_probe) over shm, two processes: MOUNT
# over TCP straight to --mount-port, MKDIR + 2000 CREATEs, 1 MiB WRITE (read chunk, kept in
# place) and READ (write chunk) compared byte for byte, READDIRPLUS to the end in reply chunks,
# then every other procedure, malformed arguments (GARBAGE_ARGS) and an unserved program
# (PROG_UNAVAIL). Then the server's counters are checked: WRITE data that came in read chunks
# was kept where it landed (not copied), only the 500 bytes sent inline were copied. Then a
# read-only export (CREATE gets NFS3ERR_ROFS) taking malformed arguments of every procedure
# (nfs3_probe --garbage: each answered, the server alive after), and --allow refusing a MNT.
# FSINFO: rtmax/wtmax 1 MiB, rtpref/wtpref 256 KiB, or what --io-pref says. Credentials: a
# flavour not served gets MSG_DENIED AUTH_BADCRED, AUTH_NONE is served; --allow refuses the RDMA
# connection (shm's peer is 127.0.0.1) as well as MNT. Duplicate request cache: with replies
# lost (shm's fault_disconnect on the server) 1000 GUARDED CREATE + REMOVE pairs all succeed,
# and without the cache (--drc 0) some fail. Permissions: nfs3_probe --perm-test (root and uid
# 1000). Two pollers (EAL lcores 0 and 1): each reads what the other's connection wrote (the
# data in the other poller's buffers), and both serve calls at once. The first run is captured
# (--pcap): tshark decodes every Send in it as RPC-over-RDMA, NFS inside.
#
# usage: rpcr_nfsd_shm.sh RPCR_NFSD NFS3_PROBE
set -u
nfsd=$1 probe=$2
# Ports and the shm address from the process id: other runs on this host keep theirs.
port=$((21000 + $$ % 4000))
mport=$((port + 4000))
addr=127.0.0.1:$port
log=$(mktemp)
pcap=$(mktemp --suffix=.pcapng)
trap 'rm -f "$log" "$pcap"' EXIT

# start_dev DEVARGS [OPTIONS]: rpcr-nfsd on that device; start [OPTIONS]: on plain shm.
start_dev() {
	local dev=$1
	shift
	: >"$log"
	"$nfsd" --dev "$dev" --addr "$addr" --mount-port "$mport" --bulk-bufs 256 "$@" >"$log" 2>&1 &
	srv=$!
	for _ in $(seq 50); do
		grep -q "MOUNT v3 on TCP" "$log" && break
		sleep 0.1
	done
}

start() {
	start_dev shm "$@"
}

stop() {
	kill -INT $srv
	wait $srv || rc=1
	echo "--- server"
	cat "$log"
}

probe() {
	timeout 120 "$probe" --dev shm --server 127.0.0.1 --port "$port" --mount-port "$mport" \
		--export /export "$@"
}

rc=0
echo "=== 1: every procedure (captured: --pcap)"
start --pcap "$pcap"
out=$(probe --dir dir2000 --populate 2000 --entries 2000 --all-procs) || rc=1
echo "$out"
echo "$out" | grep -q "rtmax 1048576, rtpref 262144, wtmax 1048576, wtpref 262144" || {
	echo "FAIL: FSINFO: not the default preferred size (256 KiB) under 1 MiB maxima"
	rc=1
}
stop
grep -q "written 1219076 B (1218576 kept in place, 500 copied from inline)" "$log" || {
	echo "FAIL: chunked WRITE data was copied, or inline data was not"
	rc=1
}
grep -q "garbage_args 2," "$log" || {
	echo "FAIL: expected 2 GARBAGE_ARGS replies"
	rc=1
}
# The capture: packets, none dropped; tshark (where installed) decodes every Send as
# RPC-over-RDMA and finds NFS in them. (Not "nothing malformed": the probe sends malformed
# arguments on purpose, and a WRITE's inline data is cut by the snap length.)
grep -Eq "rpcr-nfsd: capture .*: [1-9][0-9]* packets of [0-9]+ connection\(s\), 0 dropped" "$log" || {
	echo "FAIL: --pcap: no packets, or some dropped"
	rc=1
}
if command -v tshark >/dev/null; then
	sends=$(tshark -r "$pcap" -T fields -e infiniband.bth.opcode 2>/dev/null | grep -c -E '^(4|23)$')
	rdma=$(tshark -r "$pcap" -Y rpcordma -T fields -e frame.number 2>/dev/null | wc -l)
	nfs=$(tshark -r "$pcap" -Y "rpcordma && nfs" -T fields -e frame.number 2>/dev/null | wc -l)
	echo "capture: $sends Sends, $rdma decoded as RPC-over-RDMA, $nfs with NFS"
	[ "$sends" -gt 1000 ] && [ "$rdma" -eq "$sends" ] && [ "$nfs" -gt 1000 ] || {
		echo "FAIL: --pcap: tshark does not decode every Send, or finds no NFS"
		rc=1
	}
fi

echo "=== 2: --ro: CREATE refused with NFS3ERR_ROFS; malformed arguments of every procedure"
start --ro
out=$(probe)
echo "$out"
echo "$out" | grep -q "CREATE rpcr-interop: ok, status 30," || {
	echo "FAIL: CREATE on a read-only export was not refused with NFS3ERR_ROFS (30)"
	rc=1
}
probe --garbage || rc=1
stop

echo "=== 3: --allow 10.0.0.0/8: MNT from 127.0.0.1 refused (MNT3ERR_ACCES)"
start --allow 10.0.0.0/8
out=$(probe 2>&1)
echo "$out"
echo "$out" | grep -q "status 13" || {
	echo "FAIL: MNT from outside --allow was not refused"
	rc=1
}
stop

echo "=== 4: credentials: a flavour not served is denied AUTH_BADCRED; AUTH_NONE is served"
start
probe --cred-flavor 6 || rc=1
probe --cred-flavor 0 || rc=1
stop
grep -q "auth_badcred 2," "$log" || {
	echo "FAIL: expected 2 AUTH_BADCRED replies counted"
	rc=1
}

echo "=== 5: --allow 10.0.0.0/8: the RDMA connection (shm: from 127.0.0.1) refused too"
start --allow 10.0.0.0/8
if probe --no-mount; then
	echo "FAIL: an RDMA connection from outside --allow was accepted"
	rc=1
fi
stop
grep -q "RDMA connection from 127.0.0.1:0 refused (--allow; 1 refused so far)" "$log" || {
	echo "FAIL: the refused RDMA connection was not reported"
	rc=1
}

echo "=== 6: duplicate request cache: replies lost (shm fault_disconnect on the server), calls"
echo "    sent again with their xids: 1000 GUARDED CREATEs and REMOVEs all succeed"
fault=fault_seed=11,fault_disconnect=0.01
start_dev "shm:$fault"
probe --churn 1000 || rc=1
stop
hits=$(sed -n 's/.*replies kept, \([0-9]*\) calls answered from it.*/\1/p' "$log")
if [ "${hits:-0}" -eq 0 ]; then
	echo "FAIL: no call was answered from the duplicate request cache (no reply lost?)"
	rc=1
fi
echo "=== 6b: the same without the cache (--drc 0): the second executions fail"
start_dev "shm:$fault" --drc 0
if probe --churn 1000; then
	echo "FAIL: without a duplicate request cache every call still succeeded: the test above"
	echo "      would pass without one"
	rc=1
fi
stop

echo "=== 7: permissions: root and uid 1000 (mode bits, owner override, chmod/truncate rules)"
start
probe --perm-test || rc=1
stop

echo "=== 8: --io-pref 131072: FSINFO's rtpref/wtpref (rtmax and wtmax stay 1 MiB)"
start --io-pref 131072
out=$(probe) || rc=1
echo "$out"
echo "$out" | grep -q "rtmax 1048576, rtpref 131072, wtmax 1048576, wtpref 131072" || {
	echo "FAIL: FSINFO does not carry --io-pref 131072 as rtpref/wtpref"
	rc=1
}
stop

echo "=== 9: two pollers (lcores 0 and 1): connections round-robin over them, one store"
# Connection 1 (poller nfsd0) writes the 1 MiB file, 2 (nfsd1) reads it back from nfsd0's
# buffers, 3 (nfsd0) reads it too, 4 (nfsd1) writes it again, 5 (nfsd0) reads nfsd1's buffers;
# then two --churn runs and every procedure at once, on both pollers.
: >"$log"
"$nfsd" --no-huge --no-pci --iova-mode=va --log-level=error --lcores 0@0,1@1 \
	--file-prefix="rpcr-nfsd-$$" -- --dev shm --addr "$addr" --mount-port "$mport" \
	--bulk-bufs 256 >"$log" 2>&1 &
srv=$!
for _ in $(seq 50); do
	grep -q "MOUNT v3 on TCP" "$log" && break
	sleep 0.1
done
grep -q "2 pollers (lcores 0,1), connections round-robin" "$log" || {
	echo "FAIL: rpcr-nfsd did not start two pollers"
	rc=1
}
for args in "" --no-write --no-write "" --no-write; do
	out=$(probe $args) || {
		echo "$out"
		echo "FAIL: nfs3_probe $args on the two-poller server"
		rc=1
	}
	echo "$out" | grep "READ 1 MiB"
	# (A READ failed on one poller would be sent again on a new connection: not a pass.)
	echo "$out" | grep -q "at the end: .*speaking version 1, 1 connection(s)" || {
		echo "FAIL: nfs3_probe $args needed another connection"
		rc=1
	}
done
probe --churn 500 >/dev/null &
c1=$!
probe --churn 500 >/dev/null &
c2=$!
probe --dir d9 --populate 300 --entries 300 --all-procs >/dev/null || {
	echo "FAIL: every procedure, beside two --churn runs, on the two-poller server"
	rc=1
}
wait $c1 || rc=1
wait $c2 || rc=1
stop
if grep -q "send queue: \|wc_errors [1-9]" "$log"; then
	echo "FAIL: work requests failed on the two-poller server"
	rc=1
fi
grep -Eq "calls per poller: nfsd0 [1-9][0-9]* nfsd1 [1-9]" "$log" || {
	echo "FAIL: the two pollers did not both serve calls"
	rc=1
}
exit $rc

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# rpcr-nfsd against rpcr's own NFSv3 client (test/nfs3_probe) over shm, two processes: MOUNT
# over TCP straight to --mount-port, MKDIR + 2000 CREATEs, 1 MiB WRITE (read chunk, kept in
# place) and READ (write chunk) compared byte for byte, READDIRPLUS to the end in reply chunks,
# then every other procedure, malformed arguments (GARBAGE_ARGS) and an unserved program
# (PROG_UNAVAIL). Then the server's counters are checked: WRITE data that came in read chunks
# was kept where it landed (not copied), only the 500 bytes sent inline were copied.
#
# usage: rpcr_nfsd_shm.sh RPCR_NFSD NFS3_PROBE
set -u
nfsd=$1 probe=$2
# Ports and the shm address from the process id: other runs on this host keep theirs.
port=$((21000 + $$ % 4000))
mport=$((port + 4000))
addr=127.0.0.1:$port
log=$(mktemp)
trap 'rm -f "$log"' EXIT

"$nfsd" --dev shm --addr "$addr" --mount-port "$mport" --bulk-bufs 256 >"$log" 2>&1 &
srv=$!
for _ in $(seq 50); do
	grep -q "MOUNT v3 on TCP" "$log" && break
	sleep 0.1
done
rc=0
timeout 120 "$probe" --dev shm --server 127.0.0.1 --port "$port" --mount-port "$mport" \
	--export /export --dir dir2000 --populate 2000 --entries 2000 --all-procs || rc=1
kill -INT $srv
wait $srv || rc=1
echo "--- server"
cat "$log"
grep -q "written 1219076 B (1218576 kept in place, 500 copied from inline)" "$log" || {
	echo "FAIL: chunked WRITE data was copied, or inline data was not"
	rc=1
}
grep -q "garbage_args 2," "$log" || {
	echo "FAIL: expected 2 GARBAGE_ARGS replies"
	rc=1
}
exit $rc

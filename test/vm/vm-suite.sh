#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# The soft-RoCE suite: boots one throw-away guest (test/vm/rpcr-vm.sh: Debian's kernel, rdma_rxe
# devices rxe0, and rxe_a <-> rxe_b across a veth pair, the kernel NFS server) and runs a batch of
# tests built on this host inside it, one boot for all of them. Each test's output goes to
# BUILD/vm-logs/NAME.log; the summary is one line a test and "N passed, N failed" last.
#
# usage: test/vm/vm-suite.sh BUILD_DIR [NAME ...]     (names: only those; --list: the names)
# Needs root (the harness installs qemu and rdma-core's tools on first use and boots QEMU).
# Environment: RPCR_VM_TIMEOUT (seconds for the whole boot, default 1740), and rpcr-vm.sh's.
# (The boot takes 1090-1500 s on the 2-core CI machine: the kernel NFS client's rxe stalls, 60 s
# each, in rpcr_nfsd_nfs3 and rpcr_nfsd_ratio make the difference.)
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

# The tests: t NAME "what it proves" COMMAND (run in the guest from the build directory; a
# COMMAND starting with "needs:FILE " is skipped when the build has no FILE), and checks run on
# the host after the boot: h NAME AFTER "what" COMMAND (only when test AFTER passed).
names=() whats=() cmds=() hnames=() hafter=() hwhats=() hcmds=()
t() { names+=("$1"); whats+=("$2"); cmds+=("$3"); }
h() { hnames+=("$1"); hafter+=("$2"); hwhats+=("$3"); hcmds+=("$4"); }
ibv=needs:librpcr.so.0.1.0.p/drivers_rdev_ibverbs_vrb_ctrl.c.o
t rxe_devices "the guest has the soft-RoCE pair, ports active" \
	"ibv_devices | grep -q rxe_a && ibv_devices | grep -q rxe_b && ibv_devinfo -d rxe_a | grep -q PORT_ACTIVE"
t rdma_cm_pair "rdma_cm connects rxe_a to rxe_b across the veth pair (rping)" \
	"rping -s -a 10.77.1.2 -C 4 -v >/dev/null & sleep 1; rping -c -a 10.77.1.2 -C 4 -v; rc=\$?; wait; exit \$rc"
t rdev_conformance_rxe0 "the driver conformance suite on the ibverbs driver, rxe0 to itself" \
	"$ibv RPCR_CONFORMANCE_RACE_ROUNDS=3000 test/rdev_conformance --dev ibverbs:dev=rxe0 --addr 10.77.0.1:20079"
t rdev_conformance_pair "the driver conformance suite between rxe_a and rxe_b across the veth pair" \
	"$ibv RPCR_CONFORMANCE_RACE_ROUNDS=3000 test/rdev_conformance --dev ibverbs:dev=rxe_a --cdev ibverbs:dev=rxe_b --addr 10.77.1.1:20079"
t xprt_e2e_pair "the engine end to end (every case of the shm run) between rxe_a and rxe_b" \
	"$ibv timeout 600 test/test_xprt_e2e --dev ibverbs:dev=rxe_a --cdev ibverbs:dev=rxe_b --addr 10.77.1.1:20083"
t hostile_pair "the hostile-peer test between rxe_a and rxe_b (every case of the shm run, a well-behaved client calling throughout)" \
	"$ibv timeout 600 test/test_hostile --dev ibverbs:dev=rxe_a --cdev ibverbs:dev=rxe_b --addr 10.77.1.1:20085"
t xprt_srq_pair "the server poller's shared receive queue between rxe_a and rxe_b (test_srq: 24 clients asking more credits than the queue holds, every call answered, no RNR, the grants within the queue's budget, half the clients gone with calls out, the refusal past the budget)" \
	"$ibv timeout 120 test/test_srq --dev ibverbs:dev=rxe_a --cdev ibverbs:dev=rxe_b --addr 10.77.1.1:20087 --calls 6000"
t knfsd_nfs41 "NFSv4.1 to the kernel NFS server over RDMA (rxe_a -> knfsd on rxe_b) with the back channel on rpcr's connection: READ/WRITE 0 B..1 MiB, 20 read delegations recalled by a local writer (CB_RECALL answered, DELEGRETURN), a forced reconnect bound with BIND_CONN_TO_SESSION and a recall over it; then the kernel's own v4.1 client recalled the same way; captured" \
	"needs:test/nfs41_probe timeout 420 bash $here/knfsd-nfs41.sh"
t knfsd_nfs3 "rpcr's client against the kernel NFS server over RDMA (rxe_a -> knfsd on rxe_b), with and without RFC 8797 private data, and as a client of versions 1 and 2 (ERR_VERS, then version 1 on the same connection), captured" \
	"needs:test/nfs3_probe bash $here/knfsd-nfs3.sh"
t rpcr_nfsd_nfs3 "the kernel NFS client mounts rpcr-nfsd over RDMA (rxe_a -> rpcr-nfsd on rxe_b): mkdir/rmdir, 2000 files and ls -l, 64 MiB dd written and read back with cmp, rename, symlink, hard link, chmod, truncate, rm -r, umount; then the same against knfsd (throughput baseline)" \
	"$ibv bash $here/rpcr-nfsd-nfs3.sh"
t rpcr_nfsd_ratio "throughput of rpcr-nfsd against knfsd, the kernel client writing and reading 64 MiB, three rounds (none started after 240 s of them) alternating between the servers in one boot after a warm-up pass on each (medians; reported, not enforced)" \
	"$ibv NFSD_ROUNDS=3 bash $here/nfsd-ratio.sh"
t perf_rxe "perftest and rpcr-perf on the pair in one boot, rpcr's traffic captured" \
	"$ibv bash $here/perf-rxe.sh"
# Last in the boot: the mlx5 driver whole on the queue model over soft-RoCE
# (drivers/rdev/mlx5/mlx5_glue.h): its
# control path on the rxe devices, its WQEs executed and its CQEs written by
# test/rdev/mlx5_model_rxe.c, loaded in place of libmlx5.
mx="needs:test/libmlx5_model_rxe.so export RPCR_MLX5_GLUE=\$B/test/libmlx5_model_rxe.so;"
t mlx5_conformance "the driver conformance suite on the mlx5 driver, rxe_a to rxe_b, its work queue entries executed by the queue model" \
	"$mx timeout 300 test/rdev_conformance --dev mlx5:dev=rxe_a --cdev mlx5:dev=rxe_b --addr 10.77.1.1:20101"
t mlx5_srq "the server poller's shared receive queue on the mlx5 driver (test_srq), rxe_a to rxe_b on the queue model" \
	"$mx timeout 150 test/test_srq --dev mlx5:dev=rxe_a --cdev mlx5:dev=rxe_b --addr 10.77.1.1:20111 --calls 3000"
t mlx5_e2e "the engine end to end on the mlx5 driver (every case of the shm run), rxe_a to rxe_b on the queue model; then mlx5 serving ibverbs clients, received messages of up to 32 bytes in the CQE" \
	"$mx timeout 400 test/test_xprt_e2e --dev mlx5:dev=rxe_a --cdev mlx5:dev=rxe_b --addr 10.77.1.1:20103 && RPCR_MLX5_MODEL_SCATTER=1 timeout 400 test/test_xprt_e2e --dev mlx5:dev=rxe_a --cdev ibverbs:dev=rxe_b --addr 10.77.1.1:20105"
t mlx5_hostile "the hostile-peer test on the mlx5 driver, rxe_a to rxe_b on the queue model" \
	"$mx timeout 400 test/test_hostile --dev mlx5:dev=rxe_a --cdev mlx5:dev=rxe_b --addr 10.77.1.1:20107"
t mlx5_soak "a 60-second soak on the mlx5 driver, rxe_a to rxe_b on the queue model (mixed calls, no injected faults)" \
	"$mx timeout 200 test/test_soak --dev mlx5:dev=rxe_a --cdev mlx5:dev=rxe_b --addr 10.77.1.1:20109 --faults '' --server-faults '' --seconds 60 --max-size 262144 --timeout-ms 60000"
h tshark_rpcr perf_rxe "tshark decodes every rpcr message of the capture as RPC-over-RDMA, none malformed" \
	"$here/check-capture.sh vm-logs/rpcr.pcap vm-logs/perf-srv.txt"
h own_capture_rxe perf_rxe "rpcr's own capture (rpcr-perf --pcap) against tcpdump's of the same run on the veth: the server's messages each way and its RDMA Write and Read requests in order equal the wire's, the client's an unbroken run of the wire's, nothing dropped" \
	"$here/check-own-capture.sh vm-logs/rpcr.pcap vm-logs/rpcr-own-cli.pcapng vm-logs/rpcr-own-srv.pcapng 10.77.1.1 10.77.1.2 vm-logs/perf-capture.txt vm-logs/perf-srv.txt vm-logs/tcpdump.txt"
h tshark_v2_rpcr perf_rxe "rpcr's dissector on rpcr's own version-2 traffic: every Send claimed, none malformed, every field equal to rpcr-decode's for the same bytes, Sends (their packets put back together) = calls + replies + CONNPROPs + continuation parts, as many with MORE" \
	"python3 $here/check-v2-capture.py vm-logs/rpcr-v2.pcap vm-logs/perf-srv-v2.txt apps/rpcr-decode/rpcr-decode"
h tshark_knfsd knfsd_nfs3 "tshark decodes the interop capture as RPC-over-RDMA carrying NFS, none malformed" \
	"$here/check-capture.sh vm-logs/knfsd.pcap - 10.77.1.1"
h tshark_v2_fallback knfsd_nfs3 "the version-2 fallback on the wire: exactly one version-2 message from rpcr, knfsd's ERR_VERS to it, then version 1 carrying NFS on the same connection, none malformed" \
	"$here/check-v2-fallback.sh vm-logs/knfsd-v2.pcap 10.77.1.1"
h tshark_nfs41 knfsd_nfs41 "tshark decodes the NFSv4.1 capture: rpcr's frames none malformed, knfsd's back-channel calls with empty chunk lists and all answered; recall round trips of rpcr and the kernel client" \
	"$here/check-nfs41.sh vm-logs"
h tshark_send_inv rpcr_nfsd_nfs3 "remote invalidation on the wire: rpcr-nfsd's Sends with Invalidate toward the kernel client (SEND ONLY/LAST WITH INVALIDATE frames, against its counter); knfsd's toward rpcr's clients reported" \
	"$here/check-send-inv.sh vm-logs"
h nfsd_ratios rpcr_nfsd_ratio "the rounds and medians of rpcr_nfsd_ratio" \
	"grep -E '^(round|RATIO)' vm-logs/rpcr_nfsd_ratio.log"
h perf_ratios perf_rxe "rpcr against perftest on the same pair: NULL round trip, 1 MiB READ" \
	"$here/perf-ratios.sh vm-logs"

if [ "${1:-}" = "--list" ] || [ "${2:-}" = "--list" ]; then
	for i in "${!names[@]}"; do
		printf '%-24s %s\n' "${names[$i]}" "${whats[$i]}"
	done
	for i in "${!hnames[@]}"; do
		printf '%-24s %s (on the host, after %s)\n' "${hnames[$i]}" "${hwhats[$i]}" "${hafter[$i]}"
	done
	exit 0
fi
[ $# -ge 1 ] || { sed -n '4,12p' "$0"; exit 2; }
build=$(cd "$1" && pwd) || { echo "vm-suite: no build directory $1" >&2; exit 2; }
shift
if [ "$(id -u)" != 0 ]; then
	echo "vm-suite: needs root (QEMU, and apt-get on first use)"
	exit 77
fi

logs=$build/vm-logs
rm -rf "$logs"
mkdir -p "$logs"
batch=$logs/batch.sh
{
	echo 'B=$(pwd); L=$B/vm-logs'
	echo 'export PATH=$PATH:/usr/sbin'
	for i in "${!names[@]}"; do
		name=${names[$i]} cmd=${cmds[$i]} what=${whats[$i]}
		if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then
			continue
		fi
		if [[ $cmd == needs:* ]]; then
			need=${cmd%% *}
			need=${need#needs:}
			cmd=${cmd#* }
			if [ ! -e "$build/$need" ]; then
				echo "echo 'RESULT $name skip (no $need in this build)'"
				continue
			fi
		fi
		printf 'echo "== %s: %s" > "$L/%s.log"\n' "$name" "$what" "$name"
		printf '( %s ) >> "$L/%s.log" 2>&1 < /dev/null\n' "$cmd" "$name"
		printf 'echo "RESULT %s $?"\n' "$name"
	done
} >"$batch"

out=$logs/guest.out
"$here/rpcr-vm.sh" -C "$build" -t "${RPCR_VM_TIMEOUT:-1740}" -- bash vm-logs/batch.sh \
	>"$out" 2>&1
vmrc=$?

passed=0
failed=0
skipped=0
while read -r tag name rc rest; do
	[ "$tag" = RESULT ] || continue
	case $rc in
	0)
		echo "ok   $name"
		passed=$((passed + 1))
		;;
	skip)
		echo "skip $name $rest"
		skipped=$((skipped + 1))
		;;
	*)
		echo "FAIL $name (exit $rc; $logs/$name.log):"
		tail -15 "$logs/$name.log" | sed 's/^/    /'
		failed=$((failed + 1))
		;;
	esac
done <"$out"
if [ $vmrc -ne 0 ] && [ $vmrc -ne 1 ]; then
	# 124: the boot timed out; 125: the guest could not start. Whatever did not report failed.
	echo "FAIL guest (rpcr-vm.sh exit $vmrc):"
	tail -20 "$out" | sed 's/^/    /'
	failed=$((failed + 1))
fi
for i in "${!hnames[@]}"; do
	name=${hnames[$i]} after=${hafter[$i]} cmd=${hcmds[$i]}
	if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then
		continue
	fi
	if ! grep -q "^RESULT $after 0" "$out"; then
		echo "skip $name (needs $after)"
		skipped=$((skipped + 1))
		continue
	fi
	if (cd "$build" && bash -c "$cmd") >"$logs/$name.log" 2>&1; then
		echo "ok   $name"
		sed 's/^/    /' "$logs/$name.log"
		passed=$((passed + 1))
	else
		echo "FAIL $name ($logs/$name.log):"
		tail -15 "$logs/$name.log" | sed 's/^/    /'
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# The soak (test/xprt/test_soak.c) over soft-RoCE, with the faults the shm driver injects itself
# (fault_* devargs, doc/rdev.md) provoked from outside, on the wire between rxe_a and rxe_b
# (veth0 of test/vm/rpcr-vm.sh's guest), in a loop while the soak runs:
#
#   delay       netem delay on veth0: every packet late, so every completion late
#               (fault_delay_us);
#   loss        netem loss: RC retransmits after its timer, completions very late;
#   disconnect  every packet dropped for longer than RC's retry budget (retry_cnt 7 times the
#               local ACK timeout; RDMA-CM gives rxe seconds): the QPs with work outstanding fail
#               with RETRY_EXC_ERR, the driver disconnects, the engine reconnects once packets
#               flow again (fault_disconnect). `ip link set veth0 down` would also do it, but
#               takes the policy routes that make rxe_a -> rxe_b cross the veth with it.
#
# Not provoked here: a receiver not ready (rpcr never lets it happen on purpose; the conformance
# suite's rnr case shows RNR on rxe) and registration failures (an unprivileged client under a
# small `prlimit --memlock`: ibv_reg_mr() fails with ENOMEM; root ignores the limit).
#
# usage (in the guest, from the build directory, as root):
#   bash test/vm/rxe-faults.sh [SECONDS]          (default 90; the soak's figures at the end)
# e.g. from the host: test/vm/rpcr-vm.sh -C build -- bash test/vm/rxe-faults.sh 90
set -u -o pipefail

secs=${1:-90}
dev=${RXE_FAULTS_DEV:-veth0}
soak=${RXE_FAULTS_SOAK:-test/test_soak}
[ -x "$soak" ] || { echo "rxe-faults: no $soak here (run from the build directory)" >&2; exit 2; }
command -v tc >/dev/null || { echo "rxe-faults: needs tc (iproute2)" >&2; exit 77; }
ip link show "$dev" >/dev/null 2>&1 || { echo "rxe-faults: no $dev" >&2; exit 77; }

clear() { tc qdisc del dev "$dev" root 2>/dev/null || true; }

faults() {
	local n=0
	sleep 5
	while :; do
		n=$((n + 1))
		echo "rxe-faults: round $n: delay 2 ms"
		tc qdisc replace dev "$dev" root netem delay 2ms
		sleep 4
		echo "rxe-faults: round $n: loss 2 %"
		tc qdisc replace dev "$dev" root netem loss 2%
		sleep 4
		clear
		sleep 2
		echo "rxe-faults: round $n: disconnect (every packet dropped for 8 s)"
		tc qdisc replace dev "$dev" root netem loss 100%
		sleep 8
		clear
		sleep 6
	done
}

clear
faults &
fpid=$!
trap 'kill $fpid 2>/dev/null; wait $fpid 2>/dev/null; clear' EXIT
# Smaller calls than on shm (soft-RoCE under emulation moves tens of MB/s), a longer call timeout
# than a dropped-packet window, and recovery that includes the window itself.
"$soak" --dev ibverbs:dev=rxe_a --cdev ibverbs:dev=rxe_b --addr 10.77.1.1:20097 \
	--faults "" --server-faults "" --external-faults --seconds "$secs" \
	--max-size "${RXE_FAULTS_MAX_SIZE:-262144}" --recovery-max-ms 60000 \
	--timeout-ms 60000

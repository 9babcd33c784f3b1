#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
#
# rpcr's own copy of the team's soft-RoCE guest harness (tools/rxe-vm/run-rxe-vm.sh), so that
# the project and its CI need nothing outside the tree. test/vm/vm-suite.sh runs a batch of
# test programs in one boot with it; `meson test --suite vm` calls that.
#
# rpcr-vm.sh - run a command inside a throw-away QEMU guest that has real
# soft-RoCE (rdma_rxe) verbs, optional soft-iWARP (siw), rdma-core userspace
# and the kernel NFS-over-RDMA stack (svcrdma server, xprtrdma client).
#
# The guest boots Debian 12's stock kernel (linux-image-6.1.0-*-amd64, fetched
# with apt-get download and unpacked with dpkg -x, never installed) and uses the
# HOST's own root filesystem, shared read-only over virtio-9p with a tmpfs
# overlay on top (virtme-style).  Everything installed on the host (rdma-core,
# perftest, nfs-kernel-server, test binaries you just built) exists in the
# guest at the same path.  The current directory (or -C DIR) is shared
# READ-WRITE at the same absolute path and the command runs there.
#
# Accelerator: on the Firecracker build machines /dev/kvm is PVM (kvm_pvm
# module, no VMX/SVM); it cannot boot a stock kernel (hangs right after
# "Probing EDD"), so the default there is TCG (software emulation, MTTCG).
# Where a normal /dev/kvm exists the script uses it.  Force with VM_ACCEL=kvm|tcg.
#
# Usage:
#   rpcr-vm.sh [options] [--] COMMAND [ARGS...]
#   rpcr-vm.sh --setup             # only install packages/kernel/initramfs
# Options:
#   -C DIR        directory shared read-write and used as cwd (default: $PWD)
#   -m MIB        guest memory (default 2048)
#   -c N          guest vCPUs (default 2; 1 boots faster on a loaded host)
#   -t SECS       timeout for the whole VM run (default 600); rc 124 on expiry
#   -e VAR=VAL    export VAR in the guest (repeatable)
#   --no-rxe      do not create any rxe device
#   --no-pair     do not create the veth pair / rxe_a / rxe_b
#   --siw         soft-iWARP: siw0 on eth0 INSTEAD of rxe0.  Debian's kernel
#                 ships no siw.ko, so the first use builds it out of tree from
#                 linux-source-X.Y + linux-headers-KVER (~200 MB download, ~20 s)
#   -v            print timings and the guest serial console at the end
#   -k            keep the run directory (default: removed on success)
#   --setup       prepare everything, do not boot
# Environment: VMLAB_DIR (default ${TMPDIR:-/tmp}/rpcr-vm: kernel, initramfs, runs/),
#   VM_ACCEL=kvm|tcg, VM_CPU (qemu -cpu), VM_APPEND (extra kernel args),
#   VM_HUGEPAGES (number of 2 MiB hugepages to reserve in the guest, default 0)
#
# Guest network (nothing is connected to the outside; eth0 sits on an empty hub):
#   eth0  10.77.0.1/24  rxe0 (or siw0 with --siw); traffic to the own address
#                       is short-circuited inside rxe/siw (never on a wire)
#   veth0 10.77.1.1/24  rxe_a \  a veth pair, both ends in init_net, with policy
#   veth1 10.77.1.2/24  rxe_b /  routing so a->b really crosses the veth:
#                       tcpdump -i veth0 udp port 4791 sees the RoCEv2 frames
#   Exported to the command: VMLAB_GUEST=1 VMLAB_IP VMLAB_RDMA_DEV VMLAB_IP_A
#   VMLAB_IP_B VMLAB_DEV_A VMLAB_DEV_B.  Helpers: '. /run/vmlab-lib.sh', then
#   'vm_nfs_server /export' starts rpcbind+mountd+nfsd (tcp 2049, rdma 20049);
#   mount -t nfs -o vers=3,proto=rdma,port=20049 10.77.1.2:/export /mnt
#   mount -t nfs -o vers=4.2,proto=rdma,port=20049 10.77.1.2:/ /mnt
#
# Test harness use (binary built on the host, run in the guest):
#   ninja -C build && rpcr-vm.sh -C "$PWD" -t 300 -- ./build/test/rdev_conformance ...
#   rpcr-vm.sh -- bash -c '. /run/vmlab-lib.sh; vm_nfs_server /export &&
#                             ./build/rpcrdma_client 10.77.1.2 20049'
# The command's stdout+stderr are streamed to stdout (stdin is /dev/null).
# Exit status: the command's exit status; 124 on timeout; 125 on VM failure.
set -u -o pipefail

VMLAB_DIR=${VMLAB_DIR:-${TMPDIR:-/tmp}/rpcr-vm}
MEM=2048 CPUS=2 TIMEOUT=600 VERBOSE=0 KEEP=0 SETUP_ONLY=0 RXE=1 PAIR=1 SIW=0
SHARE_DIR=$PWD
declare -a ENVS=()

die() { echo "rpcr-vm: $*" >&2; exit 125; }
log() { [ "$VERBOSE" = 1 ] && echo "rpcr-vm: $*" >&2; return 0; }

while [ $# -gt 0 ]; do
  case "$1" in
    -C) SHARE_DIR=$(cd "$2" && pwd) || die "bad -C"; shift 2;;
    -m) MEM=$2; shift 2;;
    -c) CPUS=$2; shift 2;;
    -t) TIMEOUT=$2; shift 2;;
    -e) ENVS+=("$2"); shift 2;;
    -v) VERBOSE=1; shift;;
    -k) KEEP=1; shift;;
    --no-rxe) RXE=0; shift;;
    --no-pair) PAIR=0; shift;;
    --siw) SIW=1; shift;;
    --setup) SETUP_ONLY=1; shift;;
    --) shift; break;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d'; exit 0;;
    -*) die "unknown option $1";;
    *) break;;
  esac
done
[ $# -gt 0 ] || [ "$SETUP_ONLY" = 1 ] || die "no command given (see --help)"
[ "$(id -u)" = 0 ] || die "must run as root (apt-get, /dev/kvm)"

mkdir -p "$VMLAB_DIR" || die "cannot create $VMLAB_DIR"
exec 9>"$VMLAB_DIR/.setup.lock"

# ---------------------------------------------------------------- packages
# Debian 12 packages needed on the host (the guest uses the host's root).
PKGS=(qemu-system-x86 busybox-static kmod cpio gzip iproute2 procps time
      rdma-core ibverbs-providers ibverbs-utils librdmacm1 rdmacm-utils perftest
      nfs-kernel-server nfs-common rpcbind tcpdump tshark)
need_pkgs() {
  local missing=() p
  for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # tshark asks whether non-root users may capture; answer no, silently
  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
  # do not let package installs start daemons on the host
  local prc=/usr/sbin/policy-rc.d created=0
  if [ ! -e $prc ]; then printf '#!/bin/sh\nexit 101\n' > $prc; chmod +x $prc; created=1; fi
  apt-get -o DPkg::Lock::Timeout=600 update -qq > "$VMLAB_DIR/apt.log" 2>&1 || true
  apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${missing[@]}" >> "$VMLAB_DIR/apt.log" 2>&1
  local rc=$?
  [ $rc = 0 ] || tail -40 "$VMLAB_DIR/apt.log" >&2
  [ $created = 1 ] && rm -f $prc
  [ $rc = 0 ] || die "apt-get install failed"
}

# ------------------------------------------------------------------ kernel
KDIR=$VMLAB_DIR/kernel
need_kernel() {
  local vmlinuz
  vmlinuz=$(ls "$KDIR"/boot/vmlinuz-* 2>/dev/null | head -1)
  if [ -z "$vmlinuz" ]; then
    local pkg
    pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
    [ -n "$pkg" ] || { apt-get update -qq >> "$VMLAB_DIR/apt.log" 2>&1; pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/{print $2; exit}'); }
    [ -n "$pkg" ] || die "cannot resolve linux-image-amd64"
    log "fetching kernel package $pkg"
    local dl=$VMLAB_DIR/dl
    mkdir -p "$dl"; rm -f "$dl"/*.deb
    ( cd "$dl" && apt-get download "$pkg" >> "$VMLAB_DIR/apt.log" 2>&1 ) || die "apt-get download $pkg failed (see $VMLAB_DIR/apt.log)"
    rm -rf "$KDIR.tmp"
    dpkg -x "$dl"/"$pkg"_*.deb "$KDIR.tmp" || die "dpkg -x failed"
    local kver; kver=$(ls "$KDIR.tmp/lib/modules")
    depmod -b "$KDIR.tmp" "$kver" || die "depmod failed"
    rm -rf "$KDIR"; mv "$KDIR.tmp" "$KDIR"; rm -f "$dl"/*.deb
  fi
  KVER=$(ls "$KDIR/lib/modules")
  VMLINUZ=$KDIR/boot/vmlinuz-$KVER
  [ -f "$VMLINUZ" ] || die "no kernel image in $KDIR"
}

# --------------------------------------------------------------- initramfs
# A tiny busybox initramfs: loads virtio/9p/overlay modules, mounts the host
# root (ro) + tmpfs overlay, the shared dirs, then switch_root's to stage2.
INITRD=$VMLAB_DIR/initrd.cpio.gz
need_initrd() {
  [ -f "$INITRD" ] && [ "$INITRD" -nt "$0" ] && [ "$INITRD" -nt "$VMLINUZ" ] && return 0
  log "building initramfs"
  local d=$VMLAB_DIR/initrd.d
  rm -rf "$d"; mkdir -p "$d"/{bin,dev,proc,sys,newroot,lower,rw,mods}
  cp /bin/busybox "$d/bin/busybox" || die "no /bin/busybox (busybox-static)"
  local m f
  for m in virtio_pci virtio_net 9pnet_virtio 9p overlay; do
    modprobe -d "$KDIR" -S "$KVER" --show-depends "$m" | awk '$1=="insmod"{print $2}'
  done | awk '!seen[$0]++' > "$d/mods.order"
  while read -r f; do cp "$f" "$d/mods/"; echo "$(basename "$f")"; done < "$d/mods.order" > "$d/mods.list"
  cat > "$d/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
for m in $(cat /mods.list); do insmod /mods/$m 2>/dev/null || echo "initrd: insmod $m failed"; done
fail() { echo "initrd: $*"; echo 125 > /dev/null; poweroff -f; }
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=524288,cache=loose hostroot /lower || fail "9p root mount failed"
mount -t tmpfs -o mode=755 tmpfs /rw; mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot || fail "overlay failed"
mkdir -p /newroot/.vmlab-run
mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288,cache=mmap vmrun /newroot/.vmlab-run || fail "vmrun mount failed"
. /newroot/.vmlab-run/config
mkdir -p "/newroot$VM_CWD"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288,cache=mmap cwd "/newroot$VM_CWD" || fail "cwd mount failed"
mkdir -p /newroot/usr/lib/modules/$VM_KVER
mount --bind "/newroot$VM_KDIR/lib/modules/$VM_KVER" /newroot/usr/lib/modules/$VM_KVER
mount --move /dev /newroot/dev; mount --move /proc /newroot/proc; mount --move /sys /newroot/sys
exec switch_root /newroot /bin/bash /.vmlab-run/stage2.sh
EOF
  chmod +x "$d/init"
  ( cd "$d" && find . | cpio -o -H newc --quiet | gzip -1 ) > "$INITRD.tmp" || die "cpio failed"
  mv "$INITRD.tmp" "$INITRD"
}

# --------------------------------------------------------------------- siw
need_siw() {
  local ko=$KDIR/lib/modules/$KVER/extra/siw.ko
  [ -f "$ko" ] && return 0
  log "building siw.ko for $KVER"
  local series=${KVER%%-*}; series=${series%.*}    # 6.1.0-56-amd64 -> 6.1
  export DEBIAN_FRONTEND=noninteractive
  dpkg-query -W -f='${Status}' "linux-headers-$KVER" 2>/dev/null | grep -q "install ok installed" ||
    apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "linux-headers-$KVER" >> "$VMLAB_DIR/apt.log" 2>&1 ||
    die "cannot install linux-headers-$KVER"
  local b=$VMLAB_DIR/siw-build
  rm -rf "$b"; mkdir -p "$b"
  ( cd "$b" && apt-get download "linux-source-$series" >> "$VMLAB_DIR/apt.log" 2>&1 ) || die "cannot download linux-source-$series"
  ( cd "$b" && dpkg-deb --fsys-tarfile linux-source-"$series"_*.deb |
      tar -xO "./usr/src/linux-source-$series.tar.xz" |
      tar -xJ "linux-source-$series/drivers/infiniband/sw/siw" ) || die "cannot extract siw source"
  rm -f "$b"/*.deb
  make -s -C "/usr/src/linux-headers-$KVER" M="$b/linux-source-$series/drivers/infiniband/sw/siw" \
       CONFIG_RDMA_SIW=m -j"$(nproc)" modules >&2 || die "siw build failed"
  mkdir -p "$(dirname "$ko")"
  cp "$b/linux-source-$series/drivers/infiniband/sw/siw/siw.ko" "$ko"
  depmod -b "$KDIR" "$KVER" || die "depmod failed"
}

# ------------------------------------------------------------------ stage2
# Runs as PID 1 in the guest's real root (host root + overlay).
write_stage2() {
  mkdir -p "$VMLAB_DIR/guest"
  cat > "$VMLAB_DIR/guest/stage2.sh" <<'EOF'
#!/bin/bash
# guest PID 1 (second stage).  Sets up the guest, runs /.vmlab-run/cmd.sh
R=/.vmlab-run
. $R/config
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb
finish() { echo "$1" > $R/rc; sync; echo o > /proc/sysrq-trigger 2>/dev/null; poweroff -f; }
mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /dev/pts /dev/shm /run/lock /var/lib/nfs/rpc_pipefs
mount -t devpts -o mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
echo 1 > /proc/sys/kernel/sysrq
hostname vmlab
echo "10.77.0.1 vmlab" >> /etc/hosts
ip link set lo up
# hugepages for DPDK-style apps (harmless if unused)
echo "${VM_HUGEPAGES:-0}" > /proc/sys/vm/nr_hugepages
mkdir -p /dev/hugepages && mount -t hugetlbfs nodev /dev/hugepages 2>/dev/null
NIC=$(ls /sys/class/net | grep -v '^lo$' | head -1)
if [ -n "$NIC" ]; then
  ip link set "$NIC" name eth0 2>/dev/null && NIC=eth0
  ip addr add 10.77.0.1/24 dev $NIC
  ip link set $NIC up
fi
if [ "$VM_RXE" = 1 ]; then
  modprobe rdma_rxe && modprobe ib_uverbs && modprobe rdma_ucm || echo "stage2: modprobe rdma failed" >&2
  if [ "$VM_SIW" = 1 ]; then
    modprobe siw || echo "stage2: modprobe siw failed" >&2
    [ -n "$NIC" ] && { rdma link add siw0 type siw netdev $NIC || echo "stage2: rdma link add siw0 failed" >&2; }
  else
    [ -n "$NIC" ] && { rdma link add rxe0 type rxe netdev $NIC || echo "stage2: rdma link add rxe0 failed" >&2; }
  fi
fi
if [ "$VM_PAIR" = 1 ]; then
  # veth0 (10.77.1.1, rxe_a) <-> veth1 (10.77.1.2, rxe_b), both in init_net (rdma_rxe
  # in 6.1 has its UDP/4791 socket in init_net only).  Policy routing forces
  # traffic between the two local addresses over the veth wire instead of lo,
  # so it is real RoCEv2 on a netdev and can be captured with tcpdump -i veth0.
  modprobe veth
  ip link add veth0 address 02:00:0a:4d:01:01 type veth peer name veth1 address 02:00:0a:4d:01:02
  ip addr add 10.77.1.1/24 dev veth0; ip addr add 10.77.1.2/24 dev veth1
  ip link set veth0 up; ip link set veth1 up
  for i in all default veth0 veth1; do
    sysctl -qw net.ipv4.conf.$i.accept_local=1 net.ipv4.conf.$i.rp_filter=0
  done
  ip rule add pref 10 to 10.77.1.2 iif lo lookup 100
  ip rule add pref 11 to 10.77.1.1 iif lo lookup 101
  ip rule add pref 200 lookup local && ip rule del pref 0 lookup local
  ip route add 10.77.1.2 dev veth0 src 10.77.1.1 table 100
  ip route add 10.77.1.1 dev veth1 src 10.77.1.2 table 101
  echo "10.77.1.1 vmlab-a" >> /etc/hosts; echo "10.77.1.2 vmlab-b" >> /etc/hosts
  if [ "$VM_RXE" = 1 ]; then
    rdma link add rxe_a type rxe netdev veth0 || echo "stage2: rdma link add rxe_a failed" >&2
    rdma link add rxe_b type rxe netdev veth1 || echo "stage2: rdma link add rxe_b failed" >&2
  fi
fi

# --- helpers usable from the command: . /run/vmlab-lib.sh ---
cat > /run/vmlab-lib.sh <<'LIB'
# start a kernel NFS server exporting $1 (created, tmpfs) over TCP 2049 and RDMA 20049
vm_nfs_server() {
  local dir=${1:-/export}
  mkdir -p "$dir"; mountpoint -q "$dir" || mount -t tmpfs -o size=1g tmpfs "$dir"
  modprobe nfsd && modprobe rpcrdma || return 1
  mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd
  mountpoint -q /var/lib/nfs/rpc_pipefs || mount -t rpc_pipefs sunrpc /var/lib/nfs/rpc_pipefs
  rpcbind -w 2>/dev/null || rpcbind
  # fsid=0: the export is also the NFSv4 pseudo-root (mount IP:/ for v4, IP:$dir for v3)
  echo "$dir *(rw,insecure,no_root_squash,no_subtree_check,fsid=0)" > /etc/exports
  exportfs -ra || return 1
  rpc.mountd || return 1
  rpc.nfsd 4 || return 1
  echo "rdma 20049" > /proc/fs/nfsd/portlist || return 1
  cat /proc/fs/nfsd/portlist
}
LIB
cd "$VM_CWD" || finish 125
. $R/env.sh
for kv in "${VM_ENV[@]}"; do export "$kv"; done
export VMLAB_GUEST=1 VMLAB_IP=10.77.0.1 VMLAB_RDMA_DEV=$([ "$VM_SIW" = 1 ] && echo siw0 || echo rxe0)
[ "$VM_PAIR" = 1 ] && export VMLAB_IP_A=10.77.1.1 VMLAB_IP_B=10.77.1.2 VMLAB_DEV_A=rxe_a VMLAB_DEV_B=rxe_b
echo "VMLAB_READY $(cut -d' ' -f1 /proc/uptime)" > /dev/ttyS0
bash $R/cmd.sh > $R/out 2>&1 < /dev/null
finish $?
EOF
}

# -------------------------------------------------------------------- main
flock 9
need_pkgs
need_kernel
need_initrd
[ "$SIW" = 1 ] && need_siw
write_stage2
flock -u 9
[ "$SETUP_ONLY" = 1 ] && { echo "setup done: kernel $KVER, $INITRD"; exit 0; }
# /dev/kvm on these Firecracker hosts is PVM (kvm_pvm): it only runs guest
# kernels built with CONFIG_PVM_GUEST, so a stock Debian kernel hangs there.
if [ -z "${VM_ACCEL:-}" ]; then
  if [ -e /dev/kvm ] && [ ! -d /sys/module/kvm_pvm ]; then ACCEL=kvm; else ACCEL=tcg; fi
else ACCEL=$VM_ACCEL; fi

mkdir -p "$VMLAB_DIR/runs"
RUN=$(mktemp -d "$VMLAB_DIR/runs/run.XXXXXX") || die "mktemp failed"
cp "$VMLAB_DIR/guest/stage2.sh" "$RUN/stage2.sh"
{
  printf 'VM_CWD=%q\nVM_KDIR=%q\nVM_KVER=%q\nVM_RXE=%q\nVM_PAIR=%q\nVM_SIW=%q\nVM_HUGEPAGES=%q\n' \
    "$SHARE_DIR" "$KDIR" "$KVER" "$RXE" "$PAIR" "$SIW" "${VM_HUGEPAGES:-0}"
} > "$RUN/config"
{ printf 'VM_ENV=('; [ ${#ENVS[@]} -gt 0 ] && printf '%q ' "${ENVS[@]}"; printf ')\n'; } > "$RUN/env.sh"
{ printf 'cd %q || exit 125\n' "$SHARE_DIR"; printf '%q ' "$@"; printf '\n'; } > "$RUN/cmd.sh"
: > "$RUN/out"

case "$ACCEL" in
  kvm) ACCEL_ARGS=(-machine pc -accel kvm -cpu "${VM_CPU:-host,-arch-capabilities}");;
  tcg) ACCEL_ARGS=(-machine pc -accel tcg,thread=multi,tb-size=512 -cpu "${VM_CPU:-max}");;
  *) die "bad accel $ACCEL";;
esac
log "accel=$ACCEL"
TIMECMD=(); [ -x /usr/bin/time ] && TIMECMD=(/usr/bin/time -f "%M" -o "$RUN/maxrss_kb")
QPID= TPID=
cleanup() { [ -n "$QPID" ] && kill "$QPID" 2>/dev/null; [ -n "$TPID" ] && kill "$TPID" 2>/dev/null; }
trap 'cleanup; exit 130' INT TERM HUP
T0=$(date +%s.%N)
"${TIMECMD[@]}" timeout -k 5 "$TIMEOUT" qemu-system-x86_64 \
  "${ACCEL_ARGS[@]}" -smp "$CPUS" -m "$MEM" \
  -nodefaults -no-user-config -display none -vga none -no-reboot \
  -serial file:"$RUN/console.log" -monitor none \
  -kernel "$VMLINUZ" -initrd "$INITRD" \
  -append "console=ttyS0 quiet loglevel=3 panic=-1 rdinit=/init ${VM_APPEND:-}" \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
  -virtfs local,path="$SHARE_DIR",mount_tag=cwd,security_model=none,multidevs=remap \
  -virtfs local,path="$RUN",mount_tag=vmrun,security_model=none \
  -netdev hubport,id=n0,hubid=0 -device virtio-net-pci,netdev=n0 \
  -device virtio-rng-pci \
  > "$RUN/qemu.log" 2>&1 &
QPID=$!
tail -n +1 --pid=$QPID -f "$RUN/out" &
TPID=$!
wait $QPID; QRC=$?
wait $TPID 2>/dev/null
T1=$(date +%s.%N)
log "vm wall time $(awk -v a="$T0" -v b="$T1" 'BEGIN{printf "%.2f", b-a}')s; guest $(grep -a -o 'VMLAB_READY [0-9.]*' "$RUN/console.log" | sed 's/VMLAB_READY/ready to run the command at uptime/')s; qemu max RSS $(tail -1 "$RUN/maxrss_kb" 2>/dev/null) kB"

if [ "$VERBOSE" = 1 ]; then echo "----- guest console -----" >&2; cat "$RUN/console.log" >&2; fi
if [ -s "$RUN/rc" ]; then
  RC=$(cat "$RUN/rc")
elif [ "$QRC" = 124 ] || [ "$QRC" = 137 ]; then
  echo "rpcr-vm: timeout after ${TIMEOUT}s" >&2; RC=124
else
  echo "rpcr-vm: VM died (qemu rc=$QRC) without a result; console:" >&2
  tail -30 "$RUN/console.log" >&2; cat "$RUN/qemu.log" >&2; RC=125
fi
if [ "$KEEP" = 1 ] || [ "$RC" != 0 ]; then log "run dir kept: $RUN"; else rm -rf "$RUN"; fi
exit "$RC"

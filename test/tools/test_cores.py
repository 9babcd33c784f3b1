#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
"""usertools/rpcr-cores: on this machine and on a made-up one.

usage: test_cores.py TOOL

This machine: the report of CPU 0 (text and JSON) parses and agrees with the kernel's files.
A made-up machine (RPCR_CORES_ROOT: four CPUs on two NUMA nodes; CPUs 2-3 isolated, tickless and
without RCU callbacks by the kernel command line, a device interrupt landing on CPU 3): the
verdicts, --check's exit status, every way of choosing CPUs (-l, -c, --lcores with groups,
an application's command line, the default lcore 0), hugepages per node, and bad input.
"""

import json
import os
import subprocess
import sys
import tempfile

failures = []


def check(cond, what, detail=''):
    print('%s - %s' % ('ok' if cond else 'not ok', what))
    if not cond:
        failures.append(what)
        if detail:
            print('  ' + detail.replace('\n', '\n  '))
    return cond


def tool(*args, root=None):
    env = dict(os.environ)
    env.pop('RPCR_CORES_ROOT', None)
    if root is not None:
        env['RPCR_CORES_ROOT'] = root
    return subprocess.run([sys.executable, TOOL] + list(args), env=env, capture_output=True,
                          text=True, timeout=60)


def put(root, path, text):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, 'w') as f:
        f.write(text)


def made_up(root):
    put(root, 'sys/devices/system/cpu/online', '0-3\n')
    put(root, 'sys/devices/system/cpu/isolated', '2-3\n')
    put(root, 'sys/devices/system/cpu/nohz_full', '2-3\n')
    put(root, 'proc/cmdline', 'BOOT_IMAGE=/vmlinuz root=/dev/sda1 isolcpus=managed_irq,'
        'domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 quiet\n')
    put(root, 'proc/interrupts',
        '           CPU0       CPU1       CPU2       CPU3       \n'
        '  0:         40          0          0          0   IO-APIC   2-edge      timer\n'
        ' 24:       1000        200          0        77   PCI-MSIX-0000:03:00.0 0-edge '
        'mlx5_comp0@pci:0000:03:00.0\n'
        ' 25:          5          0          0          0   PCI-MSIX-0000:00:02.0 1-edge '
        'nvme0q1\n'
        'LOC:       5000       4000        300        200   Local timer interrupts\n'
        'RES:         10         12          1          0   Rescheduling interrupts\n'
        'ERR:          0\n')
    put(root, 'proc/irq/24/smp_affinity_list', '0-3\n')
    put(root, 'proc/irq/25/smp_affinity_list', '0-1\n')
    put(root, 'sys/devices/system/node/node0/cpulist', '0-1\n')
    put(root, 'sys/devices/system/node/node1/cpulist', '2-3\n')
    for node, total, free in ((0, 512, 500), (1, 1024, 1024)):
        base = 'sys/devices/system/node/node%d/hugepages/hugepages-2048kB/' % node
        put(root, base + 'nr_hugepages', '%d\n' % total)
        put(root, base + 'free_hugepages', '%d\n' % free)
    put(root, 'sys/devices/system/node/node1/hugepages/hugepages-1048576kB/nr_hugepages', '2\n')
    put(root, 'sys/devices/system/node/node1/hugepages/hugepages-1048576kB/free_hugepages',
        '1\n')


def cpus(r):
    try:
        return {c['cpu']: c for c in json.loads(r.stdout)['cpus']}
    except (ValueError, KeyError, TypeError):
        return None


def main():
    # This machine.
    r = tool('-l', '0', '--json')
    got = cpus(r)
    check(r.returncode == 0 and got is not None and 0 in got, 'this machine: CPU 0 reported',
          r.stdout + r.stderr)
    if got is not None and 0 in got:
        iso = open('/sys/devices/system/cpu/isolated').read().strip()
        check(got[0]['isolated'] == (iso != '' and '0' in iso.replace('-', ',').split(',')),
              'this machine: isolated agrees with the kernel (%r)' % iso)
    r = tool('-l', '0')
    check(r.returncode == 0 and r.stdout.startswith('cpu ') and 'cpu 0: ' in r.stdout,
          'this machine: text report', r.stdout + r.stderr)

    with tempfile.TemporaryDirectory() as root:
        made_up(root)
        r = tool('-l', '1-3', '--json', root=root)
        got = cpus(r)
        check(r.returncode == 0 and got is not None and sorted(got) == [1, 2, 3],
              'made-up: -l 1-3 reports CPUs 1, 2, 3', r.stdout + r.stderr)
        if got is not None and sorted(got) == [1, 2, 3]:
            c1, c2, c3 = got[1], got[2], got[3]
            check(not c1['isolated'] and not c1['nohz_full'] and not c1['rcu_nocbs'] and
                  not c1['ready'] and len(c1['missing']) == 4,
                  'made-up: CPU 1 not isolated, not tickless, RCU, a device interrupt',
                  json.dumps(c1))
            check(c2['isolated'] and c2['nohz_full'] and c2['rcu_nocbs'] and c2['ready'] and
                  c2['device_irqs'] == [], 'made-up: CPU 2 ready (local timer ticks are not '
                  'device interrupts)', json.dumps(c2))
            check(not c3['ready'] and [d['irq'] for d in c3['device_irqs']] == ['24'] and
                  c3['device_irqs'][0]['count'] == 77 and
                  c3['missing'] == ['1 device interrupt line landed here'],
                  'made-up: CPU 3 isolated but mlx5_comp0 lands on it', json.dumps(c3))
            check(c1['irq_lines_allowed'] == 2 and c3['irq_lines_allowed'] == 1,
                  'made-up: interrupt lines allowed by affinity', json.dumps([c1, c3]))
            check(c1['node'] == 0 and c3['node'] == 1 and
                  c3['hugepages'] == [{'pagesize_kb': 2048, 'total': 1024, 'free': 1024},
                                      {'pagesize_kb': 1048576, 'total': 2, 'free': 1}],
                  'made-up: NUMA node and its hugepages', json.dumps([c1, c3]))
        r = tool('-l', '1-3', root=root)
        check(r.returncode == 0 and 'cpu 2: ready for a busy poller' in r.stdout and
              'cpu 3: 1 device interrupt line landed here' in r.stdout and
              'irq 24 (PCI-MSIX-0000:03:00.0 0-edge mlx5_comp0@pci:0000:03:00.0): 77 here'
              in r.stdout and '2M 1024/1024, 1G 2/1' in r.stdout,
              'made-up: text report', r.stdout)
        r = tool('-l', '2', '--check', root=root)
        check(r.returncode == 0, '--check: 0 when every CPU is ready', r.stdout)
        r = tool('-l', '2-3', '--check', root=root)
        check(r.returncode == 1, '--check: 1 when one is not', r.stdout)
        for args, want in ((['-c', '0xc'], {2: [2], 3: [3]}),
                           (['--lcores', '0@2,(1,4)@(3)'], {2: [0], 3: [1, 4]}),
                           (['--lcores', '1-2'], {1: [1], 2: [2]}),
                           (['--', 'rpcr-nfsd', '-l', '3', '--', '--dev', 'shm', '-l', '0'],
                            {3: [3]}),
                           (['--', 'rpcr-perf', '--lcores=5@2', '--', 'lat'], {2: [5]}),
                           (['--', 'rpcr-nfsd', '--', '--dev', 'shm'], {0: [0]}),
                           ([], {0: [0]})):
            r = tool(*(['--json'] + args), root=root)
            got = cpus(r)
            check(got is not None and {c: v['lcores'] for c, v in got.items()} == want,
                  'choosing CPUs: %s' % ' '.join(args), r.stdout + r.stderr)
        r = tool('-l', '3-1', root=root)
        check(r.returncode == 2 and 'goes down' in r.stderr, 'bad list: a range going down',
              r.stderr)
        r = tool('-l', 'x', root=root)
        check(r.returncode == 2 and 'not a CPU list' in r.stderr, 'bad list', r.stderr)
        r = tool('-l', '7', '--json', root=root)
        got = cpus(r)
        check(got is not None and not got[7]['online'] and 'offline or absent' in
              got[7]['missing'], 'a CPU that does not exist', r.stdout)

    print('%d failed' % len(failures))
    return 1 if failures else 0


if __name__ == '__main__':
    TOOL = sys.argv[1]
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
"""usertools/rpcr-hugepages: on this machine and on a made-up one.

usage: test_hugepages.py TOOL

This machine: --show (text and JSON) parses and agrees with itself. As root, in addition: one
1 GiB page reserved and released on node 0 when the 1 GiB pool there is empty and memory is
plentiful (the pool is put back to what it was whatever happens; the 2 MiB pool, which other
programs use, is never written), and a hugetlbfs mounted on a temporary directory and unmounted.

A made-up machine (RPCR_HUGEPAGES_ROOT: two nodes, 2M and 1G pools in plain files): --reserve,
--pages, --clear per node and machine-wide, the errors (unknown node, page size, a size without
a unit, no hugetlb at all, not root), and the short-reservation report (the tool loaded as a
module with the kernel's read-back made to come up short).
"""

import importlib.machinery
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import contextlib

failures = []
sys.dont_write_bytecode = True  # the tool is loaded as a module: no cache next to it


def check(cond, what, detail=''):
    print('%s - %s' % ('ok' if cond else 'not ok', what))
    if not cond:
        failures.append(what)
        if detail:
            print('  ' + detail.replace('\n', '\n  '))
    return cond


def tool(*args, root=None, python=None):
    env = dict(os.environ)
    env.pop('RPCR_HUGEPAGES_ROOT', None)
    if root is not None:
        env['RPCR_HUGEPAGES_ROOT'] = root
    return subprocess.run([python or sys.executable, TOOL] + list(args), env=env,
                          capture_output=True, text=True, timeout=60)


def parse_table(text):
    """The --show table: {(node, pagesize): (total, free, surplus)}; None if malformed."""
    lines = text.splitlines()
    if not lines or lines[0].split() != ['node', 'pagesize', 'total', 'free', 'surplus',
                                         'memory']:
        return None
    rows = {}
    for line in lines[1:]:
        f = line.split()
        if not f or not (f[0].isdigit() or f[0] == 'all'):
            break
        if len(f) != 7 or not all(x.isdigit() for x in f[2:5]):
            return None
        rows[(f[0], f[1])] = tuple(int(x) for x in f[2:5])
    return rows


# ---- this machine ----

def this_machine():
    r = tool('--help')
    check(r.returncode == 0 and '--reserve' in r.stdout and '--node' in r.stdout, '--help')
    if not os.path.isdir('/sys/kernel/mm/hugepages'):
        r = tool('--show')
        check(r.returncode == 1 and 'no hugetlb support' in r.stderr,
              'no hugetlb here: --show says so', r.stderr)
        return
    r = tool()
    rows = parse_table(r.stdout) if r.returncode == 0 else None
    check(rows, '--show (the default) parses', r.stdout + r.stderr)
    r2 = tool('--show', '--json')
    try:
        snap = json.loads(r2.stdout)
    except ValueError:
        snap = None
    check(r2.returncode == 0 and snap is not None, '--show --json parses', r2.stdout + r2.stderr)
    if not rows or not snap:
        return
    check(sorted({k[1] for k in rows}) == sorted(snap['pagesizes']) and
          {k[0] for k in rows if k[0] != 'all'} == set(snap['nodes']),
          'the table and the JSON name the same nodes and page sizes')
    check(all(set(c) >= {'total', 'free', 'surplus'} for c in snap['total'].values()),
          'JSON: counters for every page size')
    if os.geteuid() == 0:
        root_on_machine(snap)
    else:
        print('ok - reserve, clear and mount on this machine # SKIP not root')


def node0_1g_total():
    with open('/sys/devices/system/node/node0/hugepages/hugepages-1048576kB/nr_hugepages') as f:
        return int(f.read())


def root_on_machine(snap):
    # Reserve and release: the 1G pool of node 0 only, and only when nobody uses it.
    path = '/sys/devices/system/node/node0/hugepages/hugepages-1048576kB/nr_hugepages'
    avail = 0
    with open('/proc/meminfo') as f:
        for line in f:
            if line.startswith('MemAvailable:'):
                avail = int(line.split()[1]) << 10
    if not os.path.exists(path) or node0_1g_total() != 0 or avail < (4 << 30):
        print('ok - reserve and clear 1G on node 0 # SKIP no empty 1G pool on node 0, or '
              'less than 4 GiB available')
    else:
        try:
            r = tool('--reserve', '1G', '--pagesize', '1G', '--node', '0')
            got = node0_1g_total()
            # The kernel may find no contiguous GiB: then the tool must say so and fail.
            check((r.returncode == 0 and got == 1 and '1G pages on node 0: 1 (1 GiB)' in
                   r.stdout) or
                  (r.returncode == 1 and got == 0 and 'only 0 of the 1 pages' in r.stderr),
                  'reserve one 1G page on node 0 (got %d)' % got, r.stdout + r.stderr)
            r = tool('--clear', '--pagesize', '1G', '--node', '0')
            check(r.returncode == 0 and node0_1g_total() == 0, 'clear 1G on node 0',
                  r.stdout + r.stderr)
        finally:
            if node0_1g_total() != 0:
                with open(path, 'w') as f:
                    f.write('0\n')

    # Mount and unmount on a directory of our own.
    d = tempfile.mkdtemp(prefix='rpcr-hugetlbfs-')
    try:
        r = tool('--mount', '--directory', d)
        check(r.returncode == 0 and 'mounted on ' + d in r.stdout, '--mount', r.stdout + r.stderr)
        r = tool('--mount', '--directory', d)
        check(r.returncode == 0 and 'already mounted' in r.stdout, '--mount again: no-op',
              r.stdout + r.stderr)
        r = tool('--show', '--json')
        check(r.returncode == 0 and d in [m['path'] for m in json.loads(r.stdout)['mounts']],
              '--show lists the mount')
        r = tool('--unmount', '--directory', d)
        check(r.returncode == 0 and 'unmounted' in r.stdout, '--unmount', r.stdout + r.stderr)
        r = tool('--unmount', '--directory', d)
        check(r.returncode == 0 and 'no hugetlbfs mounted' in r.stdout, '--unmount again: no-op',
              r.stdout + r.stderr)
    finally:
        with open('/proc/mounts') as f:
            if (' %s hugetlbfs ' % d) in f.read():
                subprocess.run(['umount', d])
        os.rmdir(d)


# ---- a made-up machine ----

def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write(text)


def make_root(top):
    for kb, n in (('2048', 64), ('1048576', 0)):
        g = os.path.join(top, 'sys/kernel/mm/hugepages/hugepages-%skB' % kb)
        for name, v in (('nr_hugepages', n), ('free_hugepages', n // 2), ('resv_hugepages', 0),
                        ('surplus_hugepages', 0), ('nr_overcommit_hugepages', 0)):
            write(os.path.join(g, name), '%d\n' % v)
        for node in (0, 1):
            d = os.path.join(top, 'sys/devices/system/node/node%d/hugepages/hugepages-%skB' %
                             (node, kb))
            for name, v in (('nr_hugepages', n // 2), ('free_hugepages', n // 4),
                            ('surplus_hugepages', 0)):
                write(os.path.join(d, name), '%d\n' % v)
    write(os.path.join(top, 'proc/meminfo'), 'MemTotal: 1000 kB\nHugepagesize:       2048 kB\n')
    write(os.path.join(top, 'proc/mounts'),
          'proc /proc proc rw 0 0\nnodev /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0\n'
          'nodev /mnt/huge\\0401g hugetlbfs rw,relatime,pagesize=1024M 0 0\n')


def value(top, rel):
    with open(os.path.join(top, rel)) as f:
        return int(f.read())


def made_up_machine():
    top = tempfile.mkdtemp(prefix='rpcr-fake-root-')
    try:
        os.chmod(top, 0o755)
        make_root(top)
        n0 = 'sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages'
        n1 = 'sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages'
        g2 = 'sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages'
        g1 = 'sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages'

        r = tool('--show', root=top)
        rows = parse_table(r.stdout)
        check(rows == {('0', '2M'): (32, 16, 0), ('0', '1G'): (0, 0, 0),
                       ('1', '2M'): (32, 16, 0), ('1', '1G'): (0, 0, 0),
                       ('all', '2M'): (64, 32, 0), ('all', '1G'): (0, 0, 0)},
              'made up: --show table', r.stdout + r.stderr)
        check('/mnt/huge 1g  pagesize=1G' in r.stdout and '/dev/hugepages  pagesize=2M' in
              r.stdout, 'made up: mounts, escapes and 1024M read', r.stdout)
        r = tool('-s', '-j', root=top)
        snap = json.loads(r.stdout) if r.returncode == 0 else {}
        check(snap.get('default_pagesize') == '2M' and snap.get('pagesizes') == ['2M', '1G'] and
              sorted(snap.get('nodes', {})) == ['0', '1'] and
              snap['total']['2M']['total'] == 64, 'made up: --show --json', r.stdout + r.stderr)

        r = tool('--reserve', '8M', '--node', 'all', root=top)
        check(r.returncode == 0 and value(top, n0) == 4 and value(top, n1) == 4 and
              r.stdout.count('2M pages on node') == 2, 'made up: --reserve 8M --node all',
              r.stdout + r.stderr)
        r = tool('--reserve', '5M', '--node', '1', root=top)
        check(r.returncode == 0 and value(top, n1) == 3 and value(top, n0) == 4,
              'made up: --reserve rounds up to whole pages, one node', r.stdout + r.stderr)
        r = tool('--pages', '7', '-n', '0,1', root=top)
        check(r.returncode == 0 and value(top, n0) == 7 and value(top, n1) == 7,
              'made up: --pages 7 -n 0,1', r.stdout + r.stderr)
        r = tool('-r', '2G', '-p', '1G', root=top)
        check(r.returncode == 0 and value(top, g1) == 2 and
              '1G pages on the machine: 2 (2 GiB)' in r.stdout,
              'made up: --reserve 2G --pagesize 1G machine-wide', r.stdout + r.stderr)
        r = tool('--clear', '--pagesize', '2M', root=top)
        check(r.returncode == 0 and value(top, g2) == 0 and value(top, g1) == 2,
              'made up: --clear --pagesize 2M leaves 1G alone', r.stdout + r.stderr)
        r = tool('--clear', '--node', 'all', root=top)
        check(r.returncode == 0 and value(top, n0) == 0 and value(top, n1) == 0,
              'made up: --clear --node all', r.stdout + r.stderr)
        r = tool('--clear', root=top)
        check(r.returncode == 0 and value(top, g1) == 0, 'made up: --clear every size',
              r.stdout + r.stderr)

        r = tool('--reserve', '1G', '--node', '7', root=top)
        check(r.returncode == 1 and 'no NUMA node 7' in r.stderr, 'made up: unknown node',
              r.stderr)
        r = tool('--reserve', '1G', '--pagesize', '16M', root=top)
        check(r.returncode == 1 and 'no 16M hugepages' in r.stderr and '2M, 1G' in r.stderr,
              'made up: unknown page size', r.stderr)
        r = tool('--reserve', '100', root=top)
        check(r.returncode == 2 and 'with a unit' in r.stderr, 'a size without a unit',
              r.stderr)
        r = tool('--clear', '--pages', '3', root=top)
        check(r.returncode == 2, '--clear with --pages', r.stderr)

        empty = os.path.join(top, 'empty')
        os.makedirs(os.path.join(empty, 'proc'))
        r = tool('--show', root=empty)
        check(r.returncode == 1 and 'no hugetlb support' in r.stderr,
              'no hugetlb: a clear message', r.stderr)

        not_root(top, n0)
        short_reservation(top)
    finally:
        shutil.rmtree(top, ignore_errors=True)


def not_root(top, n0):
    """As another user (setpriv to nobody when root), writing the pool must say 'needs root'."""
    python = shutil.which('python3', path='/usr/bin:/bin')
    # As sysfs has it: writable by root only (the fake files belong to whoever runs the test).
    os.chmod(os.path.join(top, n0), 0o444)
    if os.geteuid() != 0:
        r = tool('--pages', '2', '--node', '0', root=top)
    elif python and shutil.which('setpriv') and os.access(TOOL, os.R_OK):
        nobody = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups']
        # A checkout under /root (mode 0700) is out of nobody's reach: nothing to test then.
        r = subprocess.run(nobody + [python, '-c', 'open(%r).close()' % TOOL],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            print('ok - not root # SKIP nobody cannot read the tool (%s)' % TOOL)
            return
        env = dict(os.environ, RPCR_HUGEPAGES_ROOT=top)
        r = subprocess.run(nobody + [python, TOOL, '--pages', '2', '--node', '0'],
                           env=env, capture_output=True, text=True, timeout=60)
    else:
        print('ok - not root # SKIP no setpriv or /usr/bin/python3')
        return
    check(r.returncode == 1 and 'needs root' in r.stderr and value(top, n0) == 0,
          'not root: a clear message, nothing written', r.stdout + r.stderr)


def short_reservation(top):
    """The kernel grants fewer pages than asked: the tool reports how many, status 1."""
    os.environ['RPCR_HUGEPAGES_ROOT'] = top
    try:
        loader = importlib.machinery.SourceFileLoader('rpcr_hugepages', TOOL)
        spec = importlib.util.spec_from_loader('rpcr_hugepages', loader)
        mod = importlib.util.module_from_spec(spec)
        loader.exec_module(mod)
    finally:
        del os.environ['RPCR_HUGEPAGES_ROOT']
    real = mod.read_int

    def stingy(path):
        # As a kernel with room for 3 pages would answer.
        v = real(path)
        return min(v, 3) if path.endswith('nr_hugepages') else v

    mod.read_int = stingy
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        rc = mod.main(['--pages', '8', '--node', '1'])
    check(rc == 1 and 'only 3 of the 8 pages' in err.getvalue() and
          '6 MiB of 16 MiB' in err.getvalue(), 'short reservation: reported, status 1',
          out.getvalue() + err.getvalue())


def main():
    this_machine()
    made_up_machine()
    if failures:
        print('%d failed: %s' % (len(failures), ', '.join(failures)))
        return 1
    return 0


if __name__ == '__main__':
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    TOOL = os.path.abspath(sys.argv[1])
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
"""usertools/rpcr-rxe against fake system tools, and its read-only paths on this machine.

usage: test_rxe.py TOOL

The tool runs with PATH set to a directory of fakes (id, uname, ip, modinfo, modprobe, rdma:
small sh scripts steered by environment variables, each logging its arguments) and
RPCR_RXE_SYSFS pointing at a made-up /sys, so that every path runs on any machine, rdma_rxe or
not, root or not: argument checks, the missing rdma tool, not root, the missing module, a failing
modprobe, the default route, existing devices, add, del and show. On this machine itself only
`--help`, `show`, and (when this kernel has no rdma_rxe) `add` failing with a clear message.
"""

import os
import shutil
import stat
import subprocess
import sys
import tempfile

failures = []

FAKES = {
    'id': '[ "$1" = -u ] && echo "${FAKE_UID:-0}"\n',
    'uname': 'echo 6.1.0-fake-amd64\n',
    'modinfo': 'echo "modinfo $*" >>"$FAKE_LOG"\n'
               'if [ -n "${FAKE_NO_MODULE:-}" ]; then\n'
               '  echo "modinfo: ERROR: Module $1 not found." >&2; exit 1\n'
               'fi\n'
               'echo "filename: /lib/modules/6.1.0-fake-amd64/rdma_rxe.ko"\n',
    'modprobe': 'echo "modprobe $*" >>"$FAKE_LOG"\n'
                'if [ -n "${FAKE_MODPROBE_ERR:-}" ]; then\n'
                '  echo "$FAKE_MODPROBE_ERR" >&2; exit 1\n'
                'fi\n',
    'ip': 'echo "ip $*" >>"$FAKE_LOG"\n'
          '[ -n "${FAKE_ROUTE:-}" ] && printf "%s\\n" "$FAKE_ROUTE"\n'
          'exit 0\n',
    'rdma': 'echo "rdma $*" >>"$FAKE_LOG"\n'
            'if [ -n "${FAKE_NO_NETLINK:-}" ]; then\n'
            '  echo "Failed to open NETLINK_RDMA socket" >&2; exit 1\n'
            'fi\n'
            'case "$1 $2" in\n'
            '"link show")\n'
            '  [ -f "$FAKE_LINKS" ] && while IFS= read -r l; do echo "$l"; done <"$FAKE_LINKS"\n'
            '  exit 0 ;;\n'
            '"link add")\n'
            '  [ -n "${FAKE_ADD_ERR:-}" ] && { echo "$FAKE_ADD_ERR" >&2; exit 1; }\n'
            '  echo "link $3/1 state ACTIVE physical_state LINK_UP netdev $7" >>"$FAKE_LINKS"\n'
            '  exit 0 ;;\n'
            '"link delete") exit 0 ;;\n'
            'esac\n'
            'exit 1\n',
}


def check(cond, what, detail=''):
    print('%s - %s' % ('ok' if cond else 'not ok', what))
    if not cond:
        failures.append(what)
        if detail:
            print('  ' + detail.replace('\n', '\n  '))
    return cond


class Fake:
    """A directory of fake tools and a made-up /sys; one per case, so logs start empty."""

    def __init__(self, top, name, omit=(), module_loaded=False, links=''):
        self.dir = os.path.join(top, name)
        self.bin = os.path.join(self.dir, 'bin')
        self.sys = os.path.join(self.dir, 'sys')
        self.log = os.path.join(self.dir, 'log')
        self.links = os.path.join(self.dir, 'links')
        os.makedirs(self.bin)
        for tool, body in FAKES.items():
            if tool in omit:
                continue
            path = os.path.join(self.bin, tool)
            with open(path, 'w') as f:
                f.write('#!/bin/sh\n' + body)
            os.chmod(path, stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH |
                     stat.S_IXOTH)
        for netdev in ('eth0', 'ens3'):
            os.makedirs(os.path.join(self.sys, 'class/net', netdev))
        if module_loaded:
            os.makedirs(os.path.join(self.sys, 'module/rdma_rxe'))
        with open(self.links, 'w') as f:
            f.write(links)
        open(self.log, 'w').close()

    def run(self, *args, **env):
        e = {'PATH': self.bin, 'RPCR_RXE_SYSFS': self.sys, 'FAKE_LOG': self.log,
             'FAKE_LINKS': self.links, 'FAKE_ROUTE': 'default via 10.0.0.1 dev eth0 proto dhcp'}
        e.update(env)
        return subprocess.run([BASH, TOOL] + list(args), env=e, capture_output=True, text=True,
                              timeout=30)

    def logged(self):
        with open(self.log) as f:
            return f.read()


def usage_checks(top):
    f = Fake(top, 'usage')
    for args, what in ((['add', '--name', 'bad name'], 'a name with a space'),
                       (['add', '--name', 'x' * 64], 'a name of 64 characters'),
                       (['add', '--name'], '--name without a value'),
                       (['add', '--netdev', 'a/b'], 'an interface name with /'),
                       (['add', '--netdev', 'abcdefghijklmnop'], 'an interface name of 16'),
                       (['add', '--frob'], 'an unknown option'),
                       (['del'], 'del without a name'),
                       (['del', 'a', 'b'], 'del with two names'),
                       (['show', 'x'], 'show with an argument'),
                       (['frob'], 'an unknown subcommand'),
                       ([], 'no subcommand')):
        r = f.run(*args)
        check(r.returncode == 2 and r.stderr.startswith('rpcr-rxe: ') and 'usage:' in r.stderr,
              'usage error: %s' % what, r.stdout + r.stderr)
    check('rdma link add' not in f.logged(), 'usage errors change nothing', f.logged())
    r = f.run('--help')
    check(r.returncode == 0 and 'rpcr-rxe add [--netdev IF] [--name NAME]' in r.stdout and
          'rpcr-rxe del NAME' in r.stdout, '--help', r.stdout + r.stderr)


def missing_checks(top):
    f = Fake(top, 'nordma', omit=('rdma',))
    for sub in (['add'], ['del', 'rxe0'], ['show']):
        r = f.run(*sub)
        check(r.returncode == 1 and 'rdma tool is missing' in r.stderr and 'iproute2' in r.stderr,
              'no rdma tool: %s' % sub[0], r.stderr)

    f = Fake(top, 'notroot')
    r = f.run('add', FAKE_UID='1000')
    check(r.returncode == 1 and 'needs root' in r.stderr and 'sudo rpcr-rxe add' in r.stderr,
          'add as non-root', r.stderr)
    r = f.run('del', 'rxe0', FAKE_UID='1000')
    check(r.returncode == 1 and 'needs root' in r.stderr, 'del as non-root', r.stderr)
    check('modprobe' not in f.logged() and 'link add' not in f.logged(),
          'non-root: nothing loaded or added', f.logged())

    f = Fake(top, 'nomodule')
    r = f.run('add', FAKE_NO_MODULE='1')
    check(r.returncode == 1 and
          'this kernel (6.1.0-fake-amd64) has no rdma_rxe module (modinfo rdma_rxe failed)' in
          r.stderr and 'linux-image-amd64' in r.stderr and 'rxe-vm' in r.stderr,
          'missing module: the message', r.stderr)
    check('modprobe' not in f.logged() and 'link add' not in f.logged(),
          'missing module: no modprobe, no link add', f.logged())
    r = f.run('show', FAKE_NO_MODULE='1')
    check(r.returncode == 0 and 'rdma_rxe: not in this kernel (6.1.0-fake-amd64)' in r.stdout,
          'missing module: show says so', r.stdout + r.stderr)

    f = Fake(top, 'nokmod', omit=('modinfo', 'modprobe'))
    r = f.run('add')
    check(r.returncode == 1 and 'no rdma_rxe' in r.stderr and 'linux-image-amd64' in r.stderr,
          'no modinfo, no /lib/modules for the fake kernel: the message', r.stderr)

    f = Fake(top, 'modprobefails')
    r = f.run('add', FAKE_MODPROBE_ERR='modprobe: ERROR: could not insert rdma_rxe: '
              'Operation not permitted')
    check(r.returncode == 1 and 'modprobe rdma_rxe failed: modprobe: ERROR: could not insert'
          in r.stderr, 'modprobe fails: its message passed on', r.stderr)

    f = Fake(top, 'nonetlink', module_loaded=True)
    r = f.run('add', FAKE_NO_NETLINK='1')
    check(r.returncode == 1 and 'NETLINK_RDMA' in r.stderr and 'ib_core' in r.stderr,
          'no RDMA netlink: add says so', r.stderr)
    r = f.run('show', FAKE_NO_NETLINK='1')
    check(r.returncode == 0 and 'RDMA links: none' in r.stdout and 'NETLINK_RDMA' in r.stdout,
          'no RDMA netlink: show says so', r.stdout + r.stderr)


def add_del_checks(top):
    f = Fake(top, 'add')
    r = f.run('add')
    log = f.logged()
    check(r.returncode == 0 and 'modprobe rdma_rxe' in log and
          'rdma link add rxe0 type rxe netdev eth0' in log and 'rxe0 added on eth0' in r.stdout,
          'add: modprobe, default route interface, rxe0', r.stdout + r.stderr + log)
    r = f.run('add')
    check(r.returncode == 0 and 'already exists on eth0' in r.stdout and
          log.count('link add') == f.logged().count('link add'),
          'add again: a no-op', r.stdout + r.stderr)
    r = f.run('add', '--name', 'rxe1')
    check(r.returncode == 1 and 'eth0 has a soft-RoCE device already: rxe0' in r.stderr,
          'a second device on the same interface: refused', r.stderr)
    r = f.run('add', '--netdev', 'ens3')
    check(r.returncode == 1 and 'rxe0 exists already, on eth0' in r.stderr,
          'the same name on another interface: refused', r.stderr)
    r = f.run('add', '--netdev=ens3', '--name=rxe_b')
    check(r.returncode == 0 and 'rdma link add rxe_b type rxe netdev ens3' in f.logged(),
          'add --netdev=ens3 --name=rxe_b', r.stdout + r.stderr)
    r = f.run('show')
    check(r.returncode == 0 and 'rdma_rxe: available, not loaded' in r.stdout and
          '  link rxe0/1 state ACTIVE physical_state LINK_UP netdev eth0' in r.stdout and
          'netdev ens3' in r.stdout, 'show: both links', r.stdout + r.stderr)
    r = f.run('del', 'rxe_b')
    check(r.returncode == 0 and 'rdma link delete rxe_b' in f.logged() and 'deleted' in r.stdout,
          'del rxe_b', r.stdout + r.stderr)
    r = f.run('del', 'rxe9')
    check(r.returncode == 1 and 'no RDMA device rxe9' in r.stderr and
          'link delete rxe9' not in f.logged(), 'del of an unknown device', r.stderr)

    f = Fake(top, 'loaded', module_loaded=True)
    r = f.run('add', '--netdev', 'ens3', '--name', 'rxe_a')
    check(r.returncode == 0 and 'modinfo' not in f.logged() and 'modprobe' not in f.logged()
          and 'rdma link add rxe_a type rxe netdev ens3' in f.logged(),
          'module already loaded: no modprobe', r.stdout + r.stderr + f.logged())
    r = f.run('show')
    check(r.returncode == 0 and 'rdma_rxe: loaded' in r.stdout, 'show: loaded', r.stdout)

    f = Fake(top, 'noroute')
    r = f.run('add', FAKE_ROUTE='')
    check(r.returncode == 1 and 'no default route' in r.stderr and '--netdev' in r.stderr,
          'no default route: asks for --netdev', r.stderr)
    r = f.run('add', '--netdev', 'wlan9')
    check(r.returncode == 1 and "no network interface 'wlan9'" in r.stderr,
          'an interface that does not exist', r.stderr)
    r = f.run('add', FAKE_ADD_ERR='error: Operation not supported')
    check(r.returncode == 1 and 'rdma link add rxe0 type rxe netdev eth0 failed: error: '
          'Operation not supported' in r.stderr, 'rdma link add fails: its message passed on',
          r.stderr)


def this_machine():
    env = dict(os.environ)
    env.pop('RPCR_RXE_SYSFS', None)
    r = subprocess.run([BASH, TOOL, '--help'], env=env, capture_output=True, text=True)
    check(r.returncode == 0 and 'usage:' in r.stdout, 'this machine: --help')
    if not shutil.which('rdma'):
        r = subprocess.run([BASH, TOOL, 'show'], env=env, capture_output=True, text=True)
        check(r.returncode == 1 and 'iproute2' in r.stderr, 'this machine: no rdma tool',
              r.stderr)
        return
    r = subprocess.run([BASH, TOOL, 'show'], env=env, capture_output=True, text=True)
    check(r.returncode == 0 and r.stdout.startswith('rdma_rxe: '), 'this machine: show',
          r.stdout + r.stderr)
    has_rxe = os.path.isdir('/sys/module/rdma_rxe') or (
        shutil.which('modinfo') and
        subprocess.run(['modinfo', 'rdma_rxe'], capture_output=True).returncode == 0)
    if os.geteuid() == 0 and not has_rxe:
        r = subprocess.run([BASH, TOOL, 'add'], env=env, capture_output=True, text=True)
        check(r.returncode == 1 and 'no rdma_rxe' in r.stderr,
              'this machine (no rdma_rxe): add fails with a clear message', r.stderr)
    else:
        print('ok - this machine: add # SKIP %s' %
              ('rdma_rxe is here: no device made by a test' if has_rxe else 'not root'))


def main():
    top = tempfile.mkdtemp(prefix='rpcr-rxe-test-')
    try:
        usage_checks(top)
        missing_checks(top)
        add_del_checks(top)
        this_machine()
    finally:
        shutil.rmtree(top, ignore_errors=True)
    if failures:
        print('%d failed: %s' % (len(failures), ', '.join(failures)))
        return 1
    return 0


if __name__ == '__main__':
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    TOOL = os.path.abspath(sys.argv[1])
    BASH = shutil.which('bash') or '/bin/bash'
    sys.exit(main())

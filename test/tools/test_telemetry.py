#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
"""usertools/rpcr-telemetry against a live rpcr process (test/tools/telemetry_target).

usage: test_telemetry.py TOOL TARGET

Starts TARGET (EAL with telemetry on, --no-huge --no-shconf, two pollers over shm, 50 NULL
calls) with a file prefix of its own, waits for its telemetry socket, then checks the tool's
one-shot commands, --stats, --watch, --list, the piped interactive mode and the error paths
(unknown command, unknown poller, no such prefix, a stale socket after the target is killed).
The target is killed and its runtime directory removed whatever happens.
"""

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

CALLS = 50
failures = []


def check(cond, what, detail=''):
    print('%s - %s' % ('ok' if cond else 'not ok', what))
    if not cond:
        failures.append(what)
        if detail:
            print('  ' + detail.replace('\n', '\n  '))
    return cond


def runtime_dir(prefix):
    # As EAL chooses it: /var/run for root, else $XDG_RUNTIME_DIR, else /tmp.
    if os.geteuid() == 0:
        base = '/var/run'
    else:
        base = os.environ.get('XDG_RUNTIME_DIR') or '/tmp'
    return os.path.join(base, 'dpdk', prefix)


def tool(*args, stdin=None, timeout=30):
    return subprocess.run([sys.executable, TOOL] + list(args), input=stdin,
                          capture_output=True, text=True, timeout=timeout)


def wait_ready(proc, path, seconds):
    """Wait for the target's "ready" line and its socket; False when it died or timed out."""
    deadline = time.monotonic() + seconds
    ready = False
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        if not ready:
            r, _, _ = select.select([proc.stdout], [], [], 0.2)
            if r:
                line = proc.stdout.readline()
                ready = line.startswith('ready')
        elif os.path.exists(path):
            return True
        else:
            time.sleep(0.1)
    return False


def stats(prefix, poller):
    r = tool('-f', prefix, '-c', '/rpcr/xprt/stats,' + poller)
    if r.returncode != 0:
        return None, r
    return json.loads(r.stdout)['/rpcr/xprt/stats,' + poller], r


def run_checks(prefix, sock, pid):
    r = tool('--help')
    check(r.returncode == 0 and '--file-prefix' in r.stdout and '/rpcr/xprt/stats' in r.stdout,
          '--help')
    check(os.access(TOOL, os.X_OK), 'the tool is executable')

    r = tool('-f', prefix, '/rpcr/xprt/pollers')
    ok = r.returncode == 0
    names = json.loads(r.stdout)['/rpcr/xprt/pollers'] if ok else None
    check(ok and sorted(names) == ['tel-client', 'tel-server'],
          '/rpcr/xprt/pollers lists both pollers', r.stdout + r.stderr)

    cl, r = stats(prefix, 'tel-client')
    check(cl is not None and cl['calls_sent'] >= CALLS and cl['replies_recv'] >= CALLS and
          cl['polls'] > 0, '/rpcr/xprt/stats,tel-client: calls sent and replies received',
          r.stdout + r.stderr)
    # Connections: the client's on tel-client, the accepted one on tel-server, counters moved.
    # (The poller copies its connections for telemetry every 100 ms: a copy may predate the
    # calls; ask again for up to 3 s.)
    for poller, role in (('tel-client', 'client'), ('tel-server', 'server')):
        deadline = time.time() + 3
        while True:
            r = tool('-f', prefix, '-c', '/rpcr/xprt/conns,' + poller)
            ok = r.returncode == 0
            conns = json.loads(r.stdout)['/rpcr/xprt/conns,' + poller] if ok else {}
            c = next(iter(conns.values()), {}) if isinstance(conns, dict) else {}
            good = (ok and len(conns) == 1 and c.get('role') == role and
                    c.get('state') == 'connected' and c.get('msgs_sent', 0) > 0 and
                    c.get('msgs_recv', 0) > 0 and c.get('doorbells', 0) > 0)
            if good or time.time() > deadline:
                break
            time.sleep(0.05)
        check(good, '/rpcr/xprt/conns,%s: one %s connection, counters moved' % (poller, role),
              r.stdout + r.stderr)
    sv, r = stats(prefix, 'tel-server')
    check(sv is not None and sv['calls_recv'] >= CALLS and sv['replies_sent'] >= CALLS,
          '/rpcr/xprt/stats,tel-server: calls received and replies sent', r.stdout + r.stderr)
    check(sv is not None and all(isinstance(v, int) for v in sv.values()) and len(sv) >= 20,
          'every counter is an integer')

    r = tool('-s', sock, '-c', '/rpcr/xprt/pollers', '/info')
    lines = r.stdout.splitlines()
    check(r.returncode == 0 and len(lines) == 2 and
          json.loads(lines[1])['/info']['pid'] == pid, '--socket PATH, two commands')

    r = tool('-f', prefix, '--stats')
    check(r.returncode == 0 and r.stdout.split('\n')[0].split() ==
          ['counter', 'tel-server', 'tel-client'] and 'calls_recv' in r.stdout,
          '--stats table', r.stdout + r.stderr)

    r = tool('-f', prefix, '-c', '--watch', '0.3', '--count', '3', '/rpcr/xprt/stats,tel-server')
    polls = [json.loads(x)['/rpcr/xprt/stats,tel-server']['polls']
             for x in r.stdout.splitlines()] if r.returncode == 0 else []
    check(len(polls) == 3 and polls[0] < polls[1] < polls[2],
          '--watch: 3 rounds, polls increasing', r.stdout + r.stderr)

    r = tool('-f', prefix, '--stats', '--watch', '0.3', '--count', '2', '--delta')
    check(r.returncode == 0 and r.stdout.count('== ') == 2 and 'counter/s' in r.stdout,
          '--stats --watch --delta', r.stdout + r.stderr)

    r = tool('--list')
    rows = [x.split() for x in r.stdout.splitlines()]
    mine = [x for x in rows if x and x[0] == prefix]
    # Columns: PREFIX PID APP VERSION (two words: "DPDK 22.11.11") STATE SOCKET.
    check(r.returncode == 0 and rows and rows[0][0] == 'PREFIX' and len(mine) == 1 and
          mine[0][1] == str(pid) and mine[0][2] == 'telemetry_target' and
          mine[0][-2:] == ['live', sock], '--list shows the target, live', r.stdout + r.stderr)

    r = tool('-f', prefix, stdin='/rpcr/xprt/pollers\n# a comment\n\n/info\nquit\n/never\n')
    check(r.returncode == 0 and r.stdout.count('"/rpcr/xprt/pollers"') == 1 and
          '"/info"' in r.stdout and '/never' not in r.stdout,
          'interactive mode from a pipe', r.stdout + r.stderr)
    r = tool('-f', prefix, stdin='/nosuch\n')
    check(r.returncode == 1 and 'unknown command' in r.stderr,
          'interactive mode from a pipe: a failed command fails the run', r.stdout + r.stderr)

    # Capture: --capture for a while (the target calls every 20 ms), then the raw commands.
    cap = os.path.join(tempfile.mkdtemp(prefix='rpcr-teltest-cap-'), 'c.pcapng')
    r = tool('-f', prefix, '-c', '--capture', cap, '--seconds', '0.6', '--snap', '128')
    res = json.loads(r.stdout) if r.returncode == 0 else {}
    check(r.returncode == 0 and res.get('running') == 0 and res.get('pollers') == 2 and
          res.get('conns') == 2 and res.get('written', 0) >= 8 and res.get('drops') == 0 and
          res.get('written') == res.get('recorded') and res.get('path') == cap,
          '--capture FILE --seconds: two pollers, two connections, packets, none dropped',
          r.stdout + r.stderr)
    size = os.path.getsize(cap) if os.path.exists(cap) else 0
    with open(cap, 'rb') if size else open(os.devnull, 'rb') as f:
        head = f.read(4)
    check(size > 200 and head == b'\x0a\x0d\x0d\x0a', 'the file is pcapng',
          '%d bytes, starts %r' % (size, head))
    r = tool('-f', prefix, '-c', '/rpcr/capture,start,' + cap, '/rpcr/capture')
    lines = r.stdout.splitlines()
    ok = r.returncode == 0 and len(lines) == 2
    check(ok and json.loads(lines[1])['/rpcr/capture']['running'] == 1,
          '/rpcr/capture,start,FILE then /rpcr/capture: running', r.stdout + r.stderr)
    r = tool('-f', prefix, '-c', '/rpcr/capture,start,' + cap + '2')
    check(r.returncode == 0 and 'Device or resource busy' in r.stdout,
          'a second start: busy', r.stdout + r.stderr)
    r = tool('-f', prefix, '-c', '/rpcr/capture,stop')
    check(r.returncode == 0 and json.loads(r.stdout)['/rpcr/capture,stop']['running'] == 0,
          '/rpcr/capture,stop', r.stdout + r.stderr)
    r = tool('-f', prefix, '/rpcr/capture,stop')
    check(r.returncode == 1, 'stop with none running: status 1', r.stdout + r.stderr)
    r = tool('-f', prefix, '/rpcr/capture,start,' + cap + ',snap=99999')
    check(r.returncode == 0 and 'Invalid argument' in r.stdout, 'snap over the maximum: refused',
          r.stdout + r.stderr)
    r = tool('-f', prefix, '--capture', '/nonexistent-dir/c.pcapng', '--seconds', '0.1')
    check(r.returncode == 1 and 'No such file or directory' in r.stderr,
          '--capture into a missing directory: status 1', r.stdout + r.stderr)
    r = tool('-f', prefix, '--seconds', '1')
    check(r.returncode == 2 and 'go with --capture' in r.stderr, '--seconds without --capture',
          r.stderr)
    shutil.rmtree(os.path.dirname(cap), ignore_errors=True)

    # Errors.
    r = tool('-f', prefix, '/rpcr/xprt/stats,nosuch')
    check(r.returncode == 1 and 'no such poller' in r.stderr, 'unknown poller: status 1',
          r.stdout + r.stderr)
    r = tool('-f', prefix, '/no/such/command')
    check(r.returncode == 1 and 'unknown command' in r.stderr, 'unknown command: status 1',
          r.stdout + r.stderr)
    r = tool('-f', prefix, 'rpcr/xprt/pollers')
    check(r.returncode == 2 and "start with '/'" in r.stderr, 'command without /: status 2',
          r.stderr)
    r = tool('-f', prefix, '/' + 'x' * 60)
    check(r.returncode == 2 and 'at most' in r.stderr, 'command name too long: status 2',
          r.stderr)
    r = tool('-f', prefix + '-absent', '/')
    check(r.returncode == 3 and 'no telemetry socket' in r.stderr and prefix in r.stderr,
          'absent prefix: status 3, running processes named', r.stderr)
    r = tool('-s', '/nonexistent/sock', '/')
    check(r.returncode == 3 and 'no such socket' in r.stderr, 'absent socket: status 3',
          r.stderr)
    r = tool('--watch', '1')
    check(r.returncode == 2 and 'needs a command' in r.stderr, '--watch without a command',
          r.stderr)
    r = tool('--count', '2', '/')
    check(r.returncode == 2, '--count without --watch', r.stderr)


def main():
    prefix = 'rpcr-teltest-%d' % os.getpid()
    rdir = runtime_dir(prefix)
    sock = os.path.join(rdir, 'dpdk_telemetry.v2')
    # The shm driver's listening sockets in a directory of the test's own: SIGKILL below
    # leaves the target's behind.
    shm_dir = tempfile.mkdtemp(prefix='rpcr-teltest-shm-')
    # The EAL as rpcr's tests run it (FACTS.md), less --no-telemetry: --no-huge --no-shconf.
    proc = subprocess.Popen([TARGET, '--file-prefix', prefix, '--seconds', '120',
                             '--calls', str(CALLS), '--', '--no-shconf'],
                            stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ, RPCR_SHM_DIR=shm_dir))
    try:
        if not check(wait_ready(proc, sock, 30), 'target up, socket at ' + sock,
                     'exit status %s' % proc.poll()):
            return 1
        run_checks(prefix, sock, proc.pid)

        # A stale socket: SIGKILL skips the atexit handler that unlinks it.
        proc.kill()
        proc.wait(10)
        if os.path.exists(sock):
            r = tool('-f', prefix, '/')
            check(r.returncode == 3 and 'stale' in r.stderr, 'stale socket: status 3',
                  r.stderr)
            r = tool('--list', '-f', prefix)
            check(r.returncode == 0 and 'stale' in r.stdout, '--list shows a stale socket',
                  r.stdout + r.stderr)
        else:
            print('ok - stale socket # SKIP the socket went with the process')
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
        shutil.rmtree(rdir, ignore_errors=True)
        shutil.rmtree(shm_dir, ignore_errors=True)
    if failures:
        print('%d failed: %s' % (len(failures), ', '.join(failures)))
        return 1
    return 0


if __name__ == '__main__':
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    TOOL, TARGET = sys.argv[1], sys.argv[2]
    sys.exit(main())

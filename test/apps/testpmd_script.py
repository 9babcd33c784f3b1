#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
"""Run rpcr-testpmd on a command file and check what it printed: every traffic run made calls,
moved data where it should and had no error; the counters of 'show stats' moved and count no
error; the tool exits 0.

usage: testpmd_script.py RPCR_TESTPMD CMDFILE
"""
import os
import re
import subprocess
import sys


def fail(msg, out):
    print(out)
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    exe, cmds = sys.argv[1], sys.argv[2]
    try:
        p = subprocess.run([exe, "--", "-f", cmds], capture_output=True, text=True, timeout=240)
    except subprocess.TimeoutExpired as e:
        fail("rpcr-testpmd did not finish in 240 s", (e.stdout or b"").decode(errors="replace"))
    out = p.stdout + p.stderr
    if p.returncode != 0:
        fail("exit status %d" % p.returncode, out)
    # Every 'stop' reports its streams: calls, bytes, errors.
    runs = re.findall(r"stream \d+ -> \S+ \(port \d+, (\w+), (\d+) B, \d+ out, chunk (\w+)\)\n"
                      r"\s+calls (\d+)\s+bytes (\d+)\s+errors (\d+)", out)
    if len(runs) < 7:
        fail("expected 7 traffic reports, found %d" % len(runs), out)
    if not any(r[0] == "callback" for r in runs):
        fail("no callback run reported", out)
    for mode, size, chunk, calls, nbytes, errors in runs:
        what = "%s %s B chunk %s" % (mode, size, chunk)
        if int(calls) == 0:
            fail(what + ": no call completed", out)
        if int(errors) != 0:
            fail(what + ": %s errors" % errors, out)
        # (mixed: NULL, ECHO (both ways), WRITE, READ in turn: about one size per call)
        want = int(calls) * int(size)
        if mode == "mixed":
            want = want * 9 // 10
        if mode != "null" and int(nbytes) < want:
            fail(what + ": %s bytes for %s calls" % (nbytes, calls), out)
    # Version 2 (set version 2): its connections say so, with the peer's properties.
    if not re.search(r"client connected.*RPC-over-RDMA version 2 \(peer's properties: send "
                     r"\d+, receive \d+", out) or \
            not re.search(r"server connected.*RPC-over-RDMA version 2 \(peer's properties",
                          out):
        fail("show conn: no version-2 connection with its peer's properties", out)
    # capture start/stop around the mixed run: packets written, none dropped, the file there.
    c = re.search(r"capture stopped: (\S+), (\d+) poller\(s\), (\d+) connection\(s\): (\d+) "
                  r"packets recorded, (\d+) written, (\d+) dropped", out)
    if not c:
        fail("capture stop: no counters", out)
    path, recorded, written, dropped = c.group(1), int(c.group(4)), int(c.group(5)), \
        int(c.group(6))
    if written == 0 or written != recorded or dropped != 0 or int(c.group(3)) != 2:
        fail("capture: %d recorded, %d written, %d dropped, %s connections" %
             (recorded, written, dropped, c.group(3)), out)
    if "capture running: " + path not in out or "no capture running" not in out:
        fail("show capture: not as it should be before and after", out)
    try:
        size = os.path.getsize(path)
        os.unlink(path)
    except OSError as e:
        fail("capture file %s: %s" % (path, e), out)
    if size < written * 100:
        fail("capture file %s: %d bytes for %d packets" % (path, size, written), out)
    # show stats: both sides counted, the connection counters moved, no error anywhere.
    m = re.search(r"client: calls (\d+) replies (\d+)", out)
    s = re.search(r"server: calls (\d+) replies (\d+) overruns (\d+)", out)
    if not m or not s or int(m.group(1)) == 0 or int(s.group(1)) == 0:
        fail("show stats: no calls counted", out)
    if int(s.group(3)) != 0:
        fail("show stats: overruns", out)
    # The callback run: the server's calls to the client (RFC 8167), each answered.
    r = re.search(r"reverse direction \(RFC 8167\): server calls (\d+) replies (\d+), "
                  r"client calls (\d+) replies (\d+) overruns (\d+), calls too long (\d+)", out)
    if not r or int(r.group(1)) == 0 or len(set(r.group(1, 2, 3, 4))) != 1 or \
            int(r.group(5)) != 0 or int(r.group(6)) != 0:
        fail("show stats: the reverse direction's counters: %s" % (r.groups() if r else None),
             out)
    e = re.search(r"errors: rdma_error sent (\d+) received (\d+), bad headers (\d+), "
                  r"unmatched replies (\d+), reverse calls refused (\d+), "
                  r"completion errors (\d+)", out)
    if not e or any(int(x) != 0 for x in e.groups()):
        fail("show stats: errors counted", out)
    conns = re.findall(r"sends (\d+)\s+receives (\d+)\s+bytes out (\d+)\s+bytes in (\d+)\s+"
                       r"doorbells (\d+)\s+WRs (\d+)\s+RNR (\d+)", out)
    if len(conns) < 2 or any(int(c[0]) == 0 or int(c[4]) == 0 for c in conns):
        fail("show stats: connection counters did not move", out)
    if any(int(c[6]) != 0 for c in conns):
        fail("show stats: RNR errors", out)
    # 'set credits 4' before the last run: the client's connection was made anew and its grant
    # is at most 4 (show stats: "port 0 conn N: client connected, ..., credits C, in use U").
    cc = re.findall(r"port \d+ conn \d+: client \w+, [^\n]*credits (\d+), in use (\d+)", out)
    if not cc or not 1 <= int(cc[-1][0]) <= 4 or int(cc[-1][1]) > int(cc[-1][0]):
        fail("set credits 4 did not reach the client's connection: %s" % cc, out)
    if "error:" in out or "unknown command" in out or "bad arguments" in out:
        fail("a command failed", out)
    print("rpcr-testpmd script: %d traffic runs, all checked" % len(runs))


main()

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
"""rpcr's own version-2 traffic on soft-RoCE, decoded twice and compared frame by frame.

tshark with rpcr's dissector (usertools/wireshark/rpcrdma2.lua) must claim every RoCEv2 Send of
the capture as rpcrdma2, mark none of them malformed, and report, for each, the fields
rpcr-decode (lib/proto's decoder) prints for the same bytes: xid, header type, credit word,
flags, rdma_inv_handle, read segments, write chunks, reply chunk, error code, property count. A
Send longer than the path MTU (soft-RoCE's is 1024 bytes) is several packets on one queue pair,
SEND FIRST, MIDDLE..., LAST (with or without Invalidate): its packets are put back together in
order here, the FIRST is the frame the dissector must claim (the header is in it), and
rpcr-decode reads the whole Send. The number of Sends must be the server's calls + replies + the
RDMA2_CONNPROP of each connection (one each way) + the Sends of continued messages beyond one
each, and as many Sends must carry MORE (the captured run continues calls and replies: ECHO
and READ of 6000 bytes with nothing DDP-eligible, each message in two Sends of up to 4096).

usage: check-v2-capture.py PCAP SERVER_REPORT RPCR_DECODE
"""
import re
import subprocess
import sys

LUA = __file__.rsplit("/", 3)[0] + "/usertools/wireshark/rpcrdma2.lua"
FIELDS = ["frame.number", "frame.len", "frame.cap_len", "infiniband.bth.opcode",
          "infiniband.bth.destqp", "udp.payload",
          "rpcrdma2.xid", "rpcrdma2.htype", "rpcrdma2.credit", "rpcrdma2.flags",
          "rpcrdma2.inv_handle", "rpcrdma2.reads_count", "rpcrdma2.writes_count",
          "rpcrdma2.reply_count", "rpcrdma2.err", "rpcrdma2.prop_count"]
# RC SEND opcodes: what each packet is of its Send, and whether an IETH follows the BTH.
FIRST, MIDDLE, LAST, ONLY = 0, 1, 2, 3
SENDS = {"0": (FIRST, 0), "1": (MIDDLE, 0), "2": (LAST, 0), "4": (ONLY, 0), "22": (LAST, 4),
         "23": (ONLY, 4)}


def tshark(pcap, *args):
    p = subprocess.run(["tshark", "-X", "lua_script:" + LUA, "-r", pcap] + list(args),
                       capture_output=True, text=True)
    if "lua" in p.stderr.lower() and "error" in p.stderr.lower():
        sys.exit("tshark: the plugin failed: " + p.stderr[:500])
    return p.stdout


def num(v):
    """A tshark field value (decimal or 0x hex) as an int; None when absent."""
    if v == "":
        return None
    v = v.split(",")[0]
    return int(v, 16) if v.startswith("0x") else int(v)


def decode(exe, payload):
    """rpcr-decode's fields of one message (hex)."""
    p = subprocess.run([exe, payload], capture_output=True, text=True)
    out = p.stdout
    m = re.search(r"RPC-over-RDMA version 2 .*?\((\d+)\) xid 0x([0-9a-f]+) credits (\d+) "
                  r"flags 0x([0-9a-f]+)", out)
    if not m:
        return None, out
    f = {"htype": int(m.group(1)), "xid": int(m.group(2), 16), "credit": int(m.group(3)),
         "flags": int(m.group(4), 16)}
    m = re.search(r"inv_handle 0x([0-9a-f]+)", out)
    f["inv_handle"] = int(m.group(1), 16) if m else None
    if f["htype"] in (0, 1):
        m = re.search(r"read list: (\d+) segment", out)
        f["reads"] = int(m.group(1)) if m else 0
        f["writes"] = len(re.findall(r"^  write chunk \d+:", out, re.M))
        f["reply"] = 0 if "reply chunk: none" in out else 1
    m = re.search(r"^  (RDMA2_ERR\S*|unknown)\((\d+)\)", out, re.M)
    f["err"] = int(m.group(2)) if m and f["htype"] == 4 else None
    m = re.search(r"^  (\d+) propert", out, re.M)
    f["props"] = int(m.group(1)) if m else None
    return f, out


def main():
    pcap, report, exe = sys.argv[1:4]
    calls = re.search(r": (\d+) calls received, (\d+) replies sent", open(report).read())
    if not calls:
        sys.exit("no call count in " + report)
    ncalls, nreplies = int(calls.group(1)), int(calls.group(2))
    # Continuation: a message in k Sends counts once among the calls or replies.
    cont = re.search(r"continuation: (\d+) messages in (\d+) Sends received, (\d+) in (\d+) "
                     r"Sends sent", open(report).read())
    extra = 0
    if cont:
        extra = (int(cont.group(2)) - int(cont.group(1))) + (int(cont.group(4)) - int(cont.group(3)))
    sends, open_ = [], {}
    wrong, claimed, packets = [], 0, 0
    args = ["-T", "fields", "-E", "separator=/t"]
    for f in FIELDS:
        args += ["-e", f]
    for line in tshark(pcap, *args).splitlines():
        v = line.split("\t")
        if len(v) != len(FIELDS) or v[3] not in SENDS:
            continue
        s = dict(zip(FIELDS, v))
        part, ieth = SENDS[v[3]]
        packets += 1
        pl = s["udp.payload"].replace(":", "")
        # After the 12-byte BTH (and the IETH of a Send with Invalidate); the 4-byte ICRC at
        # the end of a frame captured whole.
        pl = pl[24 + 2 * ieth:-8] if s["frame.len"] == s["frame.cap_len"] else pl[24 + 2 * ieth:]
        qp = s["infiniband.bth.destqp"]
        if part in (FIRST, ONLY):
            if qp in open_:
                wrong.append("frame %s: a Send begins before the last one on its QP ended"
                             % s["frame.number"])
            s["bytes"] = pl
            if part == FIRST:
                open_[qp] = s
            else:
                sends.append(s)
        elif qp not in open_:
            wrong.append("frame %s: SEND MIDDLE/LAST with no FIRST" % s["frame.number"])
        else:
            open_[qp]["bytes"] += pl
            if part == LAST:
                sends.append(open_.pop(qp))
    for qp, s in open_.items():
        wrong.append("frame %s: a Send never ended" % s["frame.number"])
    # (Among the Sends: Wireshark's InfiniBand dissector takes some RDMA Read/Write data for
    # EtherType-encapsulated packets and marks them malformed, nothing of rpcr's framing. The
    # first packet of every Send is rpcrdma2's; the rest carry no header of their own.)
    bad = tshark(pcap, "-Y", "(_ws.malformed || _ws.expert.severity == error) && "
                 "(infiniband.bth.opcode == 0 || infiniband.bth.opcode == 4 || "
                 "infiniband.bth.opcode == 23)", "-T", "fields",
                 "-e", "frame.number").split()
    for s in sends:
        if s["rpcrdma2.xid"] == "":
            wrong.append("frame %s: a Send not claimed by rpcrdma2" % s["frame.number"])
            continue
        claimed += 1
        d, out = decode(exe, s["bytes"])
        if d is None:
            wrong.append("frame %s: rpcr-decode: %s" % (s["frame.number"], out.strip()[:200]))
            continue
        t = {"xid": num(s["rpcrdma2.xid"]), "htype": num(s["rpcrdma2.htype"]),
             "credit": num(s["rpcrdma2.credit"]), "flags": num(s["rpcrdma2.flags"]),
             "inv_handle": num(s["rpcrdma2.inv_handle"]), "err": num(s["rpcrdma2.err"]),
             "props": num(s["rpcrdma2.prop_count"])}
        if d["htype"] in (0, 1):
            t.update(reads=num(s["rpcrdma2.reads_count"]), writes=num(s["rpcrdma2.writes_count"]),
                     reply=num(s["rpcrdma2.reply_count"]))
        for k, v in d.items():
            if t.get(k) != v:
                wrong.append("frame %s: %s: tshark %s, rpcr-decode %s"
                             % (s["frame.number"], k, t.get(k), v))
    nprops = sum(1 for s in sends if s["rpcrdma2.htype"] == "5")
    nmore = sum(1 for s in sends if (num(s["rpcrdma2.flags"]) or 0) & 2)
    want = ncalls + nreplies + nprops + extra
    print("capture: %d RoCEv2 Sends in %d packets, %d claimed by rpcrdma2, every field equal to "
          "rpcr-decode's in %d; malformed %d; server: %d calls, %d replies, %d RDMA2_CONNPROP "
          "and %d continuation Sends beyond one a message = %d; Sends with MORE in the "
          "capture: %d"
          % (len(sends), packets, claimed,
             claimed - len(set(w.split(":")[0] for w in wrong)), len(bad),
             ncalls, nreplies, nprops, extra, want, nmore))
    for w in wrong[:20]:
        print("  " + w)
    ok = not wrong and not bad and len(sends) == want and claimed == want and \
        nprops >= 2 and nprops % 2 == 0 and nmore == extra
    if len(sends) != want or nprops < 2 or nprops % 2 != 0:
        print("Sends != calls + replies + CONNPROPs (one each way a connection) + continuation")
    if nmore != extra:
        print("Sends with MORE != the server's continuation Sends beyond one a message")
    sys.exit(0 if ok else 1)


main()

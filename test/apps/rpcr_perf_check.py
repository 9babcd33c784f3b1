#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The rpcr authors
"""Run `rpcr-perf --loopback` briefly in every mode and check what it reports.

usage: rpcr_perf_check.py RPCR_PERF [--no-baseline] [--plot RPCR_PLOT]

The run is short (0.04 s per point, twice: --repeat 2; callback too) with a small sweep that has inline sizes
and chunked ones (64 KiB, 1 MiB). The JSON file must parse, hold the whole configuration and, for every point of
every mode, positive figures from rpcr and from the libtirpc baseline (unless --no-baseline), with
no failed call and no wrong result; rpcr-perf must exit 0. Exit status: 0 pass, 1 fail.
"""

import json
import os
import subprocess
import sys
import tempfile

LAT_SIZES = [64, 65536]
SIZES = [0, 64, 4096, 65536, 1 << 20]
PROCS = ["ECHO", "WRITE", "READ"]
OUTSTANDING = [1, 4]
CONNS = [1, 2]
THRESHOLD = 1024
REPEAT = 2

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def positive(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0


def check_result(where, r, lat, size, threads=None):
    if not check(isinstance(r, dict), f"{where}: no result"):
        return
    check(positive(r.get("calls")), f"{where}: calls {r.get('calls')}")
    check(positive(r.get("seconds")), f"{where}: seconds {r.get('seconds')}")
    check(positive(r.get("calls_per_s")), f"{where}: calls_per_s {r.get('calls_per_s')}")
    if size > 0:
        check(positive(r.get("bytes_per_s")), f"{where}: bytes_per_s {r.get('bytes_per_s')}")
    check(r.get("errors") == 0, f"{where}: errors {r.get('errors')}")
    check(r.get("verify_errors") == 0, f"{where}: verify_errors {r.get('verify_errors')}")
    if threads is not None:
        check(r.get("threads") == threads, f"{where}: threads {r.get('threads')}, want {threads}")
    if lat:
        l = r.get("latency_us")
        if check(isinstance(l, dict), f"{where}: no latency_us"):
            keys = ["min", "p50", "p90", "p99", "p99.9", "max"]
            vals = [l.get(k) for k in keys]
            check(all(positive(v) for v in vals), f"{where}: latency {l}")
            if all(positive(v) for v in vals):
                check(vals == sorted(vals), f"{where}: latency not ordered {l}")
            check(positive(l.get("mean")), f"{where}: mean {l.get('mean')}")
            # The CDF rpcr-plot draws: (microseconds, fraction) pairs from min to max.
            cdf = r.get("cdf")
            if check(isinstance(cdf, list) and len(cdf) > 100, f"{where}: no cdf"):
                us = [p[0] for p in cdf]
                q = [p[1] for p in cdf]
                check(us == sorted(us) and q == sorted(q), f"{where}: cdf not monotonic")
                check(q[0] == 0 and q[-1] == 1 and us[0] == l.get("min") and
                      us[-1] == l.get("max"), f"{where}: cdf ends {cdf[0]} {cdf[-1]}")


def check_points(doc, mode, want, baseline, lat=None):
    lat = mode == "lat" if lat is None else lat
    pts = doc.get(mode)
    if not check(isinstance(pts, list), f"{mode}: not a list"):
        return
    check(len(pts) == len(want), f"{mode}: {len(pts)} points, want {len(want)}")
    for p, w in zip(pts, want):
        where = f"{mode} {p.get('proc')} {p.get('size')} c{p.get('connections')}" \
                f"x{p.get('outstanding_per_connection')}"
        for k, v in w.items():
            check(p.get(k) == v, f"{where}: {k} {p.get(k)!r}, want {v!r}")
        total = p.get("connections", 0) * p.get("outstanding_per_connection", 0)
        check(p.get("outstanding") == total, f"{where}: outstanding {p.get('outstanding')}")
        check_result(where + " rpcr", p.get("rpcr"), lat, p.get("size", 0))
        if baseline:
            check_result(where + " tirpc", p.get("tirpc"), mode == "lat", p.get("size", 0),
                         threads=total)
            check(positive(p.get("ratio")), f"{where}: ratio {p.get('ratio')}")
        else:
            check(p.get("tirpc") is None, f"{where}: a baseline result without a baseline")
        runs = p.get("runs") or {}
        want_fig = "p50_us" if mode == "lat" else "calls_per_s"
        check(runs.get("figure") == want_fig, f"{where}: runs figure {runs.get('figure')}")
        impls = ["rpcr", "tirpc", "ratio"] if baseline else ["rpcr"]
        for k in impls:
            v = runs.get(k)
            check(isinstance(v, list) and len(v) == REPEAT and all(positive(x) for x in v),
                  f"{where}: runs {k} {v}")


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    exe = sys.argv[1]
    baseline = "--no-baseline" not in sys.argv[2:]
    plot = None
    if "--plot" in sys.argv[2:]:
        plot = sys.argv[sys.argv.index("--plot") + 1]
    with tempfile.TemporaryDirectory(prefix="rpcr-perf-test-") as d:
        path = os.path.join(d, "perf.json")
        args = [exe, "--loopback", "lat", "bw", "rate", "callback",
                "--seconds", "0.04", "--warmup", "0.02", "--repeat", str(REPEAT),
                "--lat-sizes", ",".join(map(str, LAT_SIZES)),
                "--sizes", ",".join(map(str, SIZES)),
                "--outstanding", ",".join(map(str, OUTSTANDING)),
                "--conns", ",".join(map(str, CONNS)),
                "--threshold", str(THRESHOLD),
                "--json", path]
        if not baseline:
            args += ["--baseline", "none"]
        print("running:", " ".join(args), flush=True)
        run = subprocess.run(args, timeout=280)
        check(run.returncode == 0, f"rpcr-perf exited with {run.returncode}")
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print(f"FAIL: no valid JSON file: {e}")
            return 1
        if plot:
            # rpcr-plot draws the file: three PNGs, each a real image of some size.
            run = subprocess.run([plot, "-o", d, path], capture_output=True, text=True,
                                 timeout=120)
            check(run.returncode == 0, f"rpcr-plot exited with {run.returncode}: "
                  f"{run.stdout}{run.stderr}")
            for kind in ("lat-cdf", "bw", "rate"):
                png = os.path.join(d, f"rpcr-perf-{kind}.png")
                try:
                    with open(png, "rb") as f:
                        data = f.read()
                except OSError:
                    data = b""
                check(data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10000,
                      f"rpcr-plot: {kind} PNG ({len(data)} bytes)")

    check(doc.get("program") == "rpcr-perf", "program")
    check(doc.get("complete") is True, "complete")
    check(doc.get("verified") is True, "verified")
    errs = doc.get("errors", {})
    check(errs.get("total") == 0, f"errors {errs}")
    cfg = doc.get("config", {})
    want_cfg = {
        "role": "loopback", "modes": ["lat", "bw", "rate", "callback"], "device": "shm",
        "lat_sizes": LAT_SIZES, "sizes": SIZES, "procs": PROCS,
        "outstanding": OUTSTANDING, "connections": CONNS, "bw_outstanding": 1,
        "threshold": THRESHOLD, "verify": True, "repeat": REPEAT,
        "baseline": "tirpc" if baseline else None,
    }
    for k, v in want_cfg.items():
        check(cfg.get(k) == v, f"config {k}: {cfg.get(k)!r}, want {v!r}")
    check(positive(cfg.get("seconds")), "config seconds")
    check(isinstance(cfg.get("eal_args"), list) and len(cfg["eal_args"]) > 0, "config eal_args")
    if baseline:
        t = cfg.get("tirpc") or {}
        check(t.get("host") == "127.0.0.1" and positive(t.get("port")), f"config tirpc {t}")
    check(positive(doc.get("elapsed_seconds")), "elapsed_seconds")
    srv = doc.get("server") or {}
    check(positive(srv.get("calls_recv")), f"server {srv}")
    check(srv.get("rdma_errors_sent") == 0 and srv.get("wc_errors") == 0, f"server {srv}")
    cli = doc.get("client") or {}
    check(cli.get("calls_sent") == cli.get("replies_recv") and positive(cli.get("calls_sent")),
          f"client {cli}")

    lat = [{"proc": "NULL", "size": 0}] + [{"proc": "ECHO", "size": s} for s in LAT_SIZES]
    bw = [{"proc": p, "size": s,
           "placement": "chunk" if s >= THRESHOLD else "inline"}
          for p in PROCS for s in SIZES]
    rate = [{"proc": "NULL", "connections": c, "outstanding_per_connection": o}
            for c in CONNS for o in OUTSTANDING]
    check_points(doc, "lat", lat, baseline)
    check_points(doc, "bw", bw, baseline)
    check_points(doc, "rate", rate, baseline)
    # The reverse direction (RFC 8167): CALLBACK, rpcr only, its round trips recorded.
    callback = [{"proc": "CALLBACK", "connections": 1, "outstanding_per_connection": o}
                for o in OUTSTANDING]
    check_points(doc, "callback", callback, False, lat=True)

    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} checks failed" if failures else "rpcr-perf JSON: all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

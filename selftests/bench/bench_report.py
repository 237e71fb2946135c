#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench_report.py OUTDIR: turn OUTDIR/raw.csv (one row per guest run, see
bench_guest.sh) into OUTDIR/summary.csv (medians, eroce next to rdma_rxe and
TCP, with ratios), OUTDIR/plot.dat (for bench.gp) and the table on stdout."""

import csv
import os
import re
import statistics
import sys
from collections import defaultdict


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def fmt(v, w=8, p=3):
    if v is None:
        return "-".rjust(w)
    if abs(v) >= 1000:
        return f"{v:{w}.0f}"
    if abs(v) >= 100:
        return f"{v:{w}.1f}"
    return f"{v:{w}.{p}f}"


def fmtr(v, w=6):
    return "-".rjust(w) if v is None else f"{v:{w}.2f}"


def size_name(s):
    s = int(s)
    if s >= 1024 and s % 1024 == 0:
        return f"{s // 1024}K"
    return str(s)


def main():
    out = sys.argv[1]
    rows = list(csv.DictReader(open(os.path.join(out, "raw.csv"))))
    groups = defaultdict(list)
    for r in rows:
        groups[(int(r["mtu"]), r["pair"], r["test"], int(r["size"]), int(r["qps"]))].append(r)

    agg = {}
    for k, rs in groups.items():
        ok = [r for r in rs if r["ok"] == "1"]
        agg[k] = {
            "gbps": med(num(r["gbps"]) for r in ok),
            "mpps": med(num(r["mpps"]) for r in ok),
            "lat": med(num(r["lat_us"]) for r in ok),
            "cpu": med(num(r["cpu_s_per_gib"]) for r in ok),
            "n": len(ok),
            "runs": len(rs),
            "wall": sum(1 for r in ok if r["src"] == "wall"),
        }

    def get(mtu, pair, test, size, qps, m):
        a = agg.get((mtu, pair, test, size, qps))
        return a[m] if a else None

    def note(mtu, test, size, qps, pairs=("eroce", "rxe")):
        parts = []
        for p in pairs:
            a = agg.get((mtu, p, test, size, qps))
            if not a:
                continue
            if a["n"] < a["runs"]:
                parts.append(f"{p} {a['runs'] - a['n']}/{a['runs']} failed")
            if a["wall"]:
                parts.append(f"{p} {a['wall']}/{a['n']} wall-derived")
        return "; ".join(parts)

    mtus = sorted({k[0] for k in agg})
    bw_tests = [t for t in ("ib_write_bw", "ib_read_bw", "ib_send_bw") if any(k[2] == t for k in agg)]
    lat_tests = [t for t in ("ib_send_lat", "ib_write_lat", "ib_read_lat") if any(k[2] == t for k in agg)]
    # the post-list message rate: test names TEST:lN (bench_guest.sh bw_run)
    list_tests = sorted({k[2] for k in agg if re.fullmatch(r"ib_[a-z]+_bw:l[0-9]+", k[2])})
    sizes = sorted({k[3] for k in agg if k[2] in bw_tests or k[2] == "iperf3"})
    qpss = sorted({k[4] for k in agg if k[2] in bw_tests or k[2] == "iperf3"})
    reps = max((int(r["rep"]) for r in rows), default=0)

    summ = []
    plot = []
    lines = []
    P = lines.append
    P(f"eroce benchmark (medians of up to {reps} runs; TCG guest: compare ratios, not absolute numbers)")
    P("TCPns = iperf3 over the eroce veth (ns1<->ns2), TCPinit = iperf3 over the rdma_rxe veth (initial ns);"
      " e/rxe and e/TCP: eroce divided by rdma_rxe / by TCPns")
    for mtu in mtus:
        P("")
        P(f"== veth MTU {mtu}: bandwidth (Gb/s) and CPU seconds per GiB moved (whole guest, /proc/stat) ==")
        P(f"{'test':<12}{'size':>5}{'qp':>3} |{'eroce':>8}{'rxe':>8}{'TCPns':>8}{'TCPinit':>8} |"
          f"{'e/rxe':>6}{'e/TCP':>6} |{'cpu:e':>7}{'rxe':>7}{'TCPns':>7}{'e/rxe':>6} | notes")
        for size in sizes:
            for q in qpss:
                tns = get(mtu, "tcp_eroce", "iperf3", size, q, "gbps")
                tin = get(mtu, "tcp_rxe", "iperf3", size, q, "gbps")
                cns = get(mtu, "tcp_eroce", "iperf3", size, q, "cpu")
                for t in bw_tests:
                    e = get(mtu, "eroce", t, size, q, "gbps")
                    x = get(mtu, "rxe", t, size, q, "gbps")
                    ce = get(mtu, "eroce", t, size, q, "cpu")
                    cx = get(mtu, "rxe", t, size, q, "cpu")
                    if e is None and x is None:
                        continue
                    P(f"{t:<12}{size_name(size):>5}{q:>3} |{fmt(e)}{fmt(x)}{fmt(tns)}{fmt(tin)} |"
                      f"{fmtr(ratio(e, x))}{fmtr(ratio(e, tns))} |{fmt(ce, 7, 1)}{fmt(cx, 7, 1)}"
                      f"{fmt(cns, 7, 1)}{fmtr(ratio(ce, cx))} | {note(mtu, t, size, q)}")
                    summ.append([mtu, "bw", t, size, q, "gbps", e, x, tns, tin, ratio(e, x), ratio(e, tns)])
                    summ.append([mtu, "bw", t, size, q, "cpu_s_per_gib", ce, cx, cns,
                                 get(mtu, "tcp_rxe", "iperf3", size, q, "cpu"), ratio(ce, cx), ratio(ce, cns)])
                    plot.append([f"{mtu}/{t.replace('ib_', '').replace('_bw', '')}/{size_name(size)}/q{q}",
                                 e, x, tns])
        small = min(sizes) if sizes else None
        if small is not None:
            P("")
            P(f"== veth MTU {mtu}: message rate at {small} B (Mmsg/s; TCP: iperf3 writes/s of that size) ==")
            P(f"{'test':<12}{'qp':>3} |{'eroce':>9}{'rxe':>9}{'TCPns':>9} |{'e/rxe':>6}{'e/TCP':>6}")
            for q in qpss:
                tns = get(mtu, "tcp_eroce", "iperf3", small, q, "mpps")
                for t in bw_tests:
                    e = get(mtu, "eroce", t, small, q, "mpps")
                    x = get(mtu, "rxe", t, small, q, "mpps")
                    if e is None and x is None:
                        continue
                    P(f"{t:<12}{q:>3} |{fmt(e, 9, 4)}{fmt(x, 9, 4)}{fmt(tns, 9, 4)} |"
                      f"{fmtr(ratio(e, x))}{fmtr(ratio(e, tns))}")
                    summ.append([mtu, "msgrate", t, small, q, "mpps", e, x, tns,
                                 get(mtu, "tcp_rxe", "iperf3", small, q, "mpps"), ratio(e, x), ratio(e, tns)])
        if list_tests:
            P("")
            P(f"== veth MTU {mtu}: message rate at 64 B, 1 QP, several WRs per ibv_post_send()"
              " (perftest -l; Mmsg/s) ==")
            P(f"{'test':<16} |{'eroce':>9}{'rxe':>9}{'TCPns':>9} |{'e/rxe':>6}{'e/TCP':>6}")
            tns = get(mtu, "tcp_eroce", "iperf3", 64, 1, "mpps")
            for t in list_tests:
                e = get(mtu, "eroce", t, 64, 1, "mpps")
                x = get(mtu, "rxe", t, 64, 1, "mpps")
                if e is None and x is None:
                    continue
                name = t.replace(":l", " -l")
                P(f"{name:<16} |{fmt(e, 9, 4)}{fmt(x, 9, 4)}{fmt(tns, 9, 4)} |"
                  f"{fmtr(ratio(e, x))}{fmtr(ratio(e, tns))}")
                summ.append([mtu, "msgrate", t, 64, 1, "mpps", e, x, tns,
                             get(mtu, "tcp_rxe", "iperf3", 64, 1, "mpps"), ratio(e, x), ratio(e, tns)])
        if lat_tests:
            P("")
            P(f"== veth MTU {mtu}: latency at 2 B (us; perftest t_typical, TCP: 2-byte ping-pong, half RTT;"
              " read_lat is a full round trip) ==")
            P(f"{'test':<13}|{'eroce':>9}{'rxe':>9}{'TCPns':>9}{'TCPinit':>9} |{'e/rxe':>6}{'e/TCP':>6} | notes")
            tns = get(mtu, "tcp_eroce", "tcp_lat", 2, 1, "lat")
            tin = get(mtu, "tcp_rxe", "tcp_lat", 2, 1, "lat")
            for t in lat_tests:
                e = get(mtu, "eroce", t, 2, 1, "lat")
                x = get(mtu, "rxe", t, 2, 1, "lat")
                P(f"{t:<13}|{fmt(e, 9, 2)}{fmt(x, 9, 2)}{fmt(tns, 9, 2)}{fmt(tin, 9, 2)} |"
                  f"{fmtr(ratio(e, x))}{fmtr(ratio(e, tns))} | {note(mtu, t, 2, 1)}")
                summ.append([mtu, "lat", t, 2, 1, "lat_us", e, x, tns, tin, ratio(e, x), ratio(e, tns)])

    cpu_tests = [t for t in ("ib_write_bw", "ib_read_bw", "ib_send_bw") if any(k[2] == t + ":cpu" for k in agg)]
    if cpu_tests:
        P("")
        P("== CPU seconds per GiB moved, 64 KiB, 1 QP, completion events (whole guest, both ends;"
          " long run minus short run) ==")
        P(f"{'mtu':>5} {'test':<12}|{'Gb/s:e':>8}{'rxe':>8} |{'cpu:e':>8}{'rxe':>8}{'TCPns':>8} |"
          f"{'e/rxe':>6}{'e/TCP':>6} | notes")
        for mtu in mtus:
            cns = get(mtu, "tcp_eroce", "iperf3", 65536, 1, "cpu")
            for t in cpu_tests:
                k = t + ":cpu"
                e, x = get(mtu, "eroce", k, 65536, 1, "gbps"), get(mtu, "rxe", k, 65536, 1, "gbps")
                ce, cx = get(mtu, "eroce", k, 65536, 1, "cpu"), get(mtu, "rxe", k, 65536, 1, "cpu")
                P(f"{mtu:>5} {t:<12}|{fmt(e)}{fmt(x)} |{fmt(ce, 8, 2)}{fmt(cx, 8, 2)}{fmt(cns, 8, 2)} |"
                  f"{fmtr(ratio(ce, cx))}{fmtr(ratio(ce, cns))} | {note(mtu, k, 65536, 1)}")
                summ.append([mtu, "cpu", t, 65536, 1, "cpu_s_per_gib", ce, cx, cns,
                             get(mtu, "tcp_rxe", "iperf3", 65536, 1, "cpu"), ratio(ce, cx), ratio(ce, cns)])

    scale = os.path.join(out, "scale.txt")
    if os.path.exists(scale) and os.path.getsize(scale):
        kv = defaultdict(dict)
        for l in open(scale):
            f = l.split()
            if len(f) >= 3:
                kv[f[0]][f[1]] = " ".join(f[2:])
        P("")
        P("== scale check: RC QPs on one device, connected in pairs, one 64 B SEND each way ==")
        P(f"{'device':<8}{'qps':>6}{'create s':>10}{'connect s':>10}{'traffic s':>10}"
          f"{'kmem B/QP':>11}{'slab B/QP':>11}{'vmalloc B/QP':>13}{'leak KiB':>10}  result")
        for dev, d in kv.items():
            P(f"{dev:<8}{d.get('qps', '-'):>6}{d.get('create_s', '-'):>10}{d.get('connect_s', '-'):>10}"
              f"{d.get('traffic_s', '-'):>10}{d.get('kmem_per_qp_bytes', '-'):>11}"
              f"{d.get('slab_per_qp_bytes', '-'):>11}{d.get('vmalloc_per_qp_bytes', '-'):>13}"
              f"{d.get('leak_after_destroy_kib', '-'):>10}  {d.get('result', 'no result')}")

    fails = sum(1 for r in rows if r["ok"] != "1")
    P("")
    P(f"{len(rows)} runs, {fails} failed; 'wall-derived': perftest printed 0 (clock calibration),"
      " rate taken from iterations / (wall time - wall time of a 5-iteration run)")

    def c(v):
        return "" if v is None else (f"{v:.6g}" if isinstance(v, float) else v)

    with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["mtu", "kind", "test", "size", "qps", "metric", "eroce", "rxe", "tcp_ns", "tcp_init",
                    "eroce_over_rxe", "eroce_over_tcp"])
        for s in summ:
            w.writerow([c(v) for v in s])
    with open(os.path.join(out, "plot.dat"), "w") as f:
        f.write("config eroce rxe tcp\n")
        for p in plot:
            f.write(" ".join(str(c(v) if v is not None else "NaN") for v in p) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

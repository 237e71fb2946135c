#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""lab_report.py OUTDIR: the two-host bench's table.  Reads OUTDIR/raw.csv
(one row per run, lab_bench_guest.sh), OUTDIR/facts.csv (what each pair's
block moved on each guest) and OUTDIR/info.csv (the path), writes
OUTDIR/summary.csv (medians, eroce next to rdma_rxe and TCP, with ratios)
and prints the table."""

import csv
import os
import sys
from collections import defaultdict

sys.dont_write_bytecode = True  # no __pycache__ in the tree
from bench_report import fmt, fmtr, med, num, ratio  # noqa: E402

PAIRS = ("eroce", "rxe", "tcp")
SHORT = {"ib_write_bw": "write", "ib_send_bw": "send", "ib_read_bw": "read"}
# eroce's counters shown beside the table, in this order
EROCE_FACTS = ("rx_packets", "rx_gro_batches", "rx_gro_packets",
               "tx_packets", "tx_batches", "tx_deferred", "doorbells", "qp_cpu_moves",
               "retransmit_timeouts", "stale_timer_expiries", "retransmitted_packets",
               "retransmits_by_nak", "duplicate_requests", "seq_err_naks_sent",
               "rnr_naks_sent", "retry_exceeded", "tx_errors", "tx_nomem")
PATH_FACTS = ("udp_InErrors", "udp_RcvbufErrors", "udp_SndbufErrors", "udp_NoPorts",
              "link_rx_dropped", "link_tx_dropped", "link_rx_errors", "link_tx_errors",
              "link_rx_missed_errors", "qdisc_dropped", "qdisc_requeues")


def read_csv(path):
    if not os.path.exists(path):
        return []
    return list(csv.DictReader(open(path)))


def main():
    out = sys.argv[1]
    rows = read_csv(os.path.join(out, "raw.csv"))
    facts = read_csv(os.path.join(out, "facts.csv"))
    info = read_csv(os.path.join(out, "info.csv"))

    runs = defaultdict(list)
    for r in rows:
        k = (int(r["mtu"]), r["pair"], r["kind"], r["test"], int(r["size"]), int(r["qps"]),
             int(r["post"]))
        runs[k].append(r)

    def ok(k):
        return [r for r in runs.get(k, []) if r["ok"] == "1"]

    def get(k, m):
        return med(num(r[m]) for r in ok(k))

    def note(ks):
        parts = []
        for p, k in ks:
            rs = runs.get(k, [])
            bad = [r for r in rs if r["ok"] != "1"]
            if bad:
                why = sorted({r["note"] for r in bad if r["note"]})
                parts.append(f"{p} {len(bad)}/{len(rs)} failed" + (f" ({why[0]})" if why else ""))
            # the CPU pass: the long run cost no more CPU than the short one
            nocpu = [r for r in rs if r["ok"] == "1" and r["kind"] == "cpu" and not r["cpu_s_per_gib"]]
            if nocpu:
                parts.append(f"{p} {len(nocpu)}/{len(rs)} without a figure (long run <= short run)")
        return "; ".join(parts)

    reps = max((int(r["rep"]) for r in rows), default=0)
    mtus = sorted({k[0] for k in runs})
    qpss = sorted({k[5] for k in runs if k[2] in ("bw", "rate")})
    bw_tests = [t for t in SHORT if any(k[2] == "bw" and k[3] == t for k in runs)]
    rate_tests = [t for t in SHORT if any(k[2] == "rate" and k[3] == t for k in runs)]
    posts = sorted({k[6] for k in runs if k[2] == "rate" and k[1] != "tcp"})
    cpu_tests = [t for t in SHORT if any(k[2] == "cpu" and k[3] == t for k in runs)]
    nic = sorted({i["value"] for i in info if i["name"] == "driver"})
    cpus = sorted({i["value"] for i in info if i["name"] == "cpus"})

    summ = []
    lines = []
    P = lines.append
    P(f"eroce two-host benchmark: two QEMU (TCG) guests, {'/'.join(cpus) or '?'} vCPU each,"
      f" NIC {'/'.join(nic) or '?'} on taps"
      f" through a Linux bridge; medians of up to {reps} run{'s' if reps != 1 else ''}")
    P("eroce, rdma_rxe and TCP one after the other in each repetition, same guests, same path;"
      " e/rxe and e/TCP: eroce divided by rdma_rxe / by TCP.  TCG: compare ratios, not absolute numbers.")
    for mtu in mtus:
        P("")
        P(f"== MTU {mtu}: bandwidth at 64 KiB (Gb/s; TCP: iperf3 -P qp) ==")
        P(f"{'test':<8}{'qp':>3} |{'eroce':>8}{'rxe':>8}{'TCP':>8} |{'e/rxe':>6}{'e/TCP':>6} | notes")
        for q in qpss:
            tcp = get((mtu, "tcp", "bw", "iperf3", 65536, q, 1), "gbps")
            for t in bw_tests:
                ke, kx = (mtu, "eroce", "bw", t, 65536, q, 1), (mtu, "rxe", "bw", t, 65536, q, 1)
                e, x = get(ke, "gbps"), get(kx, "gbps")
                P(f"{SHORT[t]:<8}{q:>3} |{fmt(e)}{fmt(x)}{fmt(tcp)} |{fmtr(ratio(e, x))}"
                  f"{fmtr(ratio(e, tcp))} | {note([('eroce', ke), ('rxe', kx)])}")
                summ.append([mtu, "bw", t, 65536, q, 1, "gbps", e, x, tcp, ratio(e, x), ratio(e, tcp)])
        if rate_tests:
            P("")
            P(f"== MTU {mtu}: message rate at 64 B (Mmsg/s; TCP: iperf3 64 B writes/s, -P qp) ==")
            P(f"{'test':<8}{'qp':>3}{'wr/post':>8} |{'eroce':>9}{'rxe':>9}{'TCP':>9} |{'e/rxe':>6}{'e/TCP':>6} | notes")
            for q in qpss:
                tcp = get((mtu, "tcp", "rate", "iperf3", 64, q, 1), "mpps")
                for t in rate_tests:
                    for pl in posts:
                        ke, kx = (mtu, "eroce", "rate", t, 64, q, pl), (mtu, "rxe", "rate", t, 64, q, pl)
                        e, x = get(ke, "mpps"), get(kx, "mpps")
                        P(f"{SHORT[t]:<8}{q:>3}{pl:>8} |{fmt(e, 9, 4)}{fmt(x, 9, 4)}{fmt(tcp, 9, 4)} |"
                          f"{fmtr(ratio(e, x))}{fmtr(ratio(e, tcp))} | {note([('eroce', ke), ('rxe', kx)])}")
                        summ.append([mtu, "msgrate", t, 64, q, pl, "mpps", e, x, tcp, ratio(e, x),
                                     ratio(e, tcp)])
        P("")
        P(f"== MTU {mtu}: latency at 2 B (us; ib_write_lat t_typical, TCP: tcp_pingpong half round trip):"
          " median [each run] ==")
        lat = {}
        for p, t in (("eroce", "ib_write_lat"), ("rxe", "ib_write_lat"), ("tcp", "tcp_pingpong")):
            k = (mtu, p, "lat", t, 2, 1, 1)
            each = " ".join("-" if r["ok"] != "1" else f"{num(r['lat_us']):.1f}"
                            for r in sorted(runs.get(k, []), key=lambda r: int(r["rep"])))
            lat[p] = get(k, "lat_us")
            P(f"{p:<6} {t:<13}|{fmt(lat[p], 9, 2)}  [{each}]")
        P(f"{'':<20}e/rxe {fmtr(ratio(lat['eroce'], lat['rxe'])).strip()}"
          f"  e/TCP {fmtr(ratio(lat['eroce'], lat['tcp'])).strip()}")
        summ.append([mtu, "lat", "ib_write_lat", 2, 1, 1, "lat_us", lat["eroce"], lat["rxe"], lat["tcp"],
                     ratio(lat["eroce"], lat["rxe"]), ratio(lat["eroce"], lat["tcp"])])
        P("")
        P(f"== MTU {mtu}: CPU seconds per GiB moved (busy time of both guests, /proc/stat) ==")
        P("   RDMA: 64 KiB, 1 QP, completion events (-e), long run minus short run;"
          " TCP: iperf3, 64 KiB writes, 1 connection")
        P(f"{'test':<8} |{'eroce':>8}{'rxe':>8}{'TCP':>8} |{'e/rxe':>6}{'e/TCP':>6} | notes")
        tcp = get((mtu, "tcp", "bw", "iperf3", 65536, 1, 1), "cpu_s_per_gib")
        for t in cpu_tests:
            ke, kx = (mtu, "eroce", "cpu", t, 65536, 1, 1), (mtu, "rxe", "cpu", t, 65536, 1, 1)
            e, x = get(ke, "cpu_s_per_gib"), get(kx, "cpu_s_per_gib")
            P(f"{SHORT[t]:<8} |{fmt(e, 8, 2)}{fmt(x, 8, 2)}{fmt(tcp, 8, 2)} |{fmtr(ratio(e, x))}"
              f"{fmtr(ratio(e, tcp))} | {note([('eroce', ke), ('rxe', kx)])}")
            summ.append([mtu, "cpu", t, 65536, 1, 1, "cpu_s_per_gib", e, x, tcp, ratio(e, x), ratio(e, tcp)])

    # the path, beside the table
    P("")
    P("== the path ==")
    by_guest = defaultdict(dict)
    for i in info:
        by_guest[i["guest"]].setdefault(i["name"], set()).add(i["value"])
    for g in sorted(by_guest):
        d = by_guest[g]

        def v(n):
            return " / ".join(sorted(d.get(n, {"?"})))
        P(f"guest{g}: {v('nic')} driver {v('driver')}, {v('rx_queues')} rx queue(s), MTU {v('mtu')},"
          f" {v('cpus')} vCPU ({v('cpu_flags')}), kernel {v('kernel')}")
        P(f"  offloads: {v('offloads')}")
        P(f"  ICRC: {v('eroce_icrc')}; crypto crc32 drivers: {v('crc32_drivers')}")

    tot = defaultdict(int)
    per_rep = defaultdict(dict)
    for f in facts:
        try:
            val = int(f["delta"])
        except ValueError:
            continue
        k = (int(f["mtu"]), f["guest"], f["pair"], f["name"])
        tot[k] += val
        per_rep[k][int(f["rep"])] = val
    fmtus = sorted({k[0] for k in tot})
    for mtu in fmtus:
        P("")
        P(f"== MTU {mtu}: counters moved by each pair's runs, summed over the repetitions"
          " (per repetition in brackets where it is not 0) ==")
        for g in sorted({k[1] for k in tot if k[0] == mtu}):
            for p in PAIRS:
                if not any(k[0] == mtu and k[1] == g and k[2] == p for k in tot):
                    continue
                parts = []
                if p == "eroce":
                    for c in EROCE_FACTS:
                        k = (mtu, g, p, "rdma_" + c)
                        if k in tot:
                            parts.append(f"{c} {tot[k]}")
                    drops = [(k[3][5:], tot[k]) for k in tot
                             if k[:3] == (mtu, g, p) and k[3].startswith("rdma_rx_drop_") and tot[k]]
                    parts.append("rx_drop_* " + (", ".join(f"{n} {v}" for n, v in drops) if drops else "0"))
                    k = (mtu, g, p, "rdma_retransmit_timeouts")
                    if k in per_rep and any(per_rep[k].values()):
                        parts.append("retransmit_timeouts per repetition ["
                                     + " ".join(str(per_rep[k][r]) for r in sorted(per_rep[k])) + "]")
                elif p == "rxe":
                    nz = [(k[3][5:], tot[k]) for k in tot
                          if k[:3] == (mtu, g, p) and k[3].startswith("rdma_") and tot[k]]
                    parts.append("rdma_rxe " + (", ".join(f"{n} {v}" for n, v in nz) if nz else "nothing"))
                path = [f"{n} {tot[(mtu, g, p, n)]}" for n in PATH_FACTS if (mtu, g, p, n) in tot]
                dropped = sum(tot[(mtu, g, p, n)] for n in PATH_FACTS
                              if (mtu, g, p, n) in tot and n != "qdisc_requeues")
                path = f"path drops {dropped}: " + ", ".join(path)
                if parts:
                    P(f"guest{g} {p:<6} " + "; ".join(parts))
                    P(f"{'':<14}{path}")
                else:
                    P(f"guest{g} {p:<6} {path}")

    # a path that dropped nothing must cost eroce no retransmit timeout
    def rep_sum(mtu, r, names):
        return sum(per_rep[k].get(r, 0) for k in per_rep
                   if k[0] == mtu and k[2] == "eroce" and k[3] in names)
    drop_names = ({n for n in PATH_FACTS if n != "qdisc_requeues"} |
                  {k[3] for k in per_rep if k[3].startswith("rdma_rx_drop_")})
    spurious = 0
    for mtu in fmtus:
        reps = sorted({r for k in per_rep if k[0] == mtu and k[2] == "eroce"
                       for r in per_rep[k]})
        if not reps:
            continue
        cells, bad = [], 0
        for r in reps:
            timeouts = rep_sum(mtu, r, {"rdma_retransmit_timeouts"})
            lost = rep_sum(mtu, r, drop_names)
            if lost:
                cells.append(f"{timeouts} (path dropped {lost})")
            else:
                cells.append(str(timeouts))
                bad += timeouts
        spurious += bad
        P("")
        P(f"== MTU {mtu}: eroce's retransmit timeouts per repetition, both guests"
          " (a repetition whose path dropped nothing must have none) ==")
        P("  [" + ", ".join(cells) + "]"
          + (f": {bad} on a lossless path, target missed" if bad else ": none spurious"))

    fails = sum(1 for r in rows if r["ok"] != "1")
    P("")
    P(f"{len(rows)} runs, {fails} failed")

    def c(v):
        return "" if v is None else (f"{v:.6g}" if isinstance(v, float) else v)

    with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["mtu", "kind", "test", "size", "qps", "post", "metric", "eroce", "rxe", "tcp",
                    "eroce_over_rxe", "eroce_over_tcp"])
        for s in summ:
            w.writerow([c(v) for v in s])
    print("\n".join(lines))
    return 1 if spurious else 0


if __name__ == "__main__":
    sys.exit(main())

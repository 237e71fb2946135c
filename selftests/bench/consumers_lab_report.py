#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""consumers_lab_report.py OUTDIR: the table of the two-host consumers
bench (consumers_lab.sh).  Reads OUTDIR/raw.csv (transport,test,mbs,note:
one row per measurement, printed by the initiator), OUTDIR/info.csv (the
path) and OUTDIR/facts.csv (what each transport's block moved) and prints
each test's MB/s over eroce, rdma_rxe and TCP with the ratios eroce/rxe
and eroce/TCP."""

import csv
import os
import sys
from collections import defaultdict

sys.dont_write_bytecode = True  # no __pycache__ in the tree
from bench_report import fmtr, num, ratio  # noqa: E402

TRANSPORTS = ("eroce", "rxe", "tcp")
TESTS = ("nvme_seq_read_128k", "nvme_seq_write_128k", "nvme_rand_read_4k",
         "nfs_write_1m", "nfs_read_1m", "iser_seq_read_128k", "iser_seq_write_128k")
# eroce's counters shown under the table when they moved
EROCE_FACTS = ("rx_packets", "tx_packets", "tx_batches", "retransmit_timeouts",
               "retransmitted_packets", "duplicate_requests", "seq_err_naks_sent",
               "rnr_naks_sent", "retry_exceeded")


def read_csv(path):
    if not os.path.exists(path):
        return []
    return list(csv.DictReader(open(path)))


def fmt(v):
    return "-".rjust(9) if v is None else f"{v:9.1f}"


def main():
    out = sys.argv[1]
    rows = read_csv(os.path.join(out, "raw.csv"))
    info = read_csv(os.path.join(out, "info.csv"))
    facts = read_csv(os.path.join(out, "facts.csv"))

    # the failed measurements, one line per transport and reason
    mbs, notes = {}, defaultdict(list)
    for r in rows:
        k = (r["transport"], r["test"])
        mbs[k] = num(r["mbs"])
        if r["note"]:
            notes[(r["transport"], r["note"])].append(r["test"])
    tests = [t for t in TESTS if any(k[1] == t for k in mbs)]
    tests += sorted({k[1] for k in mbs} - set(tests))

    by_guest = defaultdict(dict)
    for i in info:
        by_guest[i["guest"]].setdefault(i["name"], set()).add(i["value"])

    def v(g, n):
        return " / ".join(sorted(by_guest.get(g, {}).get(n, {"?"})))

    lines = []
    P = lines.append
    P("eroce two-host consumers bench: two QEMU (TCG) guests on taps through a Linux bridge,"
      f" NIC {v('0', 'driver')}, MTU {v('0', 'mtu')},"
      f" {v('0', 'cpus')} vCPU and {v('0', 'mem_total_mib')} MiB each")
    P("guest0 the target (nvmet, nfsd, LIO), guest1 the initiator; eroce, rdma_rxe and TCP"
      " one after the other, one run each.")
    P("TCP: NVMe/TCP, NFS over TCP, iSCSI over TCP.  TCG: compare ratios, not absolute numbers.")
    P("")
    P(f"{'test (MB/s)':<22}|{'eroce':>9}{'rdma_rxe':>9}{'TCP':>9} |{'e/rxe':>6}{'e/TCP':>6}")
    for t in tests:
        e, x, c = (mbs.get((p, t)) for p in TRANSPORTS)
        P(f"{t:<22}|{fmt(e)}{fmt(x)}{fmt(c)} |{fmtr(ratio(e, x))}{fmtr(ratio(e, c))}")

    if notes:
        P("")
        P("failed measurements:")
        for (p, n), ts in notes.items():
            P(f"  {p} {', '.join(ts)}: {n}")

    P("")
    P("== the path ==")
    for g in sorted(by_guest):
        role = "target" if g == "0" else "initiator"
        P(f"guest{g} ({role}): driver {v(g, 'driver')}, MTU {v(g, 'mtu')}, {v(g, 'cpus')} vCPU,"
          f" {v(g, 'mem_total_mib')} MiB ({v(g, 'mem_avail_mib')} available at the start),"
          f" kernel {v(g, 'kernel')}")
        P(f"  offloads: {v(g, 'offloads')}")
        least = [int(x) for n, s in by_guest[g].items() if n.startswith("mem_avail_mib_")
                 for x in s if x.isdigit()]
        if least:
            P(f"  least memory available with a target set up: {min(least)} MiB")

    tot = defaultdict(dict)
    for f in facts:
        try:
            tot[(f["guest"], f["transport"])][f["name"]] = int(f["delta"])
        except ValueError:
            continue
    if tot:
        P("")
        P("== counters moved by each transport's block ==")
        for (g, p) in sorted(tot, key=lambda k: (k[0], TRANSPORTS.index(k[1])
                                                   if k[1] in TRANSPORTS else 9)):
            d = tot[(g, p)]
            parts = []
            if p == "eroce":
                # a counter that did not move has no fact: 0
                parts += [f"{c} {d.get('rdma_' + c, 0)}" for c in EROCE_FACTS]
                drops = [f"{n[13:]} {x}" for n, x in d.items() if n.startswith("rdma_rx_drop_")]
                parts.append("rx_drop_* " + (", ".join(drops) if drops else "0"))
            elif p == "rxe":
                rx = [f"{n[5:]} {x}" for n, x in d.items() if n.startswith("rdma_")]
                parts.append("rdma_rxe " + (", ".join(rx) if rx else "nothing"))
            path = [f"{n} {x}" for n, x in d.items() if not n.startswith("rdma_")]
            parts.append("path: " + (", ".join(path) if path else "no UDP error, no NIC drop"))
            P(f"guest{g} {p:<6} " + "; ".join(parts))
    P("")
    P(f"{len(rows)} measurements, {sum(1 for r in rows if num(r['mbs']) is None)} failed")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# callgraph.py [--check] [--symbols] [OBJ.o...]: the graph of references between the
# module's object files, read from `nm`: file A has an edge to file B when
# A uses (nm "U") a symbol that B defines (nm "T", "D", "B", "R").  A call
# up through an ops pointer that the upper file registered is no edge
# (the lower file never names the function), as in the kernel's own
# layering.  Prints each file's out-edges, then every circle of files (a
# strongly connected component of more than one file, and its smallest
# cycle through each member); --check exits 1 when there is a circle,
# --symbols names the symbols behind each edge.
# Default objects: those of the module's Kbuild (eroce-y, and eroce-$(...)
# where built) in drivers/infiniband/sw/eroce (build first): an object a
# renamed or deleted file left behind is not the module's.
import os
import re
import subprocess
import sys

MODDIR = 'drivers/infiniband/sw/eroce'


def module_objects():
    """the objects Kbuild links into eroce.ko that exist"""
    with open(os.path.join(MODDIR, 'Kbuild')) as f:
        text = f.read().replace('\\\n', ' ')
    objs = []
    for line in text.splitlines():
        if re.match(r'\s*eroce-(y|\$\(\w+\))\s*[:+]?=', line):
            objs += re.findall(r'\b(eroce_\w+\.o)\b', line)
    return [os.path.join(MODDIR, o) for o in objs
            if os.path.exists(os.path.join(MODDIR, o))]


def symbols(obj):
    """(defined, used) global symbols of OBJ"""
    out = subprocess.run(['nm', obj], capture_output=True, text=True,
                         check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == 'U':
            used.add(f[1])
        elif len(f) == 3 and f[1] in 'TDBRVW':
            defined.add(f[2])
    return defined, used


def graph(objs):
    """{file: {file it references: the symbols}}"""
    owner, uses = {}, {}
    for o in objs:
        name = os.path.basename(o)[:-2]
        d, u = symbols(o)
        for s in d:
            owner[s] = name
        uses[name] = u
    g = {}
    for a, u in uses.items():
        g[a] = {}
        for s in u:
            if s in owner and owner[s] != a:
                g[a].setdefault(owner[s], set()).add(s)
    return g


def sccs(g):
    """Tarjan's strongly connected components, iteratively"""
    index, low, on, stack, out, n = {}, {}, set(), [], [], 0
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = n
        n += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        x = stack.pop()
                        on.discard(x)
                        comp.append(x)
                        if x == v:
                            break
                    out.append(sorted(comp))
            elif w not in index:
                index[w] = low[w] = n
                n += 1
                stack.append(w)
                on.add(w)
                work.append((w, iter(sorted(g[w]))))
            elif w in on:
                low[v] = min(low[v], index[w])
    return out


def shortest_cycle(g, start, comp):
    """the shortest path start -> ... -> start inside comp"""
    prev, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(g[v] & comp):
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return list(reversed(path)) + [start]
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return []


def main():
    args = sys.argv[1:]
    check = '--check' in args
    syms = '--symbols' in args
    objs = [a for a in args if not a.startswith('--')] or \
        sorted(module_objects())
    objs = [o for o in objs if not o.endswith('.mod.o')]
    if not objs:
        print('callgraph: no object files (build the module first)',
              file=sys.stderr)
        return 2
    edges = graph(objs)
    g = {a: set(b) for a, b in edges.items()}
    for a in sorted(g):
        print(f'{a}: {" ".join(sorted(g[a])) or "-"}')
        if syms:
            for b in sorted(g[a]):
                print(f'  -> {b}: {" ".join(sorted(edges[a][b]))}')
    circles = [c for c in sccs(g) if len(c) > 1]
    for c in circles:
        print(f'circle of {len(c)} files: {" ".join(c)}')
        for v in c:
            print('  ' + ' -> '.join(shortest_cycle(g, v, set(c))))
    if not circles:
        print('no circle')
    return 1 if check and circles else 0


if __name__ == '__main__':
    sys.exit(main())

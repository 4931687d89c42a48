"""A folder's file graph: file X -> file Y when a function defined in X
calls a function defined in Y (the model library hw/ide/ncq-model/*.c by
default; also ncq-sim's and the device's folders)."""
import glob
import os

import cscan


def file_graph(root, folder="hw/ide/ncq-model"):
    files = sorted(glob.glob(os.path.join(root, folder, "*.c")))
    defs = {}                       # file -> {name: Function}
    for path in files:
        with open(path, encoding="utf-8") as f:
            rel = os.path.relpath(path, root)
            defs[rel] = {fn.name: fn for fn in cscan.functions(rel, f.read())}
    owners = {}                     # name -> files defining it
    for rel, fns in defs.items():
        for name in fns:
            owners.setdefault(name, []).append(rel)
    edges = {rel: {} for rel in defs}   # X -> {Y: [(caller, callee, line)]}
    for rel, fns in defs.items():
        for fn in fns.values():
            for callee, line in fn.calls:
                if callee in fns:
                    continue        # its own file's function (static or not)
                for other in owners.get(callee, []):
                    edges[rel].setdefault(other, []).append(
                        (fn.name, callee, line))
    return edges


def cycles(edges):
    """One simple cycle (list of files, first == last) per strongly
    connected component of more than one file (Tarjan)."""
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    result = []
    for comp in comps:
        start = comp[0]
        # shortest way back to start inside the component (BFS)
        prev, queue = {start: None}, [start]
        found = None
        while queue and not found:
            v = queue.pop(0)
            for w in sorted(edges[v]):
                if w not in comp:
                    continue
                if w == start:
                    found = v
                    break
                if w not in prev:
                    prev[w] = v
                    queue.append(w)
        path, v = [start], found
        while v is not None and v != start:
            path.append(v)
            v = prev[v]
        path.append(start)
        path.reverse()
        # path runs start ... -> found -> start; prev walk built it backwards
        result.append((comp, path))
    return result

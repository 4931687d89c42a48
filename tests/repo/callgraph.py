"""A folder's file graph: file X -> file Y when a function or data table
of X calls or names a function defined in Y (a table of handlers, a
callback: a way into Y all the same).  The model library
hw/ide/ncq-model/*.c by default; also ncq-sim's and the device's folders."""
import glob
import os

import cscan


def file_graph(root, folder="hw/ide/ncq-model"):
    """{X: {Y: [(caller, callee, line, how)]}}: how is "calls" or "names";
    a table's caller is its name with `[]`."""
    files = sorted(glob.glob(os.path.join(root, folder, "*.c")))
    defs, users, own = {}, {}, {}   # file -> its functions, users, names
    for path in files:
        with open(path, encoding="utf-8") as f:
            rel = os.path.relpath(path, root)
            fns, tabs = cscan.scan(rel, f.read())
        defs[rel] = {fn.name: fn for fn in fns}
        users[rel] = [(fn.name, fn.calls, fn.names) for fn in fns]
        users[rel] += [(t.name + "[]", [], t.names) for t in tabs]
        own[rel] = set(defs[rel]) | {t.name for t in tabs}
    owners = {}                     # name -> files defining it, not static
    for rel, fns in defs.items():
        for name, fn in fns.items():
            if not fn.static:       # another file's statics are not its
                owners.setdefault(name, []).append(rel)
    edges = {rel: {} for rel in defs}
    for rel, who in users.items():
        for user, calls, names in who:
            for how, refs in (("calls", calls), ("names", names)):
                for callee, line in refs:
                    if callee in own[rel]:
                        continue    # its own file's function or table
                    for other in owners.get(callee, []):
                        edges[rel].setdefault(other, []).append(
                            (user, callee, line, how))
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

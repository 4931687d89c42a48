"""The shape of the C code: no function over 80 lines in hw/ and tools/
(data tables aside), and no circle among the files of the model library,
the device (hw/ide/ncq-disk) or ncq-sim.
cscan.py defines what counts as a function and a call."""
import glob
import os

import pytest

import callgraph
import cscan
from repopaths import ROOT

MAX_LINES = 80


def c_files():
    for top in ("hw", "tools"):
        yield from sorted(glob.glob(str(ROOT / top / "**" / "*.c"),
                                    recursive=True))


def long_functions():
    """(path, name, first line, lines) of every function definition over
    MAX_LINES, counted from the declarator's first line to the closing
    brace. Initialised arrays and structs (`... = { ... };`) are data
    tables, not functions, and are not counted."""
    out = []
    assert list(c_files()), "no C file under hw/ or tools/: the glob is wrong"
    for path in c_files():
        with open(path, encoding="utf-8") as f:
            rel = os.path.relpath(path, ROOT)
            for fn in cscan.functions(rel, f.read()):
                if fn.length > MAX_LINES:
                    out.append((rel, fn.name, fn.start, fn.length))
    return out


def test_no_function_longer_than_80_lines():
    found = long_functions()
    assert not found, (f"functions over {MAX_LINES} lines (split them by "
                       "job):\n" + "\n".join(
                           f"{p}:{line}: {name}() {n} lines"
                           for p, name, line, n in found))


@pytest.mark.parametrize("folder", ["hw/ide/ncq-model", "hw/ide/ncq-disk",
                                    "tools/ncq-sim"])
def test_no_circle_among_the_files(folder):
    edges = callgraph.file_graph(str(ROOT), folder)
    found = callgraph.cycles(edges)
    msgs = []
    for comp, path in found:
        names = [os.path.basename(p) for p in path]
        lines = [f"circle: {' -> '.join(names)} "
                 f"(all of {', '.join(os.path.basename(c) for c in comp)} "
                 "reach each other)"]
        for x in comp:
            for y in comp:
                for caller, callee, line, how in edges[x].get(y, []):
                    lines.append(f"  {x}:{line}: {caller} {how} {callee}()"
                                 f" of {os.path.basename(y)}")
        msgs.append("\n".join(lines))
    assert not found, "\n".join(msgs)

"""Fenced blocks of the project's Markdown, and the sessions among them.

The convention (docs/ncq-sim.md, "Checked examples"):
- A fenced block with at least one line starting `$ ` is a *session*. Each
  `$ ` line is a shell command (continued on the next lines while the
  shell would wait for more: an open quote, a trailing backslash, an open
  loop); it must exit with status 0, and the lines after it, up to the
  next command, are its expected output (stdout and stderr together).
- Expected output is compared line by line with what the command prints,
  exactly, except: a line `...` stands for any number of lines (and, last in
  a block, for the rest of the output); a line ending ` ...` matches any
  line that starts with the text before ` ...`.
- The sessions of one Markdown file run in order in one fresh temporary
  folder with the standalone build's ncq-sim first on PATH, so a file one
  command writes is there for the next. Output is compared exactly: the
  model is deterministic, so there is no tolerance.
"""
import re
import subprocess
from dataclasses import dataclass, field


@dataclass
class Block:
    path: str
    line: int                  # line of the opening fence
    info: str
    lines: list


@dataclass
class Command:
    path: str
    line: int
    text: str                  # the command as the shell gets it
    expected: list = field(default_factory=list)


def blocks(path, text):
    out, cur = [], None
    for n, line in enumerate(text.split("\n"), 1):
        m = re.match(r"^\s*```(.*)$", line)
        if m and cur is None:
            cur = Block(path, n, m.group(1).strip(), [])
        elif m and cur is not None:
            out.append(cur)
            cur = None
        elif cur is not None:
            cur.lines.append(line)
    return out


def _complete(cmd):
    """Whether the shell takes the text as a whole command line: not when it
    ends inside quotes, after a backslash, or inside a loop or `if`."""
    r = subprocess.run(["bash", "-n", "-c", cmd], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    if cmd.endswith("\\"):
        return False
    return ("unexpected end of file" not in r.stderr
            and "unexpected EOF" not in r.stderr)


def session(block):
    """The commands of a session block, or [] for any other block."""
    if not any(l.startswith("$ ") for l in block.lines):
        return []
    cmds, i = [], 0
    lines = block.lines
    while i < len(lines):
        if not lines[i].startswith("$ "):
            if not cmds:
                raise ValueError(f"{block.path}:{block.line + 1 + i}: output "
                                 "before the first command of a session")
            cmds[-1].expected.append(lines[i])
            i += 1
            continue
        text = lines[i][2:]
        start = i
        while not _complete(text) and i + 1 < len(lines):
            i += 1
            text += "\n" + lines[i]
        cmds.append(Command(block.path, block.line + 1 + start, text))
        i += 1
    return cmds


def match(expected, actual):
    """None if the output matches the expectation, else a message."""
    e = list(expected)
    while e and e[-1] == "":
        e.pop()
    a = list(actual)
    while a and a[-1] == "":
        a.pop()

    def go(i, j):
        if i == len(e):
            return None if j == len(a) else f"unexpected extra line: {a[j]!r}"
        if e[i] == "...":
            if i + 1 == len(e):
                return None
            for k in range(j, len(a) + 1):
                if go(i + 1, k) is None:
                    return None
            return f"no line after '...' matches {e[i + 1]!r}"
        if j == len(a):
            return f"missing line: {e[i]!r}"
        ok = (a[j].startswith(e[i][:-4]) if e[i].endswith(" ...")
              else a[j] == e[i])
        if not ok:
            return f"line {j + 1}: expected {e[i]!r}, got {a[j]!r}"
        return go(i + 1, j + 1)

    return go(0, 0)

"""A small C scanner for the repository checks (not a compiler).

It removes comments, string and character literals and preprocessor lines
(so a macro's body is never taken for a function), then walks the tokens at
file scope.  A *function definition* is a `{` at file scope whose declarator
ends with `)` and holds no `=` outside parentheses; every other `{` at file
scope opens a *data table* (an initialised array or struct: `... = {`) or a
type (`struct x {`, `enum {`), which are not functions.

Besides its calls, a function *names* identifiers it does not call (a
callback handed to a timer, a function stored in a pointer); a data
table names the identifiers of its initialisers (a table of handlers).
The file graph counts a named function as a call: a table of another
file's functions, or a callback, is a way into that file.
"""
import re
from dataclasses import dataclass, field

KEYWORDS = {
    "if", "while", "for", "switch", "return", "sizeof", "do", "else", "case",
    "goto", "typeof", "__typeof__", "_Alignof", "alignof", "_Static_assert",
    "static_assert", "_Generic", "defined", "__attribute__", "asm", "__asm__",
}

_TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|->|\+\+|--|<<=|>>=|&&|\|\||[^\s]")


@dataclass
class Function:
    name: str
    path: str
    start: int          # line of the declarator's first token
    open_line: int      # line of the opening brace
    end: int            # line of the closing brace
    calls: list = field(default_factory=list)   # (name, line)
    names: list = field(default_factory=list)   # (name, line), not called
    static: bool = False    # file-local: no other file can reach it

    @property
    def length(self):
        """Lines from the declarator's first line to the closing brace."""
        return self.end - self.start + 1


def strip(text):
    """Blank out comments, literals and preprocessor lines, keeping the
    line structure (every newline stays where it was)."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if at_line_start and c == "#":
            # a directive, with its backslash-continued lines
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append("\n")
                    i += 2
                    continue
                i += 1
            continue
        at_line_start = False
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * 0 + c)      # an empty literal keeps a token
            out.append(re.sub(r"[^\n]", "", text[i + 1:j]))
            i = j + 1
            continue
        if c == "\n":
            at_line_start = True
        out.append(c)
        i += 1
    return "".join(out)


def tokens(text):
    """(token, line) pairs of the stripped text."""
    result = []
    for lineno, line in enumerate(strip(text).split("\n"), 1):
        for m in _TOKEN.finditer(line):
            result.append((m.group(0), lineno))
    return result


@dataclass
class Table:
    name: str           # the initialised variable
    path: str
    start: int
    names: list = field(default_factory=list)   # (name, line)


def _identifier(body, k):
    """The identifier at body[k] if it is one that names something (not a
    keyword, not a member after `.` or `->`), else None."""
    t = body[k][0]
    if (not re.match(r"[A-Za-z_]\w*$", t) or t in KEYWORDS
            or (k > 0 and body[k - 1][0] in (".", "->"))):
        return None
    return t


def functions(path, text):
    """Every function definition in one C file, with the calls it makes
    and the identifiers it names."""
    return scan(path, text)[0]


def tables(path, text):
    """Every data table at file scope, with the identifiers it names."""
    return scan(path, text)[1]


def scan(path, text):
    """(functions, tables) of one C file."""
    toks = tokens(text)
    funcs, tabs = [], []
    decl = []            # tokens at file scope since the last ; or }
    i = 0
    while i < len(toks):
        tok, line = toks[i]
        if tok == ";":
            decl = []
            i += 1
            continue
        if tok != "{":
            decl.append((tok, line))
            i += 1
            continue
        # a `{` at file scope: find its match
        depth, j = 0, i
        while j < len(toks):
            if toks[j][0] == "{":
                depth += 1
            elif toks[j][0] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        body = toks[i + 1:j]
        fn = _function(path, decl, line, toks[j][1] if j < len(toks) else line)
        if fn:
            for k, (t, ln) in enumerate(body):
                if not _identifier(body, k):
                    continue
                if k + 1 < len(body) and body[k + 1][0] == "(":
                    fn.calls.append((t, ln))
                else:
                    fn.names.append((t, ln))
            funcs.append(fn)
        else:
            tab = _table(path, decl, line)
            if tab:
                tab.names = [(t, ln) for k, (t, ln) in enumerate(body)
                             if _identifier(body, k)]
                tabs.append(tab)
        decl = []
        i = j + 1
        # a declaration such as `struct x { ... } y;` ends at its `;`
    return funcs, tabs


def _table(path, decl, open_line):
    """The initialised variable of `... name[N] = {` or `... name = {`."""
    toks = [t for t, _ in decl]
    if len(toks) < 2 or toks[-1] != "=":
        return None
    k = len(toks) - 2
    while k >= 0 and toks[k] == "]":        # the dimensions, last first
        depth = 0
        while k >= 0:
            depth += {"]": 1, "[": -1}.get(toks[k], 0)
            k -= 1
            if depth == 0:
                break
    if k < 0 or not re.match(r"[A-Za-z_]\w*$", toks[k]):
        return None
    return Table(toks[k], path, decl[0][1])


def _function(path, decl, open_line, end_line):
    if not decl or decl[-1][0] != ")":
        return None
    depth = 0
    for tok, _ in decl:
        if tok == "(":
            depth += 1
        elif tok == ")":
            depth -= 1
        elif tok == "=" and depth == 0:
            return None
    # the parameter list's `(` matches the last `)`
    depth = 0
    for k in range(len(decl) - 1, -1, -1):
        if decl[k][0] == ")":
            depth += 1
        elif decl[k][0] == "(":
            depth -= 1
            if depth == 0:
                break
    if k == 0 or not re.match(r"[A-Za-z_]\w*$", decl[k - 1][0]):
        return None
    return Function(decl[k - 1][0], path, decl[0][1], open_line, end_line,
                    static=any(t == "static" for t, _ in decl[:k - 1]))

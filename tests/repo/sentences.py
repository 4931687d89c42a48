"""The sentences of the project's Markdown prose, with their word counts.

Prose is what a reader reads as running text, including each cell of a
table written by hand: fenced code blocks, headings, HTML comments and blocks
between `<!-- begin: ... -->` and `<!-- end: ... -->` markers (generated
text) are not prose. A paragraph
(or a list item) is split into sentences after `.`, `!` or `?` followed by
a space and a capital letter, a digit, a backtick or an opening bracket;
a word is a run of non-space characters. Abbreviations such as "e.g."
are not sentence ends.
"""
import re

ABBREV = ("e.g.", "i.e.", "vs.", "cf.", "etc.", "approx.", "no.", "Fig.")
BEGIN = re.compile(r"^\s*<!-- begin: .* -->\s*$")
END = re.compile(r"^\s*<!-- end: .* -->\s*$")


def cells(row):
    """The cells of a table row; a `|` inside backticks is not a border."""
    out, cur, code = [], "", False
    for c in row.strip().strip("|"):
        if c == "`":
            code = not code
        if c == "|" and not code:
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
    out.append(cur.strip())
    return [c for c in out if c and not re.match(r"^:?-+:?$", c)]


def paragraphs(text):
    """(first line, text) of each prose paragraph, list item or table
    cell."""
    out, cur, start = [], [], 0
    fence = generated = False

    def flush():
        if cur:
            out.append((start, " ".join(cur)))
        cur.clear()

    for n, line in enumerate(text.split("\n"), 1):
        s = line.strip()
        if re.match(r"^\s*(```|~~~)", line):
            flush()
            fence = not fence
            continue
        if BEGIN.match(line):
            flush()
            generated = True
            continue
        if END.match(line):
            generated = False
            continue
        if fence or generated:
            continue
        if s.startswith("|"):
            flush()
            out += [(n, c) for c in cells(s)]
            continue
        if (not s or s.startswith("#")
                or re.match(r"^<!--((?!-->).)*-->$", s)
                or line.startswith("    ") and not cur):
            flush()
            continue
        item = re.match(r"^(\s*)([-*+]|\d+[.)])\s+(.*)$", line)
        if item:
            flush()
            s = item.group(3)
        if not cur:
            start = n
        cur.append(s)
    flush()
    return out


def sentences(para):
    protected = re.sub(r"<!--.*?-->", "", para)
    for a in ABBREV:
        protected = protected.replace(a + " ", a.replace(".", "\0") + " ")
    parts = re.split(r"(?<=[.!?])[)\"']?\s+(?=[A-Z0-9`(\[*\"])", protected)
    return [p.replace("\0", ".") for p in parts if p.strip()]


def long_sentences(text, limit):
    """(line, words, sentence) for each sentence over `limit` words."""
    out = []
    for line, para in paragraphs(text):
        for s in sentences(para):
            words = len(s.split())
            if words > limit:
                out.append((line, words, s))
    return out

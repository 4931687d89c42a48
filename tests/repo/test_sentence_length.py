"""No sentence of the README's or the docs' prose runs over 60 words: a
reference is read in one pass (sentences.py says what counts as prose and
as a sentence).  Pages the runners write (docs/report/, docs/validation/'s
sheets) are theirs, not written prose."""
import os

import sentences
from repopaths import ROOT

LIMIT = 60


def written_docs():
    docs = [ROOT / "README.md"]
    for p in sorted((ROOT / "docs").rglob("*.md")):
        r = os.path.relpath(p, ROOT / "docs").split(os.sep)
        if r[0] in ("report", "fit-example", "compare-example") or (
                r[0] == "validation" and r[-1] != "README.md"):
            continue
        docs.append(p)
    return docs


def test_no_sentence_over_the_limit():
    bad = []
    for doc in written_docs():
        for line, words, s in sentences.long_sentences(
                doc.read_text(encoding="utf-8"), LIMIT):
            bad.append(f"{os.path.relpath(doc, ROOT)}:{line}: {words} words: "
                       f"{s[:70]}...")
    assert not bad, (f"{len(bad)} sentences over {LIMIT} words; split "
                     "them:\n" + "\n".join(bad))


def test_counter_splits_sentences_and_skips_code_and_tables():
    long = "Long " + " ".join(["word"] * 60) + "."
    text = (f"Short one. {long}\n\n```\n{long}\n```\n\n| a | `x|y` |\n\n"
            f"<!-- begin: x -->\n{long}\n<!-- end: x -->\n- item, e.g. "
            "this. Next.\n")
    found = sentences.long_sentences(text, LIMIT)
    assert [(line, words) for line, words, _ in found] == [(1, 61)]
    assert sentences.cells("| a | `x|y` b |") == ["a", "`x|y` b"]
    assert [w for _, w, _ in sentences.long_sentences(f"| x | {long} |\n",
                                                      LIMIT)] == [61]
    assert sentences.sentences("One, e.g. two. Three `x`. (Four.)") == [
        "One, e.g. two.", "Three `x`.", "(Four.)"]

"""scripts/update-doc-sessions.py: a session's stale output is rewritten
in place, output that still matches is left alone, wildcards are kept
where they still fit, and --check writes nothing."""
import subprocess
import sys

import docsessions as uds
from repopaths import ROOT

SCRIPT = ROOT / "scripts" / "update-doc-sessions.py"

PAGE = """# A page

```
$ echo one; echo two; echo three
one
2
three
$ printf 'a 1\\nb 2\\nc 3\\n'
a ...
...
c 3
$ echo same
same
```
"""

WANT = PAGE.replace("one\n2\nthree", "one\ntwo\nthree")


def test_refreshed_keeps_wildcards_that_fit():
    new, kept = uds.refreshed(["x ...", "...", "z 9"], ["x 1", "y", "z 2"])
    assert (new, kept) == (["x ...", "...", "z 2"], True)
    new, kept = uds.refreshed(["q ...", "..."], ["x 1", "y"])
    assert (new, kept) == (["x 1", "..."], True)
    new, kept = uds.refreshed(["a", "b"], ["a", "c", "d"])
    assert (new, kept) == (["a", "c", "d"], True)


def test_stale_output_rewritten_in_place(ncq_sim_dir, tmp_path):
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    r = subprocess.run([sys.executable, str(SCRIPT), "--check", str(page)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    assert r.returncode == 1 and page.read_text() == PAGE
    assert "page.md:4: output differs" in r.stdout
    r = subprocess.run([sys.executable, str(SCRIPT), str(page)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert page.read_text() == WANT
    assert "1 session output(s) updated" in r.stderr

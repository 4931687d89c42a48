"""junit.xml: one testcase per cell; a failed cell, or a cell that moved
against the baseline, is a failure."""

from xml.sax.saxutils import quoteattr, escape


def write(path, results, changes):
    cells = results["cells"]
    fails = 0
    cases = []
    for c in cells:
        attrs = (f'classname={quoteattr("compare." + c["workload"])} '
                 f'name={quoteattr(c["id"])} '
                 f'time="{c.get("wall_s", 0)}"')
        msg = None
        if c["status"] != "ok":
            msg = f"cell failed: {c.get('error')}"
        elif c["id"] in changes:
            msg = "moved against the baseline: " + "; ".join(
                changes[c["id"]])
        if msg:
            fails += 1
            cases.append(f"  <testcase {attrs}>\n    <failure message="
                         f"{quoteattr(msg[:500])}>{escape(msg)}</failure>\n"
                         "  </testcase>")
        else:
            cases.append(f"  <testcase {attrs}/>")
    name = quoteattr("ncq-compare " + results["matrix"]["name"])
    text = (f'<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name={name}'
            f' tests="{len(cells)}" failures="{fails}" errors="0">\n'
            + "\n".join(cases) + "\n</testsuite>\n")
    with open(path, "w") as f:
        f.write(text)
    return fails
